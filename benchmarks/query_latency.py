"""Median query latency on the generated social network: Rivulet against pyoxigraph.

pyoxigraph (Oxigraph, Rust) is the reference point for a fast in-process
SPARQL engine. Both stores get the same generated triples; each query is run
once to warm up, then timed several times (fewer when a query is slow) and
the median is reported, together with the row counts of both engines so a
fast-but-wrong answer cannot pass unnoticed. Timings include decoding every
result row into terms (``list(result.rows())`` for us, ``list(...)`` of
solutions for pyoxigraph) because a caller always pays for that.

    python -m benchmarks.query_latency [--triples 1000000] [--repeat 15]
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass

import pyoxigraph

from benchmarks import format_cell, machine_description, markdown_table, write_section
from benchmarks.generate import DEFAULT_SEED, DEFAULT_TRIPLES, SocialGraph, generate
from benchmarks.queries import build_queries

HEADERS = ["query", "ours ms", "ours + parse ms", "pyoxigraph ms", "ours / pyoxigraph", "rows ours",
           "rows pyoxigraph", "check"]


@dataclass
class Timing:
    """Median latency and answer size of one engine on one query (or its error)."""

    median_ms: float | None
    count: int | bool | None
    runs: int
    error: str | None = None


def _time(run: Callable[[], int | bool], repeat: int, budget_s: float) -> Timing:
    """Warm up once, then time up to ``repeat`` runs, fewer when one run is slow, so a
    slow query costs about ``budget_s`` seconds instead of ``repeat`` times its latency."""
    try:
        start = time.perf_counter()
        count = run()
        first = time.perf_counter() - start
        runs = max(3, min(repeat, int(budget_s / max(first, 1e-9))))
        samples = timeit.repeat(run, number=1, repeat=runs)
    except Exception as exc:  # report and continue with the other queries
        return Timing(None, None, 0, f"{type(exc).__name__}: {exc}"[:200])
    return Timing(statistics.median(samples) * 1e3, count, runs)


def _ours_runner(store, text: str) -> Callable[[], int | bool]:
    def run() -> int | bool:
        result = store.query(text)
        if result.form == "ASK":
            return bool(result.boolean)
        return len(list(result.rows()))

    return run


def _ours_uncached_runner(store, text: str) -> Callable[[], int | bool]:
    """Like ``_ours_runner`` but parsing on every call, as pyoxigraph does."""
    from engine.sparql.syntax import parse_query

    def run() -> int | bool:
        result = store.execute(parse_query(text))
        if result.form == "ASK":
            return bool(result.boolean)
        return len(list(result.rows()))

    return run


def _oxigraph_runner(store: pyoxigraph.Store, text: str) -> Callable[[], int | bool]:
    def run() -> int | bool:
        result = store.query(text)
        if isinstance(result, pyoxigraph.QueryBoolean):
            return bool(result)
        return len(list(result))

    return run


def load_oxigraph(graph: SocialGraph) -> tuple[pyoxigraph.Store, dict[str, float]]:
    """Bulk-load the graph's N-Triples; the serialisation is timed apart from the load."""
    start = time.perf_counter()
    data = graph.ntriples()
    serialise = time.perf_counter() - start
    store = pyoxigraph.Store()
    start = time.perf_counter()
    store.bulk_load(data, pyoxigraph.RdfFormat.N_TRIPLES)
    load = time.perf_counter() - start
    if len(store) != len(graph):
        raise RuntimeError(f"pyoxigraph holds {len(store):,} triples, expected {len(graph):,}")
    return store, {"N-Triples serialisation": serialise, "pyoxigraph bulk_load": load}


def load_ours(graph: SocialGraph):
    """``Store.add`` of engine-term triples; building the term tuples is timed apart."""
    from engine.api import Store  # late: the engine may be mid-change

    start = time.perf_counter()
    triples = graph.triple_list()
    build = time.perf_counter() - start
    store = Store()
    start = time.perf_counter()
    store.add(triples)
    load = time.perf_counter() - start
    if len(store) != len(graph):
        raise RuntimeError(f"our store holds {len(store):,} triples, expected {len(graph):,}")
    return store, {"term tuples (ours)": build, "ours Store.add": load}


def _check(ours: Timing, oxi: Timing) -> str:
    if ours.error:
        return f"ERROR ours: {ours.error}"
    if oxi.error:
        return f"ERROR pyoxigraph: {oxi.error}"
    return "ok" if ours.count == oxi.count else "WARNING: counts differ"


def measure(graph: SocialGraph, repeat: int, budget_s: float) -> tuple[list[list[object]], dict]:
    loads: dict[str, float] = {}
    oxi_store, t = load_oxigraph(graph)
    loads.update(t)
    print("  " + ", ".join(f"{k} {v:.2f}s" for k, v in t.items()), flush=True)
    our_store, t = load_ours(graph)
    loads.update(t)
    print("  " + ", ".join(f"{k} {v:.2f}s" for k, v in t.items()), flush=True)

    rows: list[list[object]] = []
    for name, text in build_queries(graph.constants).items():
        ours = _time(_ours_runner(our_store, text), repeat, budget_s)
        uncached = _time(_ours_uncached_runner(our_store, text), repeat, budget_s)
        oxi = _time(_oxigraph_runner(oxi_store, text), repeat, budget_s)
        ratio = ours.median_ms / oxi.median_ms if ours.median_ms and oxi.median_ms else "-"
        rows.append([name, _ms(ours), _ms(uncached), _ms(oxi), ratio, _count(ours), _count(oxi),
                     _check(ours, oxi)])
        print(f"  {name:<22} ours {format_cell(_ms(ours)):>8} ms ({ours.runs} runs), "
              f"+parse {format_cell(_ms(uncached)):>8} ms  pyoxigraph {format_cell(_ms(oxi)):>8} ms "
              f"({oxi.runs} runs)  {_check(ours, oxi)}", flush=True)
    return rows, loads


def _ms(t: Timing) -> float | str:
    return t.median_ms if t.median_ms is not None else "error"


def _count(t: Timing) -> int | str:
    return "error" if t.error else str(t.count).lower() if isinstance(t.count, bool) else t.count


def size_label(n: int) -> str:
    """1000000 -> "1M", 100000 -> "100k": the section heading names the data size."""
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n % 1_000 == 0:
        return f"{n // 1_000}k"
    return f"{n:,}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Median SPARQL query latency, Rivulet vs pyoxigraph.")
    parser.add_argument("--triples", type=int, default=DEFAULT_TRIPLES)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per query (fewer if slow)")
    parser.add_argument("--budget", type=float, default=10.0,
                        help="seconds of timed runs per engine and query before cutting repetitions")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    graph = generate(args.triples, args.seed)
    generation = time.perf_counter() - start
    print(f"generated {len(graph):,} triples in {generation:.2f}s; constants {graph.constants}",
          flush=True)
    rows, loads = measure(graph, args.repeat, args.budget)

    ratios = [r[3] for r in rows if isinstance(r[3], float)]
    table = markdown_table(HEADERS, rows)
    load_table = markdown_table(["step", "seconds"], [["generation (numpy)", generation],
                                                      *[[k, v] for k, v in loads.items()]])
    summary = f"Median ratio ours / pyoxigraph: {statistics.median(ratios):.1f}." if ratios else ""
    body = (f"Machine: {machine_description()}.\n\n"
            f"Data: `benchmarks.generate` with {len(graph):,} triples ({graph.users:,} users, "
            f"{graph.posts:,} posts), seed {args.seed}; query constants `{graph.constants.user}` "
            f"and `{graph.constants.tag}`.\n\n"
            f"Each query: one warm-up run, then up to {args.repeat} timed runs per engine (fewer, "
            f"but at least 3, when they would take more than {args.budget:g} s); median wall time, "
            "including decoding every row. Our `Store.query` caches parsed queries, so after the "
            "warm-up \"ours\" excludes parsing; \"ours + parse\" runs `Store.execute(parse_query(text))` "
            "and so parses on every call, as pyoxigraph does. The ratio uses \"ours\" (what a repeated "
            "query costs through the API).\n\n"
            f"{table}\n\n{summary}\n\nLoad times (one run each):\n\n{load_table}")
    print()
    print(table)
    print()
    print(load_table)
    if not args.no_write:
        write_section(f"Query latency ({size_label(len(graph))} triples)", body)


if __name__ == "__main__":
    main()
