"""Property paths on generated graphs: Rivulet against pyoxigraph in the same run.

Shapes (all generated here, deterministic): chains of 1,000 / 8,000 /
100,000 nodes, a chain whose links alternate two predicates (for a sequence
inside ``*``), a complete binary tree and a random graph with cycles (each
node links to 3 random nodes), 100,000 nodes each. Queries follow a path
from a bound start, to a bound end, between both (ASK), with ``+``, with a
sequence ``(p/q)*``, and over all pairs of the tree. Both engines load the
same N-Triples; each query is run once to warm up, then timed (median and
p99), and the answers of both are compared.

Before and after a change, in one table: run main's code first, saving its
figures, then this branch's, reading them (the script is run by path so
that ``PYTHONPATH`` decides whose ``engine`` and ``benchmarks`` are used)::

    PYTHONPATH=/path/to/main python benchmarks/property_paths.py --no-write --save before.json --cap 30
    python -m benchmarks.property_paths --before before.json   # rewrites its section of docs/benchmarks.md
    python -m benchmarks.property_paths --no-write --quick
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import statistics
import time
import timeit
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyoxigraph

from benchmarks import machine_description, markdown_table, write_section
from engine.api import QueryCancelled, Store

NS = "http://rivulet.example.org/path/"
HEADERS = ["graph", "query", "ours median ms", "ours p99 ms", "pyoxigraph median ms",
           "pyoxigraph p99 ms", "ours / pyoxigraph (median)", "answer ours", "answer pyoxigraph", "check"]
BEFORE_HEADERS = ["before median ms", "before p99 ms", "after / before (median)"]


def _iri(name: str) -> str:
    return f"<{NS}{name}>"


def chain(n: int, predicates: tuple[str, ...] = ("next",)) -> str:
    """n links n0 -> n1 -> ... -> n{n}, the i-th by ``predicates[i % len]``."""
    return "".join(f"{_iri(f'n{i}')} {_iri(predicates[i % len(predicates)])} {_iri(f'n{i + 1}')} .\n"
                   for i in range(n))


def tree(n: int) -> str:
    """A complete binary tree of n nodes: t{i} -> t{2i+1}, t{2i+2} by ``child``."""
    return "".join(f"{_iri(f't{(i - 1) // 2}')} {_iri('child')} {_iri(f't{i}')} .\n" for i in range(1, n))


def random_graph(n: int, degree: int, seed: int = 20240611) -> str:
    """Each of n nodes links to ``degree`` nodes drawn at random (cycles, repeats dropped)."""
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, n, size=(n, degree))
    return "".join(f"{_iri(f'r{i}')} {_iri('next')} {_iri(f'r{j}')} .\n"
                   for i in range(n) for j in sorted(set(targets[i].tolist())))


def _count(text: str) -> str:
    return f"SELECT (COUNT(*) AS ?c) {{ {text} }}"


def cases(quick: bool) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(graph name, N-Triples, [(query name, query)])."""
    big = 20_000 if quick else 100_000
    nxt, child = _iri("next"), _iri("child")
    found = []
    for n in (1_000, 8_000, big):
        found.append((f"chain {n:,}", chain(n), [
            ("start bound: n0 next* ?b", _count(f"{_iri('n0')} {nxt}* ?b")),
            ("end bound: ?a next* n_last", _count(f"?a {nxt}* {_iri(f'n{n}')}")),
            ("both bound: ASK n0 next* n_last", f"ASK {{ {_iri('n0')} {nxt}* {_iri(f'n{n}')} }}"),
            ("p+: n0 next+ ?b", _count(f"{_iri('n0')} {nxt}+ ?b")),
        ]))
    found.append((f"alternating chain {big:,}", chain(big, ("p", "q")), [
        ("sequence: n0 (p/q)* ?b", _count(f"{_iri('n0')} ({_iri('p')}/{_iri('q')})* ?b")),
    ]))
    found.append((f"binary tree {big:,}", tree(big), [
        ("start bound: root child* ?b", _count(f"{_iri('t0')} {child}* ?b")),
        ("end bound: ?a child* leaf", _count(f"?a {child}* {_iri(f't{big - 1}')}")),
        ("all pairs: ?a child+ ?b", _count(f"?a {child}+ ?b")),
    ]))
    found.append((f"random {big:,}, out-degree 3", random_graph(big, 3), [
        ("start bound: r0 next* ?b", _count(f"{_iri('r0')} {nxt}* ?b")),
        ("both bound: ASK r0 next* r1", f"ASK {{ {_iri('r0')} {nxt}* {_iri('r1')} }}"),
        ("p+ from r0, then one more link", _count(f"{_iri('r0')} {nxt}+/{nxt} ?b")),
    ]))
    return found


def _over_cap(signum: int, frame: object) -> None:
    raise QueryCancelled("over the benchmark's cap")


def _answer_ours(store: Store, query: str, cap_s: float | None) -> Callable[[], object]:
    """Run the query, stopped (``QueryCancelled``) after ``cap_s`` seconds by a
    timer signal: main's search polls no checkpoint inside a chain and took
    many minutes on the deepest one."""
    def run() -> object:
        if cap_s is not None:
            signal.signal(signal.SIGALRM, _over_cap)
            signal.setitimer(signal.ITIMER_REAL, cap_s)
        try:
            result = store.query(query)
            if result.form == "ASK":
                return bool(result.boolean)
            return int(next(result.rows())[0].lexical)
        finally:
            if cap_s is not None:
                signal.setitimer(signal.ITIMER_REAL, 0)
    return run


def _answer_oxigraph(store: pyoxigraph.Store, query: str) -> Callable[[], object]:
    def run() -> object:
        result = store.query(query)
        if isinstance(result, pyoxigraph.QueryBoolean):
            return bool(result)
        return int(next(iter(result))[0].value)
    return run


def _p99(samples: list[float]) -> float:
    """Nearest-rank 99th percentile: with fewer than 100 runs, the slowest."""
    ordered = sorted(samples)
    return ordered[min(len(ordered), math.ceil(0.99 * len(ordered))) - 1]


def _timed_ms(run: Callable[[], object], repeat: int, budget_s: float) -> tuple[float, float, object]:
    """Warm up once, then (median, p99) of up to ``repeat`` runs (fewer, at least 3,
    when one is slow) in milliseconds, and the answer."""
    start = time.perf_counter()
    answer = run()
    first = time.perf_counter() - start
    runs = max(3, min(repeat, int(budget_s / max(first, 1e-9))))
    samples = [s * 1e3 for s in timeit.repeat(run, number=1, repeat=runs)]
    return statistics.median(samples), _p99(samples), answer


def measure(quick: bool, repeat: int, cap_s: float | None) -> list[list[object]]:
    """One row per query (:data:`HEADERS`); a run of ours stopped at ``cap_s``
    shows as ``> cap`` with no timings."""
    rows = []
    for graph, data, queries in cases(quick):
        ours = Store()
        ours.load(data.encode(), format="nt")
        theirs = pyoxigraph.Store()
        theirs.bulk_load(data.encode(), pyoxigraph.RdfFormat.N_TRIPLES)
        for name, query in queries:
            ox_median, ox_p99, ox_answer = _timed_ms(_answer_oxigraph(theirs, query), repeat, 5.0)
            try:
                median, p99, answer = _timed_ms(_answer_ours(ours, query, cap_s), repeat, 5.0)
            except QueryCancelled:
                row = [graph, name, f"> {cap_s:g} s", "-", ox_median, ox_p99, "-", "-", str(ox_answer),
                       "stopped"]
            else:
                row = [graph, name, median, p99, ox_median, ox_p99, median / ox_median, str(answer),
                       str(ox_answer), "ok" if answer == ox_answer else "DIFFERENT"]
            print(" | ".join(str(c) for c in row), flush=True)
            rows.append(row)
    return rows


def with_before(rows: list[list[object]], before: list[list[object]]) -> list[list[object]]:
    """Each row with the same query's figures from an earlier run (main's code)."""
    earlier = {(r[0], r[1]): r for r in before}
    joined = []
    for row in rows:
        old = earlier.get((row[0], row[1]))
        if old is None:
            extra: list[object] = ["-", "-", "-"]
        elif isinstance(old[2], float):
            extra = [old[2], old[3], row[2] / old[2] if isinstance(row[2], float) else "-"]
        else:
            cap_ms = float(old[2].split()[1]) * 1e3  # "> 60 s": stopped at the cap
            extra = [old[2], "-", f"< {row[2] / cap_ms:.2g}" if isinstance(row[2], float) else "-"]
        joined.append(row[:4] + extra + row[4:])
    return joined


def report(rows: list[list[object]], quick: bool, before: bool) -> str:
    ratios = [r[-4] for r in rows if isinstance(r[-4], float)]
    headers = HEADERS[:4] + BEFORE_HEADERS + HEADERS[4:] if before else HEADERS
    command = "`python -m benchmarks.property_paths" + (" --quick" if quick else "") + "`"
    if before:
        command = ("`PYTHONPATH=<main> python benchmarks/property_paths.py --no-write --save before.json "
                   "--cap 30`, then " + command[:-1] + " --before before.json`")
    return "\n\n".join([
        f"Machine: {machine_description()}.",
        f"Command: {command}. Each query: one warm-up run, then up to 21 timed runs (at least 3; fewer "
        "when one run is slow: about 5 s per query and engine), median and p99 (nearest rank, so with "
        "fewer than 100 runs the slowest run), through `Store.query` (parsed once, then cached) and "
        "pyoxigraph's `Store.query` on the same N-Triples in the same process, the answer decoded. "
        "A load of fewer than 4,096 triples stays in memory (`MemoryGraph`, the 1,000 chain); larger "
        "ones are compact CSR arrays (`CompactGraph`)."
        + (" \"before\" is main's code in an earlier run on the same machine; a run of main stopped at "
           "the cap shows `> 30 s`, and its ratio is an upper bound." if before else ""),
        markdown_table(headers, rows),
        f"Median ratio ours / pyoxigraph: {statistics.median(ratios):.2f}; largest {max(ratios):.2f}.",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="20,000 nodes instead of 100,000")
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--cap", type=float, default=None,
                        help="stop a query of ours after this many seconds (for slow older code)")
    parser.add_argument("--save", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--before", type=Path,
                        help="JSON rows of an earlier run (main's code) to show beside these")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md")
    args = parser.parse_args()
    rows = measure(args.quick, args.repeat, args.cap)
    if args.save:
        args.save.write_text(json.dumps(rows), encoding="utf-8")
    if args.before:
        rows = with_before(rows, json.loads(args.before.read_text(encoding="utf-8")))
    body = report(rows, args.quick, args.before is not None)
    print(body)
    if not args.no_write:
        write_section("Property paths", body)


if __name__ == "__main__":
    main()
