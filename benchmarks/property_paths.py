"""Property paths on generated graphs: Rivulet against pyoxigraph in the same run.

Shapes (all generated here, deterministic): chains of 1,000 / 8,000 /
100,000 nodes, a chain whose links alternate two predicates (for a sequence
inside ``*``), a complete binary tree and a random graph with cycles (each
node links to 3 random nodes), 100,000 nodes each. Queries follow a path
from a bound start, to a bound end, between both (ASK), with ``+``, with a
sequence ``(p/q)*``, and over all pairs of the tree. Both engines load the
same N-Triples; each query is run once to warm up, then timed (median),
and the answers of both are compared.

    python -m benchmarks.property_paths            # ~1-2 min, rewrites its section of docs/benchmarks.md
    python -m benchmarks.property_paths --no-write --quick
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit
from collections.abc import Callable

import numpy as np
import pyoxigraph

from benchmarks import machine_description, markdown_table, write_section
from engine.api import Store

NS = "http://rivulet.example.org/path/"
HEADERS = ["graph", "query", "ours ms", "pyoxigraph ms", "ours / pyoxigraph", "answer ours",
           "answer pyoxigraph", "check"]


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


def _answer_ours(store: Store, query: str) -> Callable[[], object]:
    def run() -> object:
        result = store.query(query)
        if result.form == "ASK":
            return bool(result.boolean)
        return int(next(result.rows())[0].lexical)
    return run


def _answer_oxigraph(store: pyoxigraph.Store, query: str) -> Callable[[], object]:
    def run() -> object:
        result = store.query(query)
        if isinstance(result, pyoxigraph.QueryBoolean):
            return bool(result)
        return int(next(iter(result))[0].value)
    return run


def _median_ms(run: Callable[[], object], repeat: int, budget_s: float) -> tuple[float, object]:
    """Warm up once, then the median of up to ``repeat`` runs (fewer when one is slow)."""
    start = time.perf_counter()
    answer = run()
    first = time.perf_counter() - start
    runs = max(3, min(repeat, int(budget_s / max(first, 1e-9))))
    return statistics.median(timeit.repeat(run, number=1, repeat=runs)) * 1e3, answer


def measure(quick: bool, repeat: int) -> list[list[object]]:
    rows = []
    for graph, data, queries in cases(quick):
        ours = Store()
        ours.load(data.encode(), format="nt")
        theirs = pyoxigraph.Store()
        theirs.bulk_load(data.encode(), pyoxigraph.RdfFormat.N_TRIPLES)
        for name, query in queries:
            ours_ms, ours_answer = _median_ms(_answer_ours(ours, query), repeat, 5.0)
            ox_ms, ox_answer = _median_ms(_answer_oxigraph(theirs, query), repeat, 5.0)
            row = [graph, name, ours_ms, ox_ms, ours_ms / ox_ms, str(ours_answer), str(ox_answer),
                   "ok" if ours_answer == ox_answer else "DIFFERENT"]
            print(" | ".join(str(c) for c in row), flush=True)
            rows.append(row)
    return rows


def report(rows: list[list[object]], quick: bool) -> str:
    ratios = [r[4] for r in rows]
    return "\n\n".join([
        f"Machine: {machine_description()}.",
        "Command: `python -m benchmarks.property_paths`" + (" --quick" if quick else "") + ". Each query: "
        "one warm-up run, then the median of up to 9 runs (at least 3), through `Store.query` (parsed "
        "once, then cached) and pyoxigraph's `Store.query` on the same N-Triples, the answer decoded. "
        "A load of fewer than 4,096 triples stays in memory (`MemoryGraph`, the 1,000 chain); larger "
        "ones are compact CSR arrays (`CompactGraph`).",
        markdown_table(HEADERS, rows),
        f"Median ratio ours / pyoxigraph: {statistics.median(ratios):.2f}; largest {max(ratios):.2f}.",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="20,000 nodes instead of 100,000")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md")
    args = parser.parse_args()
    rows = measure(args.quick, args.repeat)
    body = report(rows, args.quick)
    print(body)
    if not args.no_write:
        write_section("Property paths", body)


if __name__ == "__main__":
    main()
