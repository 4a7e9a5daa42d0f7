"""LSBench L1-L6 on a composite built from a peer: pyoxigraph plus a window graph.

What one would build without a stream engine: a pyoxigraph ``Store`` holds the
stored graphs (the social graph the queries read with ``FROM``, and the
history, which no query reads), and one more named graph, the *window graph*,
holds the content of the query's current window ``[t - 1s, t)``. Every STEP
(100 ms) the new items of the query's streams are inserted and the items that
left the window are deleted; then the query's plain SPARQL
(``LSBenchQuery.window_sparql()``) runs with the window graph as its default
graph, merged with the social graph for the queries that name it
(``default_graph=[window, social]``).

RDF graphs are sets, but a window is a bag of items: two items in the window
may carry the same triple (a user likes the same post twice within a second).
Such a triple must stay in the window graph until its last item leaves, so a
Python dict counts the items in the window that carry each triple; a triple is
inserted when its count goes from 0 to 1 and deleted when it comes back to 0.

Latency of a window: the upkeep of its step (counting, insert, delete) plus
the query, rows taken out as ``QuerySolution`` objects. Turning the stream's
terms into pyoxigraph terms comes before the clock starts, as the engine's
ingest comes before its heartbeat; it is in the *load* (wall time of a whole
step / stream time), like the engine's ingest. Same streams (seed, rates,
order of queries, warm-up and window counts) as ``lsbench_latency``, so the
rows of every timed window can be compared with the engine's: ``--engine``
runs both and compares them window by window.

    python -m benchmarks.lsbench_composite [--triples 1000000] [--scale 0.05] [--windows 200] [--engine]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import pyoxigraph as ox

from benchmarks import machine_description, markdown_table
from benchmarks.lsbench_data import (
    DEFAULT_SEED,
    HISTORY_GRAPH,
    SIB,
    SOCIAL_GRAPH,
    STREAMS,
    Item,
    LSBenchData,
    StreamGenerator,
    generate,
    scaled_rates,
)
from benchmarks.lsbench_queries import QUERIES, RANGE_MS, STEP_MS, LSBenchQuery
from benchmarks.lsbench_timing import WARMUP_WINDOWS, Latencies
from engine.rdf import IRI, Literal, Term

#: the named graph that holds the current window's content (no stored or stream triple is in it)
WINDOW_GRAPH = SIB + "graph/window"

#: an item as quads of the window graph: (timestamp ms, quads)
QuadItem = tuple[int, list[ox.Quad]]


# -------------------------------------------------------------------- terms
def oxigraph_term(term: Term) -> ox.NamedNode | ox.Literal:
    if isinstance(term, IRI):
        return ox.NamedNode(term.value)
    if isinstance(term, Literal):
        if term.lang:
            return ox.Literal(term.lexical, language=term.lang)
        return ox.Literal(term.lexical, datatype=ox.NamedNode(term.datatype) if term.datatype else None)
    raise TypeError(f"unexpected term {term!r}")


def oxigraph_quads(triples, graph: ox.NamedNode) -> list[ox.Quad]:
    """Engine triples as pyoxigraph quads of ``graph``, IRIs converted once each."""
    nodes: dict[Term, ox.NamedNode | ox.Literal] = {}

    def term(t: Term):
        node = nodes.get(t)
        if node is None:
            node = nodes[t] = oxigraph_term(t)
        return node

    return [ox.Quad(term(s), term(p), term(o), graph) for s, p, o in triples]


def load_oxigraph(data: LSBenchData) -> ox.Store:
    """The stored graphs in a fresh in-memory pyoxigraph store, in the same
    named graphs as the engine's: social (read by the queries) and history."""
    store = ox.Store()
    store.extend(oxigraph_quads(data.social_triples(), ox.NamedNode(SOCIAL_GRAPH)))
    store.extend(oxigraph_quads(data.history_triples(), ox.NamedNode(HISTORY_GRAPH)))
    return store


# ------------------------------------------------------------- window graph
class PeerWindow:
    """One query's window graph in ``store``, kept equal to the set of triples
    of the items in ``[close - range_ms, close)``, with a count of the items
    carrying each triple."""

    def __init__(self, store: ox.Store, query: LSBenchQuery, range_ms: int = RANGE_MS) -> None:
        self.store = store
        self.query = query
        self.range_ms = range_ms
        self.graph = ox.NamedNode(WINDOW_GRAPH)
        self.default_graph = [self.graph, ox.NamedNode(SOCIAL_GRAPH)] if query.stored else [self.graph]
        self.sparql = query.window_sparql()
        #: per stream, the items in the window, oldest first
        self.logs: dict[str, deque[QuadItem]] = {name: deque() for name in query.streams}
        #: triple of the window graph -> items in the window that carry it
        self.counts: dict[ox.Quad, int] = {}
        #: over the graph's life: triples inserted, deleted, and kept at an item's
        #: eviction because another item in the window still carries them
        self.inserted = self.deleted = self.kept = 0

    def quads(self, items: Sequence[Item]) -> list[QuadItem]:
        """Stream items as items of window-graph quads (before the clock starts)."""
        graph = self.graph
        return [(ts, oxigraph_quads(triples, graph)) for ts, triples in items]

    def advance(self, batch: Mapping[str, Sequence[QuadItem]], close: int) -> None:
        """The upkeep of one step: add the batch's items (timestamps below
        ``close``, none before an item already added on its stream), insert the
        triples new to the window, then evict the items older than
        ``close - range_ms`` and delete the triples no item carries any more.
        Inserting first keeps a triple that leaves with one item and comes back
        with another in the same step."""
        counts = self.counts
        new: list[ox.Quad] = []
        for name, items in batch.items():
            log = self.logs[name]
            for item in items:
                log.append(item)
                for quad in item[1]:
                    n = counts.get(quad, 0)
                    counts[quad] = n + 1
                    if not n:
                        new.append(quad)
        if new:
            self.store.extend(new)
        start = close - self.range_ms
        gone: list[ox.Quad] = []
        kept = 0
        for log in self.logs.values():
            while log and log[0][0] < start:
                for quad in log.popleft()[1]:
                    n = counts[quad] - 1
                    if n:
                        counts[quad] = n
                        kept += 1
                    else:
                        del counts[quad]
                        gone.append(quad)
        remove = self.store.remove
        for quad in gone:
            remove(quad)
        self.inserted += len(new)
        self.deleted += len(gone)
        self.kept += kept

    def evaluate(self) -> tuple[list[ox.Variable], list[ox.QuerySolution]]:
        """The query over the window graph (and the social graph): its variables and rows."""
        solutions = self.store.query(self.sparql, default_graph=self.default_graph)
        return solutions.variables, list(solutions)

    def content(self) -> set[ox.Quad]:
        """The window graph as the store holds it (for checks, not timed)."""
        return set(self.store.quads_for_pattern(None, None, None, self.graph))

    def clear(self) -> None:
        self.store.clear_graph(self.graph)
        self.counts.clear()
        for log in self.logs.values():
            log.clear()


@dataclass
class Step:
    """One STEP of one query: the window it closes, the items fed (engine
    terms), the answer, and the wall times of its parts (s)."""

    close: int
    items: dict[str, list[Item]]
    variables: list[ox.Variable]
    solutions: list[ox.QuerySolution]
    convert_s: float
    upkeep_s: float
    query_s: float


def steps(window: PeerWindow, generator: StreamGenerator, count: int) -> Iterator[Step]:
    """Run ``window``'s query for ``count`` steps of ``generator``'s streams
    (only the query's own are fed); yields every step. The window graph is
    emptied when the run ends."""
    streams = window.query.streams
    try:
        for _ in range(count):
            close = generator.now + STEP_MS
            generated = generator.advance(close)
            items = {name: generated[name] for name in streams}
            started = time.perf_counter()
            batch = {name: window.quads(stream) for name, stream in items.items()}
            converted = time.perf_counter()
            window.advance(batch, close)
            kept = time.perf_counter()
            variables, solutions = window.evaluate()
            done = time.perf_counter()
            yield Step(close, items, variables, solutions, converted - started, kept - converted,
                       done - kept)
    finally:
        window.clear()


# ---------------------------------------------------------------- benchmark
@dataclass
class CompositeLatencies(Latencies):
    """``Latencies``, and the two parts of each sample: upkeep and query (ms)."""

    upkeep_ms: list[float] = field(default_factory=list)
    query_ms: list[float] = field(default_factory=list)


def composite_latencies(data: LSBenchData, scale: float, windows: int, seed: int,
                        store: ox.Store | None = None) -> dict[str, Latencies]:
    """Per query, ``windows`` timed windows after ``WARMUP_WINDOWS`` warm-up
    ones, on the streams ``lsbench_latency.engine_latencies`` sees for the same
    arguments. ``store``: the stored graphs already loaded (``load_oxigraph``)."""
    store = load_oxigraph(data) if store is None else store
    generator = StreamGenerator(data, scaled_rates(scale), seed)
    out: dict[str, Latencies] = {}
    for query in QUERIES:
        result = out[query.name] = CompositeLatencies()
        gc.collect()
        for i, step in enumerate(steps(PeerWindow(store, query), generator, WARMUP_WINDOWS + windows)):
            if i < WARMUP_WINDOWS:
                continue
            result.samples_ms.append((step.upkeep_s + step.query_s) * 1000)
            result.upkeep_ms.append(step.upkeep_s * 1000)
            result.query_ms.append(step.query_s * 1000)
            result.rows.append(len(step.solutions))
            result.ingest_s += step.convert_s + step.upkeep_s + step.query_s
            result.stream_s += STEP_MS / 1000
        upkeep, query_ms = statistics.median(result.upkeep_ms), statistics.median(result.query_ms)
        print(f"  composite {query.name}: median {result.median_ms:.3g} ms "
              f"(upkeep {upkeep:.3g}, query {query_ms:.3g}), "
              f"p99 {result.p99_ms:.3g} ms, rows/window {statistics.median(result.rows):g}, "
              f"load {result.load:.2f}", flush=True)
    return out


HEADERS = ["query", "streams", "rows / window", "median ms", "p99 ms", "upkeep median ms",
           "query median ms", "load"]


def report(composite: Mapping[str, Latencies], engine: Mapping[str, Latencies] | None = None) -> str:
    headers = HEADERS + (["engine rows / window", "windows with other rows"] if engine else [])
    rows = []
    for q in QUERIES:
        c = composite[q.name]
        row = [q.name, " + ".join(q.streams), float(statistics.median(c.rows)), c.median_ms, c.p99_ms,
               statistics.median(getattr(c, "upkeep_ms", None) or [float("nan")]),
               statistics.median(getattr(c, "query_ms", None) or [float("nan")]), c.load]
        if engine:
            e = engine[q.name]
            row += [float(statistics.median(e.rows)), sum(a != b for a, b in zip(c.rows, e.rows))]
        rows.append(row)
    return markdown_table(headers, rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--windows", type=int, default=200, help="timed windows per query")
    parser.add_argument("--scale", type=float, default=0.05, help="stream rates / the paper's")
    parser.add_argument("--engine", action="store_true",
                        help="also run the engine on the same streams and compare rows window by window")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    data = generate(args.triples, args.seed)
    generated = time.perf_counter()
    store = load_oxigraph(data)
    print(f"{len(data):,} stored triples generated in {generated - started:.1f}s, "
          f"loaded into pyoxigraph in {time.perf_counter() - generated:.1f}s", flush=True)
    composite = composite_latencies(data, args.scale, args.windows, args.seed, store)
    del store
    engine = None
    if args.engine:
        from benchmarks.lsbench_latency import engine_latencies, load_store  # late: httpx, the server

        gc.collect()
        engine = engine_latencies(load_store(data), data, args.scale, args.windows, args.seed)
    rates = ", ".join(f"{name} {spec.paper_triples_per_s * args.scale:,.0f}"
                      for name, spec in STREAMS.items())
    print(f"\nMachine: {machine_description()}.\n"
          f"{len(data):,} stored triples, seed {args.seed}; {args.windows} timed windows per query after "
          f"{WARMUP_WINDOWS} warm-up; streams at {args.scale:g} x the paper's rates ({rates} triples/s).\n")
    print(report(composite, engine))


if __name__ == "__main__":
    main()
