"""Issue 27's benchmark set in one run: every continuous-query table, one after the other.

Each part is an existing benchmark's ``main``, run with the sizes the issue
names; each writes its own section of ``docs/lsbench.md``,
``docs/benchmarks.md`` or ``docs/citybench.md`` as it does when run alone:

* ``lsbench-1m``: LSBench L1-L6 at 1M stored triples, engine, HTTP + SSE and
  the pyoxigraph composite (``benchmarks.lsbench_latency``);
* ``lsbench-10m``: the same at 10M, engine and HTTP + SSE (no composite);
* ``shared``: K = 1, 10, 100, 1000 registered L2/L3 queries
  (``benchmarks.shared_queries``);
* ``ingest``: HTTP ingest with 1, 10, 100 registered queries
  (``benchmarks.ingest_throughput``);
* ``citybench``: every CityBench query as written, K = 1, 10, 100 copies
  (``benchmarks.citybench``).

The parts run one at a time, in this process, so that no two share the two
cores. A part that fails is reported and the others still run; the exit
status is 1 if any failed. ``--quick`` runs every part at toy sizes and
writes no document: a check that the whole set runs, not a measurement.

    python -m benchmarks.continuous_suite [--quick] [--only lsbench-1m,citybench] [--skip lsbench-10m]
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable

from benchmarks import citybench, ingest_throughput, lsbench_latency, shared_queries

Part = tuple[str, Callable[[list[str]], None], list[str], list[str]]

#: (name, main, arguments at the issue's sizes, arguments with --quick)
PARTS: list[Part] = [
    ("lsbench-1m", lsbench_latency.main, ["--triples", "1000000"],
     ["--triples", "20000", "--windows", "5", "--scale", "0.1"]),
    ("lsbench-10m", lsbench_latency.main, ["--triples", "10000000", "--no-composite"],
     ["--triples", "40000", "--windows", "5", "--scale", "0.1", "--no-composite"]),
    ("shared", shared_queries.main, ["--ks", "1,10,100,1000"],
     ["--triples", "100000", "--ks", "1,10,100,1000", "--steps", "3", "--scale", "0.1"]),
    ("ingest", ingest_throughput.main, ["--queries", "1,10,100"],
     ["--triples", "20000", "--queries", "1,10,100", "--seconds", "1", "--scale", "0.1"]),
    ("citybench", citybench.main, ["--ks", "1,10,100"],
     ["--ks", "1,10", "--steps", "3", "--queries", "Q1,Q5,Q11,traffic_parking_1"]),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [name for name, *_ in PARTS]
    parser.add_argument("--quick", action="store_true", help="toy sizes, print only: check the set runs")
    parser.add_argument("--only", default="", help=f"comma-separated parts among {', '.join(names)}")
    parser.add_argument("--skip", default="", help="comma-separated parts to leave out")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs")
    args = parser.parse_args(argv)
    chosen = [n for n in args.only.split(",") if n] or names
    skipped = {n for n in args.skip.split(",") if n}
    unknown = (set(chosen) | skipped) - set(names)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))} (parts: {', '.join(names)})")
    outcomes = []
    for name, run, full, quick in PARTS:
        if name not in chosen or name in skipped:
            continue
        arguments = quick if args.quick else full
        if args.quick or args.no_write:
            arguments = [*arguments, "--no-write"]
        print(f"\n=== {name}: {' '.join(arguments)}", flush=True)
        started = time.perf_counter()
        try:
            run(arguments)
            outcome = "ok"
        except Exception:  # noqa: BLE001 - one part's failure must not hide the others' tables
            traceback.print_exc()
            outcome = "FAILED"
        outcomes.append((name, outcome, time.perf_counter() - started))
    print("\n=== summary")
    for name, outcome, seconds in outcomes:
        print(f"{name:12} {outcome:7} {seconds:8.1f} s")
    if any(outcome != "ok" for _, outcome, _ in outcomes):
        sys.exit(1)


if __name__ == "__main__":
    main()
