"""Count windows (``[TRIPLES n]``) over items that are RDF graphs.

An item holds each of its triples once, however often its body writes it;
the stream's elements are the items' distinct triples in order, a triple
repeated by a later item counting again; window j holds elements
``(j-1)n .. jn-1`` as a set (docs/semantics.md). The repros of issue 26 go
through every way an item is written (N-Triples, Turtle, batch lines of one
timestamp); the generated scenarios (repeats within and across items, items
larger than n, sizes around the log's merge threshold) are checked window by
window against an oracle written from that rule, which evaluates the WHERE
clause in pyoxigraph over exactly the window's triples.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.api import Store
from engine.rdf import IRI
from engine.stream import StreamDefinition, StreamEngine
from engine.stream.batch_format import MEDIA_TYPE as BATCH
from engine.stream.transient import SMALL_BATCH

pyoxigraph = pytest.importorskip("pyoxigraph")

EX = "http://example.org/"
STREAM = IRI(EX + "s")
A, B, C, D, P = (f"<{EX}{name}>" for name in ("a", "b", "c", "d", "p"))

#: name -> WHERE clause; {ex} is the example namespace
WHERES = {
    "all": "{ ?s ?p ?o }",
    "join": "{ ?a <{ex}p> ?b . ?b <{ex}q> ?c }",
}


def count_query(name: str, n: int, where: str) -> str:
    return (f"REGISTER QUERY {name} AS SELECT * FROM STREAM <{STREAM.value}> [TRIPLES {n}] "
            f"WHERE {where.replace('{ex}', EX)}")


def new_engine() -> StreamEngine:
    engine = StreamEngine(Store(), retain_events=100_000)
    engine.declare_stream(StreamDefinition("s", STREAM))
    return engine


def window_of(event) -> set[tuple[str, ...]]:
    return {tuple(term.value for term in row) for row in event.rows}


# ------------------------------------------------------------------ the repros
@pytest.mark.parametrize("body, media_type, timestamp", [
    (f"{A} {P} {B} .\n{A} {P} {B} .\n", "application/n-triples", "1000"),
    (f"{A} {P} {B} .\n{A} {P} {B} .\n", "text/turtle", "1000"),
    (f"{A} {P} {B} ; {P} {B} .\n", "text/turtle", "1000"),
    (f"1000 {A} {P} {B} .\n1000 {A} {P} {B} .\n", BATCH, None),
])
def test_an_item_that_repeats_a_triple_holds_it_once(body, media_type, timestamp):
    engine = new_engine()
    queue = engine.register(count_query("q", 2, WHERES["all"])).subscribe()
    first = engine.ingest_body("s", body.encode(), media_type, timestamp)
    assert (first["items"], first["triples"], first["windows_fired"]) == (1, 1, 0)
    second = engine.ingest_body("s", f"{C} {P} {D} .\n".encode(), "application/n-triples", "2000")
    assert (second["triples"], second["windows_fired"]) == (1, 1)
    [event] = queue.drain()
    assert window_of(event) == {(EX + "a", EX + "p", EX + "b"), (EX + "c", EX + "p", EX + "d")}
    assert (event.start_ms, event.end_ms) == (1000, 2001)
    assert engine.streams["s"].triples == 2


def test_a_triple_repeated_by_a_later_item_counts_again():
    engine = new_engine()
    queue = engine.register(count_query("q", 2, WHERES["all"])).subscribe()
    for ts in (1000, 2000):
        engine.ingest_body("s", f"{A} {P} {B} .\n".encode(), "application/n-triples", str(ts))
    [event] = queue.drain()
    assert window_of(event) == {(EX + "a", EX + "p", EX + "b")}  # a set: two elements, one triple
    assert (event.start_ms, event.end_ms) == (1000, 2001)


def test_two_items_of_one_timestamp_in_one_call_are_two_items():
    """A batch body's lines of one timestamp are one item; the Python API's
    entries are items as given, also when two share a timestamp."""
    engine = new_engine()
    queue = engine.register(count_query("q", 2, WHERES["all"])).subscribe()
    a = (IRI(EX + "a"), IRI(EX + "p"), IRI(EX + "b"))
    summary = engine.ingest("s", [(1000, [a]), (1000, [a, a])])
    assert (summary["items"], summary["triples"], summary["windows_fired"]) == (2, 2, 1)
    assert window_of(queue.drain()[0]) == {(EX + "a", EX + "p", EX + "b")}


def test_an_item_larger_than_n_closes_several_windows():
    engine = new_engine()
    queue = engine.register(count_query("q", 2, WHERES["all"])).subscribe()
    triples = [(IRI(f"{EX}s{i}"), IRI(EX + "p"), IRI(EX + "o")) for i in (0, 1, 0, 2, 3, 4)]
    summary = engine.ingest("s", [(1000, triples)])
    assert (summary["triples"], summary["windows_fired"]) == (5, 2)
    assert [sorted(s for s, _, _ in window_of(e)) for e in queue.drain()] == [
        [EX + "s0", EX + "s1"], [EX + "s2", EX + "s3"]]
    engine.ingest("s", [(1500, [triples[0]])])  # s4 and a new element s0
    [event] = queue.drain()
    assert sorted(s for s, _, _ in window_of(event)) == [EX + "s0", EX + "s4"]
    assert (event.start_ms, event.end_ms) == (1000, 1501)


# ------------------------------------------------------------ generated scenarios
def oracle_windows(items: list[tuple[int, list]], n: int) -> list[tuple[int, int, set]]:
    """The count windows of size ``n`` over ``items`` (in arrival order) by
    the documented rule: ``(start_ms, end_ms, triples)``."""
    elements = [(ts, triple) for ts, triples in items for triple in dict.fromkeys(triples)]
    windows = []
    for j in range(len(elements) // n):
        chunk = elements[j * n:(j + 1) * n]
        windows.append((chunk[0][0], chunk[-1][0] + 1, {triple for _, triple in chunk}))
    return windows


def reference(where: str, triples: set) -> Counter:
    """Plain SPARQL over exactly the window's triples."""
    store = pyoxigraph.Store()
    store.extend(pyoxigraph.Quad(*(pyoxigraph.NamedNode(t.value) for t in triple), pyoxigraph.DefaultGraph())
                 for triple in triples)
    solutions = store.query(f"SELECT * WHERE {where.replace('{ex}', EX)}")
    names = sorted(v.value for v in solutions.variables)
    return Counter(tuple(s[name].value for name in names) for s in solutions)


def answer(event) -> Counter:
    order = sorted(range(len(event.variables)), key=lambda i: event.variables[i])
    return Counter(tuple(row[i].value for i in order) for row in event.rows)


def random_item(rng: random.Random, size: int, vertices: int) -> list:
    """``size`` triples over ``vertices`` subjects (repeats likely when few)."""
    return [(IRI(f"{EX}v{rng.randrange(vertices)}"), IRI(EX + rng.choice("pq")),
             IRI(f"{EX}v{rng.randrange(8)}")) for _ in range(size)]


def random_batches(rng: random.Random, large: bool) -> list[list[tuple[int, list]]]:
    """Batches of items with non-decreasing timestamps: small items over a
    tiny vocabulary (repeats within and across items, items larger than the
    small windows), with ``large`` two items around the log's merge threshold;
    equal timestamps only across batches (within one batch body they would
    be one item)."""
    batches, ts = [], 0
    count = rng.randint(8, 16)
    large_at = set(rng.sample(range(count), 2)) if large else set()
    for number in range(count):
        batch = []
        for _ in range(rng.randint(1, 4)):
            ts += rng.choice((1, 7, 40))
            batch.append((ts, random_item(rng, rng.choice((1, 2, 3, 5, 12)), 4)))
        if number in large_at:
            ts += 1
            size = SMALL_BATCH + rng.randint(-3, 3)
            batch.append((ts, random_item(rng, size, size)))
        batches.append(batch)
        if rng.random() < 0.3:
            batches.append([(ts, [])])  # a heartbeat: no element
    return batches


def batch_body(items: list[tuple[int, list]]) -> bytes:
    return "".join(f"{ts} {' '.join(f'<{t.value}>' for t in triple)} .\n" if triples else f"{ts}\n"
                   for ts, triples in items for triple in (triples or [None])).encode()


@pytest.mark.parametrize("seed, large", [(seed, False) for seed in range(6)] + [(6, True)])
def test_count_windows_equal_the_oracle(seed, large):
    rng = random.Random(seed)
    sizes = (SMALL_BATCH - 1, SMALL_BATCH, SMALL_BATCH + 1) if large else (1, 2, 3, 7)
    engine = new_engine()
    queues = {(n, name): engine.register(count_query(f"q{n}_{name}", n, where)).subscribe()
              for n in sizes for name, where in WHERES.items()}
    sent: list[tuple[int, list]] = []
    elements = 0
    for number, batch in enumerate(random_batches(rng, large)):
        if number % 2 == 0:  # as a POST body in timestamped N-Triples, else as Python items
            summary = engine.ingest_body("s", batch_body(batch), BATCH)
        else:
            summary = engine.ingest("s", batch)
        data = [item for item in batch if item[1]]
        sent += data
        distinct = sum(len(set(triples)) for _, triples in data)
        assert summary["triples"] == distinct
        closed = sum((elements + distinct) // n - elements // n for n in sizes)
        assert summary["windows_fired"] == closed * len(WHERES)
        elements += distinct
    for (n, name), queue in queues.items():
        events = queue.drain()
        expected = oracle_windows(sent, n)
        assert [e.sequence for e in events] == list(range(1, len(expected) + 1)), (n, name)
        for event, (start, end, triples) in zip(events, expected, strict=True):
            assert (event.start_ms, event.end_ms) == (start, end), (n, name, event.sequence)
            assert answer(event) == reference(WHERES[name], triples), (n, name, event.sequence)
