"""Median parse time of the workload queries: Rivulet's parser against rdflib's.

Parsing is paid on every query the plan cache has not seen, so it bounds the
latency of short, selective queries. rdflib's ``prepareQuery`` (parse plus
translation to algebra) is the peer because it does the same job as our
``parse_query`` (text to algebra). pyoxigraph has no parse-only API (its
``Store.query`` parses and runs in one call), so its column is the time of
running the query on an *empty* store: an upper bound on its parse time, shown
for scale only.

    python -m benchmarks.parse_time [--ours-repeat 200] [--rdflib-repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable

import pyoxigraph
from rdflib.plugins.sparql import prepareQuery

from benchmarks import machine_description, markdown_table, median_seconds, write_section
from benchmarks.queries import TYPICAL_10_LINE, build_queries

HEADERS = ["query", "ours µs", "rdflib µs", "ours / rdflib", "pyoxigraph empty-store query µs"]


def _oxigraph_runner(text: str) -> Callable[[], object]:
    store = pyoxigraph.Store()

    def run() -> object:
        result = store.query(text)
        return bool(result) if isinstance(result, pyoxigraph.QueryBoolean) else list(result)

    return run


def measure(ours_repeat: int, rdflib_repeat: int) -> list[list[object]]:
    """One row per query: medians in microseconds and the ours/rdflib ratio."""
    from engine.sparql.syntax import parse_query  # late: the engine may be mid-change

    queries = {"typical_10_line": TYPICAL_10_LINE, **build_queries()}
    rows: list[list[object]] = []
    for name, text in queries.items():
        ours = median_seconds(lambda t=text: parse_query(t), ours_repeat) * 1e6
        peer = median_seconds(lambda t=text: prepareQuery(t), rdflib_repeat) * 1e6
        oxi = median_seconds(_oxigraph_runner(text), ours_repeat) * 1e6
        rows.append([name, ours, peer, ours / peer, oxi])
        print(f"  {name:<22} ours {ours:9.1f} µs  rdflib {peer:9.1f} µs  ratio {ours / peer:5.2f}",
              flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Median SPARQL parse time, Rivulet vs rdflib.")
    parser.add_argument("--ours-repeat", type=int, default=200, help="timed parses per query (ours)")
    parser.add_argument("--rdflib-repeat", type=int, default=20, help="timed parses per query (rdflib)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md")
    args = parser.parse_args(argv)

    print("parse time (medians):", flush=True)
    rows = measure(args.ours_repeat, args.rdflib_repeat)
    ratios = [r[3] for r in rows]
    table = markdown_table(HEADERS, rows)
    body = (f"Machine: {machine_description()}.\n\n"
            f"Median of {args.ours_repeat} parses (ours, pyoxigraph) and {args.rdflib_repeat} "
            "(rdflib `prepareQuery`) per query, after one warm-up. A ratio below 1 means our parser "
            "is faster. pyoxigraph has no parse-only API; its column is a whole query on an empty "
            "store, an upper bound on its parse time.\n\n"
            f"{table}\n\nMedian ratio ours / rdflib: {statistics.median(ratios):.3f}.")
    print()
    print(table)
    if not args.no_write:
        write_section("Parse time", body)


if __name__ == "__main__":
    main()
