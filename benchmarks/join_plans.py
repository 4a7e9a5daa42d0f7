"""Join plans: CityBench's heavy joins and LSBench's cyclic L6, one copy each.

CityBench's Q5, Q8 and Q9 (``../shared/datasets/citybench``, as written)
nest groups that only a later group connects, and Q9 closes a cycle through
``?ob``; Q1 is the light query beside them. LSBench L6 is a four-cycle (the
friend's in-neighbours through ``foaf:knows`` and the forum's subscribers
are intersected per row). Each is registered once and fed as
``benchmarks.duplicate_queries`` (CityBench: one CSV row per stream per
second, RANGE 3 s, STEP 1 s) and ``benchmarks.lsbench_latency`` (L6 at 1x
the paper's rates over ``--triples`` stored triples) feed them; latency is
the wall time of the heartbeat that closes a window.

    python -m benchmarks.join_plans [--triples 1000000] [--steps 30] [--save FILE] [--before FILE]

Run it first with ``PYTHONPATH`` at the code to compare with and ``--save``,
then with ``--before`` on that file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks import machine_description, markdown_table
from benchmarks.duplicate_queries import citybench_runs
from benchmarks.lsbench_data import DEFAULT_SEED, generate
from benchmarks.lsbench_latency import engine_latencies
from benchmarks.lsbench_queries import QUERIES
from benchmarks.lsbench_server import load_store

CITY = ("Q1", "Q5", "Q8", "Q9")


def figures(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """Median and p99 latency (ms) of every query."""
    out = {}
    for run in citybench_runs([1], args.steps, 1000, queries=CITY):
        out[f"CityBench {run.query}"] = {"median_ms": run.median_ms, "p99_ms": run.p99_ms}
    data = generate(args.triples, DEFAULT_SEED)
    l6 = [q for q in QUERIES if q.name == "L6"]
    for name, r in engine_latencies(load_store(data), data, 1.0, args.steps, DEFAULT_SEED, l6).items():
        out[f"LSBench {name} ({args.triples:,} stored)"] = {
            "median_ms": float(np.median(r.samples_ms)),
            "p99_ms": float(np.percentile(r.samples_ms, 99)),
            "load": r.ingest_s / r.stream_s,
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=30, help="timed windows per query")
    parser.add_argument("--save", type=Path, help="write the figures as JSON")
    parser.add_argument("--before", type=Path, help="a --save of the code to compare with")
    args = parser.parse_args(argv)
    now = figures(args)
    if args.save:
        args.save.write_text(json.dumps(now))
    before = json.loads(args.before.read_text()) if args.before else {}
    rows = []
    for name, f in now.items():
        old = before.get(name, {})
        rows.append([name, old.get("median_ms", "-"), old.get("p99_ms", "-"), f["median_ms"], f["p99_ms"]])
    print(f"Machine: {machine_description()}.\n")
    headers = ["query (K = 1)", "before: median ms", "before: p99 ms", "median ms", "p99 ms"]
    print(markdown_table(headers, rows))


if __name__ == "__main__":
    main()
