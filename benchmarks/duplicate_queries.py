"""Copies of one continuous query: CityBench's "queryDuplicates" and LSBench copies.

CityBench (Ali et al., ISWC 2015) measures how an engine scales with the same
query registered K times under K names. Here, K = 1, 10, 100 copies of
CityBench's Q1, Q5 and Q8 as written (``../shared/datasets/citybench``, with a
``REGISTER QUERY name AS`` head) read the Aarhus streams they name, annotated
as CityBench's annotators do (per CSV row, one ``ssn:Observation`` per
property the sensor repository says the stream observes, with the row's
value), over the static data of the repository, cultural and library
events loaded under the IRIs the queries name with ``FROM``; and K = 1, 10
copies of LSBench L4 and L6 (``benchmarks.lsbench_queries``) read the
LSBench streams at 1x the paper's rates over ``--triples`` stored triples.

Each K: register the K copies and subscribe to each, then feed the streams
step by step (one STEP of application time: the step's items, then a
heartbeat at its end on every stream the query reads), after ``RANGE/STEP``
warm-up steps. *Latency* is the wall time of the heartbeats that close a
window (every copy's event is queued when they return); *load* is the wall
time of the whole step (items and heartbeats) over the STEP. Every copy must
receive one event per step, numbered 1, 2, ... (*complete*).

    python -m benchmarks.duplicate_queries [--triples 1000000] [--steps 15] [--save FILE] [--before FILE]

``--save`` writes the figures as JSON, ``--before`` shows a saved run beside
(run it first with ``PYTHONPATH`` at the code to compare with, as
``python benchmarks/duplicate_queries.py --save before.json --no-write``).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks import StepFigures, machine_description, markdown_table, write_section
from benchmarks.citybench_data import CITYBENCH, CityFeed, citybench_store, query_streams
from benchmarks.lsbench_data import DEFAULT_SEED, STREAMS, StreamGenerator, generate, scaled_rates
from benchmarks.lsbench_queries import QUERIES, RANGE_MS, STEP_MS, LSBenchQuery
from benchmarks.shared_queries import check_events, load_store
from engine.rdf import IRI

HEADING = "Copies of one query (CityBench queryDuplicates, LSBench L4/L6)"
CITY_QUERIES = ("Q1", "Q5", "Q8")
CITY_STEP_MS, CITY_RANGE_MS = 1_000, 3_000
DEFAULT_CITY_KS = (1, 10, 100)
DEFAULT_LSBENCH_KS = (1, 10)


@dataclass
class Run(StepFigures):
    """One query at one K: each timed step's latency and work (s)."""

    query: str
    k: int
    latency_s: list[float] = field(default_factory=list)
    step_s: list[float] = field(default_factory=list)
    step_ms: int = STEP_MS
    problems: list[str] = field(default_factory=list)
    events: int = 0


Feed = Callable[[int], dict[str, list]]


def run_copies(engine, name: str, registration: Callable[[str], str], streams: Sequence[str], feed: Feed,
               now: int, k: int, step_ms: int, warmup: int, steps: int) -> tuple[Run, int]:
    """Register ``k`` copies of a query, feed ``warmup + steps`` steps from
    ``now`` on, check every copy's events, unregister them; the run and the
    application time reached."""
    run = Run(name, k, step_ms=step_ms)
    names = [f"{name}_copy{i}" for i in range(k)]
    for stream in streams:  # the copies' clocks start at the next step, whenever data comes
        engine.heartbeat(stream, now)
    subscriptions = {copy: engine.register(registration(copy)).subscribe() for copy in names}
    received: dict[str, list[tuple[int, int, int]]] = {copy: [] for copy in names}
    closes = []
    gc.collect()
    try:
        for i in range(warmup + steps):
            close = now + step_ms
            items = feed(close)
            started = time.perf_counter()
            for stream in streams:
                if items.get(stream):
                    engine.ingest(stream, items[stream])
            fired = time.perf_counter()
            for stream in streams:
                engine.heartbeat(stream, close)
            done = time.perf_counter()
            now = close
            closes.append(close)
            for copy, subscription in subscriptions.items():
                received[copy].extend((e.sequence, e.end_ms, e.count) for e in subscription.drain())
            if i >= warmup:
                run.latency_s.append(done - fired)
                run.step_s.append(done - started)
    finally:
        for copy in names:
            engine.unregister(copy)
    run.problems = check_events(received, closes)
    run.events = sum(len(e) for e in received.values())
    return run, now


# ---------------------------------------------------------------- CityBench
def citybench_runs(ks: Sequence[int], steps: int, row_ms: int, label: str = "",
                   queries: Sequence[str] = CITY_QUERIES) -> list[Run]:
    """``queries`` (Q1, Q5, Q8) at each K, one CSV row per stream every ``row_ms``."""
    from engine.stream import StreamDefinition, StreamEngine

    if not ks:
        return []
    store = citybench_store()
    engine = StreamEngine(store)
    texts = {q: (CITYBENCH / "csparql_query" / f"{q}.txt").read_text() for q in queries}
    streams = sorted({s for text in texts.values() for s in query_streams(text)})
    for stream in streams:
        engine.declare_stream(StreamDefinition(stream.rsplit("#", 1)[1], IRI(stream)))
    feed = CityFeed(store, streams, row_ms)

    def by_name(close: int) -> dict[str, list]:
        return {stream.rsplit("#", 1)[1]: items for stream, items in feed(close).items()}

    runs, now = [], 0
    for query, text in texts.items():
        names = [stream.rsplit("#", 1)[1] for stream in query_streams(text)]
        for k in ks:
            run, now = run_copies(engine, query, lambda name, text=text: f"REGISTER QUERY {name} AS {text}",
                                  names, by_name, now, k, CITY_STEP_MS, CITY_RANGE_MS // CITY_STEP_MS, steps)
            run.query += label
            _progress(run)
            runs.append(run)
    return runs


# ------------------------------------------------------------------ LSBench
def lsbench_runs(ks: Sequence[int], triples: int, steps: int, seed: int) -> list[Run]:
    """L4 and L6 at each K over ``triples`` stored triples, at 1x the paper's rates."""
    from engine.stream import StreamDefinition, StreamEngine

    if not ks:
        return []
    data = generate(triples, seed)
    store = load_store(data)
    engine = StreamEngine(store)
    for spec in STREAMS.values():
        engine.declare_stream(StreamDefinition(spec.name, spec.iri, timing=spec.timing))
    generator = StreamGenerator(data, scaled_rates(1.0), seed)
    runs = []
    for query in (q for q in QUERIES if q.name in ("L4", "L6")):
        for k in ks:
            def registration(name: str, query: LSBenchQuery = query) -> str:
                return dataclasses.replace(query, name=name).registration()

            run, _ = run_copies(engine, query.name, registration, query.streams, generator.advance,
                                generator.now, k, STEP_MS, RANGE_MS // STEP_MS, steps)
            _progress(run)
            runs.append(run)
    return runs


# ------------------------------------------------------------------- report
def _progress(run: Run) -> None:
    print(f"{run.query} K={run.k}: median {run.median_ms:.3g} ms, p99 {run.p99_ms:.3g} ms, "
          f"load {run.load:.3g}, events {run.events}, problems {len(run.problems)}", flush=True)


def _figures(run: Run) -> dict:
    return {"median_ms": run.median_ms, "p99_ms": run.p99_ms, "load": run.load,
            "complete": not run.problems, "events": run.events}


def report(runs: list[Run], before: dict | None, args: argparse.Namespace) -> str:
    headers = ["query", "K", "median ms", "p99 ms", "load", "complete"]
    if before:
        headers[2:2] = ["before: median ms", "before: p99 ms"]
    rows = []
    for run in runs:
        row = [run.query, run.k, run.median_ms, run.p99_ms, run.load,
               "yes" if not run.problems else f"no: {run.problems[0]}"]
        if before:
            old = before.get(f"{run.query}/{run.k}")
            row[2:2] = [old["median_ms"], old["p99_ms"]] if old else ["-", "-"]
        rows.append(row)
    return (f"Machine: {machine_description()}.\n\n"
            f"CityBench Q1, Q5, Q8 as written over its static documents, streams annotated from the Aarhus "
            f"CSV files (one row per stream every {args.row_ms} ms, and in the rows marked so, fewer: "
            f"most windows then hold what the window before held); LSBench L4, L6 over {args.triples:,} "
            f"stored triples at 1x the paper's rates. K copies registered under K names; "
            f"{args.steps} timed steps after RANGE/STEP warm-up steps. *Latency*: the heartbeats that "
            "close a window (every copy's event queued); *load*: the step's ingest and heartbeats over "
            "its STEP. *Complete*: every copy got one event per window, in order."
            + (" *before*: the same run on the code before copies were shared." if before else "")
            + "\n\nCopies due at the same instant are evaluated once and the answer is handed to the others, "
            "each through its own report policy (`engine.stream.duplicates`); a window whose rows and "
            "stored graphs are those of the last evaluation takes its answer (`engine.stream.unchanged`)."
            + "\n\n" + markdown_table(headers, rows)
            + "\n\n    python -m benchmarks.duplicate_queries [--save FILE] [--before FILE]\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--steps", type=int, default=15, help="timed steps per query and K")
    parser.add_argument("--row-ms", type=int, default=1000, help="CityBench: one CSV row per stream every")
    parser.add_argument("--city-ks", default=",".join(map(str, DEFAULT_CITY_KS)))
    parser.add_argument("--sparse-row-ms", type=int, default=5000,
                        help="CityBench again with one row per stream this often (0: not)")
    parser.add_argument("--sparse-ks", default="1,100")
    parser.add_argument("--lsbench-ks", default=",".join(map(str, DEFAULT_LSBENCH_KS)))
    parser.add_argument("--save", type=Path, help="write the figures as JSON")
    parser.add_argument("--before", type=Path, help="a --save of the code to compare with")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs")
    args = parser.parse_args(argv)
    ks = lambda text: [int(k) for k in text.split(",") if k]  # noqa: E731
    runs = citybench_runs(ks(args.city_ks), args.steps, args.row_ms)
    if args.sparse_row_ms:
        runs += citybench_runs(ks(args.sparse_ks), args.steps, args.sparse_row_ms,
                               f" (a row per {args.sparse_row_ms / 1000:g} s)")
    runs += lsbench_runs(ks(args.lsbench_ks), args.triples, args.steps, args.seed)
    if args.save:
        args.save.write_text(json.dumps({f"{r.query}/{r.k}": _figures(r) | {"run": asdict(r)} for r in runs}))
    before = json.loads(args.before.read_text()) if args.before else None
    body = report(runs, before, args)
    print()
    print(body)
    if not args.no_write:
        write_section(HEADING, body)


if __name__ == "__main__":
    main()
