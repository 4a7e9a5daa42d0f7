"""LSBench L1-L6 through the stream engine: every window equals plain SPARQL
over that window's content and the stored social graph.

The reference answer of a window is computed without the engine: the test
takes the items it sent itself with ``t - r <= ts < t``, loads them (and the
social graph, for the queries that name it) into a fresh pyoxigraph store and
runs the query's WHERE clause there. The streams are fed in batches of
different lengths per stream, each closed by a heartbeat, so one ingest often
closes several windows and a two-stream query waits for its slower stream.
"""

from collections import Counter

import pytest

from benchmarks.lsbench_data import (
    HISTORY_GRAPH,
    SOCIAL_GRAPH,
    START_MS,
    STREAMS,
    Item,
    StreamGenerator,
    generate,
)
from benchmarks.lsbench_queries import QUERIES, RANGE_MS, STEP_MS, LSBenchQuery
from engine.api import Store
from engine.rdf import IRI, Literal, format_term
from engine.stream import StreamDefinition, StreamEngine

pyoxigraph = pytest.importorskip("pyoxigraph")

STORED_TRIPLES = 3_000
#: items per second; small, so a window holds tens of items and some are empty
RATES = {"poststream": 50, "postlikestream": 120, "photostream": 25, "photolikestream": 60, "gpsstream": 80}
#: each stream is posted in batches of this many ms, a heartbeat at each batch's end
BATCH_MS = {"poststream": 100, "postlikestream": 200, "photostream": 300, "photolikestream": 100,
            "gpsstream": 250}
DATA_MS = 4_000
GRID_MS = 10
#: after the data, one heartbeat per stream drains the windows (they end empty)
FINAL_MS = START_MS + DATA_MS + RANGE_MS + 2 * STEP_MS


def oxigraph_term(term):
    if isinstance(term, IRI):
        return pyoxigraph.NamedNode(term.value)
    if isinstance(term, Literal):
        if term.lang:
            return pyoxigraph.Literal(term.lexical, language=term.lang)
        datatype = pyoxigraph.NamedNode(term.datatype) if term.datatype else None
        return pyoxigraph.Literal(term.lexical, datatype=datatype)
    raise TypeError(f"unexpected term {term!r}")


def oxigraph_triple(triple) -> "pyoxigraph.Quad":
    return pyoxigraph.Quad(*(oxigraph_term(t) for t in triple))


@pytest.fixture(scope="module")
def data():
    return generate(STORED_TRIPLES)


@pytest.fixture(scope="module")
def items(data) -> dict[str, list[Item]]:
    """The streams' items, timestamps snapped to a 10 ms grid (an order-keeping
    map) so that a tenth of them fall exactly on a window border, where the
    half-open ``[t - r, t)`` decides which windows hold them."""
    generated = StreamGenerator(data, RATES).advance(START_MS + DATA_MS)
    return {name: [(ts - ts % GRID_MS, triples) for ts, triples in stream]
            for name, stream in generated.items()}


@pytest.fixture(scope="module")
def run(data, items):
    """Replay the streams once with all six queries registered; the events of each."""
    store = Store()
    store.add(data.social_triples(), graph=SOCIAL_GRAPH)
    store.add(data.history_triples(), graph=HISTORY_GRAPH)
    engine = StreamEngine(store)
    for spec in STREAMS.values():
        engine.declare_stream(StreamDefinition(spec.name, spec.iri, timing=spec.timing))
    queues = {query.name: engine.register(query.registration()).subscribe() for query in QUERIES}
    events = {name: [] for name in queues}

    def drain() -> None:
        for name, queue in queues.items():
            events[name] += queue.drain()
    arrival: list[str] = []  # stream names in the order their first data item was ingested
    sent = dict.fromkeys(BATCH_MS, START_MS)
    for end in range(START_MS + 50, START_MS + DATA_MS + 1, 50):
        for name, batch_ms in BATCH_MS.items():
            if (end - START_MS) % batch_ms:
                continue
            batch = [item for item in items[name] if sent[name] <= item[0] < end]
            sent[name] = end
            if batch and name not in arrival:
                arrival.append(name)
            engine.ingest(name, [*batch, (end, [])])
            drain()
    for name in STREAMS:
        engine.heartbeat(name, FINAL_MS)
        drain()
    evaluation = {name: engine.query(name).to_json()["evaluation"] for name in queues}
    return events, arrival, evaluation


def reference(query: LSBenchQuery, social: list, items: dict[str, list[Item]], close: int) -> Counter:
    """The window's answer by plain SPARQL over its content (and the social graph)."""
    oxi = pyoxigraph.Store()
    if query.stored:
        oxi.extend(social)
    content = {triple for s in query.streams for ts, triples in items[s] if close - RANGE_MS <= ts < close
               for triple in triples}
    oxi.extend([oxigraph_triple(t) for t in content])
    solutions = oxi.query(query.window_sparql())
    variables = solutions.variables
    return Counter(tuple(str(solution[v]) for v in variables) for solution in solutions)


def first_close(query: LSBenchQuery, items: dict[str, list[Item]], arrival: list[str]) -> int:
    """SEMANTICS.md: the first window reported is the earliest that holds the
    first item to arrive at one of the query's streams (none has data at registration)."""
    first_stream = next(name for name in arrival if name in query.streams)
    first_ts = items[first_stream][0][0]
    return (first_ts // STEP_MS + 1) * STEP_MS


@pytest.mark.parametrize("query", QUERIES, ids=[q.name for q in QUERIES])
def test_every_window_matches_plain_sparql(query, run, data, items):
    events, arrival, _ = run
    got = events[query.name]
    closes = [e.end_ms for e in got]
    assert closes == list(range(first_close(query, items, arrival), FINAL_MS + 1, STEP_MS))
    assert [e.sequence for e in got] == list(range(1, len(got) + 1))
    assert all(e.end_ms - e.start_ms == RANGE_MS for e in got)
    social = [oxigraph_triple(t) for t in data.social_triples()]
    mismatches = []
    for event in got:
        expected = reference(query, social, items, event.end_ms)
        answer = Counter(tuple(format_term(t) for t in row) for row in event.rows)
        if answer != expected:
            mismatches.append((event.end_ms, sorted(expected - answer)[:3], sorted(answer - expected)[:3]))
    assert not mismatches, f"{len(mismatches)} windows differ; (close, missing, extra): {mismatches[:3]}"
    sizes = [len(e.rows) for e in got]
    assert sum(1 for n in sizes if n) >= len(sizes) // 4, f"too few non-empty windows: {sizes}"
    assert 0 in sizes, "the drained windows at the end must be empty"


def test_history_stays_out_of_the_windows(run, data):
    """L2's user has old posts in the history graph; no window may report them."""
    events, _, _ = run
    old_posts = {format_term(o) for s, p, o in data.history_triples() if p.value.endswith("creator_of")}
    reported = {format_term(row[0]) for e in events["L2"] for row in e.rows}
    assert reported and not reported & old_posts


@pytest.mark.parametrize("query", QUERIES, ids=[q.name for q in QUERIES])
def test_windows_are_evaluated_from_their_change(query, run):
    """Every LSBench query slides by a tenth of its range over unchanging stored
    data: after its first window, the engine evaluates windows from what
    entered and left them (and still in full now and then, to compare costs);
    the answers checked above come from both paths."""
    _, _, evaluation = run
    counts = evaluation[query.name]
    assert counts["incremental"]
    assert counts["delta_windows"] >= 1 and counts["full_windows"] >= 1, counts
