"""A window whose inputs are those of the last one evaluated (the same rows in
every window, no change to the stored graphs it reads) is answered without
evaluation, and every event is still the one an evaluation gives."""

import random
from collections import Counter

import numpy as np
import pytest

from engine.api import Store
from engine.rdf import IRI
from engine.sparql.syntax import parse_registration
from engine.stream import StreamDefinition, StreamEngine
from engine.stream.transient import TransientLog
from engine.stream.unchanged import may_reuse

EX = "http://example.org/"
PREFIX = f"PREFIX ex: <{EX}>\n"
STORED = f"{EX}g"
#: the stream's own stored graph (every triple of the stream is absorbed there)
ABSORBED = f"{EX}s"
WINDOW = "FROM STREAM <http://example.org/s> [RANGE 600ms STEP 200ms]"
QUERIES = {
    "join": f"REGISTER QUERY join AS {PREFIX}SELECT ?x ?z {WINDOW} FROM <{STORED}> "
            "WHERE { ?x ex:knows ?y . ?y ex:likes ?z }",
    "filtered": f"REGISTER QUERY filtered AS {PREFIX}SELECT ?x ?y {WINDOW} WHERE {{ ?x ex:knows ?y "
                "FILTER (?x != ?y) }",
    "count": f"REGISTER QUERY count AS {PREFIX}SELECT (COUNT(*) AS ?n) {WINDOW} WHERE {{ ?x ?p ?y }}",
    "ask": f"REGISTER QUERY ask AS {PREFIX}ASK {WINDOW} WHERE {{ ?x ex:likes ex:p2 }}",
    "construct": f"REGISTER QUERY construct AS {PREFIX}CONSTRUCT {{ ?y ex:knownBy ?x }} {WINDOW} "
                 "WHERE { ?x ex:knows ?y }",
    # a window with gaps that reads the graph the stream is absorbed into: the
    # items between its windows change what it reads as of each instant
    "gaps": f"REGISTER QUERY gaps AS {PREFIX}SELECT ?x ?y FROM STREAM <http://example.org/s> "
            f"[RANGE 100ms STEP 300ms] FROM <{ABSORBED}> WHERE {{ ?x ex:knows ?y }}",
    "istream": f"REGISTER ISTREAM istream AS {PREFIX}SELECT ?x ?y FROM NAMED WINDOW ex:w ON "
               "<http://example.org/s> [RANGE PT0.6S STEP PT0.2S] WHERE { WINDOW ex:w { ?x ex:knows ?y } "
               "OPTIONAL { ?y ex:likes ?x } }",
    "dstream": f"REGISTER DSTREAM dstream AS {PREFIX}SELECT ?x FROM NAMED WINDOW ex:w ON "
               "<http://example.org/s> [RANGE PT0.6S STEP PT0.2S] WHERE { WINDOW ex:w { ?x ex:likes ?y } }",
}


def run(seed: int, reuse: bool) -> tuple[dict[str, list], dict[str, int]]:
    """Every query's events over a sparse stream, with stored-graph updates
    now and then; and how many windows each answered without evaluation."""
    rng = random.Random(seed)
    person = [IRI(f"{EX}p{i}") for i in range(5)]
    store = Store()
    store.add([(person[0], IRI(f"{EX}likes"), person[1])], graph=STORED)
    engine = StreamEngine(store)
    engine.declare_stream(StreamDefinition("s", IRI(f"{EX}s")))
    running = [engine.register(text) for text in QUERIES.values()]
    subscriptions = {r.spec.name: r.subscribe() for r in running}
    for r in running:
        r.reuse = r.reuse and reuse
    events: dict[str, list] = {name: [] for name in QUERIES}
    ts = 0
    for _ in range(60):
        ts += rng.choice([30, 150, 400, 900, 1300])
        if rng.random() < 0.15:
            a, b = rng.sample(person, 2)
            store.update(f"INSERT DATA {{ GRAPH <{STORED}> {{ <{a.value}> <{EX}likes> <{b.value}> }} }}")
        if rng.random() < 0.7:
            triple = (rng.choice(person), IRI(EX + rng.choice(["knows", "likes"])), rng.choice(person))
            engine.ingest("s", [(ts, [triple])])
        else:
            engine.heartbeat("s", ts)
        for name, subscription in subscriptions.items():
            events[name] += [(e.sequence, e.start_ms, e.end_ms, e.windows, e.error, e.boolean,
                              Counter(e.rows), Counter(e.triples)) for e in subscription.drain()]
    return events, {r.spec.name: r.unchanged_windows for r in running}


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_windows_answered_without_evaluation_report_what_an_evaluation_reports(seed):
    reused, skipped = run(seed, reuse=True)
    evaluated, none = run(seed, reuse=False)
    assert not any(none.values())
    for name in QUERIES:
        assert reused[name] == evaluated[name], name
        assert len(reused[name]) > 20, name
    assert all(skipped[name] > 5 for name in QUERIES if name != "gaps"), skipped


def test_the_next_window_after_an_unchanged_one_sees_a_store_update():
    store = Store()
    store.add([(IRI(f"{EX}p1"), IRI(f"{EX}likes"), IRI(f"{EX}p2"))], graph=STORED)
    engine = StreamEngine(store)
    engine.declare_stream(StreamDefinition("s", IRI(f"{EX}s")))
    query = engine.register(QUERIES["join"])
    subscription = query.subscribe()
    engine.ingest("s", [(50, [(IRI(f"{EX}p0"), IRI(f"{EX}knows"), IRI(f"{EX}p1"))])])
    engine.heartbeat("s", 400)  # windows at 200 and 400: the same row, the second reused
    assert query.unchanged_windows == 1
    store.update(f"INSERT DATA {{ GRAPH <{STORED}> {{ <{EX}p1> <{EX}likes> <{EX}p3> }} }}")
    engine.heartbeat("s", 600)
    rows = [sorted(str(z) for _, z in e.rows) for e in subscription.drain()]
    assert rows == [[f"<{EX}p2>"], [f"<{EX}p2>"], [f"<{EX}p2>", f"<{EX}p3>"]]
    assert query.unchanged_windows == 1


def test_answers_that_depend_on_more_than_the_inputs_are_always_evaluated():
    engine = StreamEngine(Store())
    state, _ = engine.declare_stream(StreamDefinition("s", IRI(f"{EX}s")))

    def reusable(select: str, where: str = "{ ?x ?p ?y }", form: str = "SELECT") -> bool:
        spec = parse_registration(f"REGISTER QUERY q AS {PREFIX}{select} {WINDOW} WHERE {where}")
        try:
            return may_reuse(spec, engine.register_parsed(spec).schedule, [state])
        finally:
            engine.unregister("q")

    assert reusable("SELECT ?x")
    assert not reusable("SELECT ?x (NOW() AS ?t)")
    assert not reusable("SELECT ?x (RAND() AS ?r)")
    assert not reusable("SELECT ?x (BNODE() AS ?b)")
    assert not reusable("CONSTRUCT { ?x ex:saw [ ex:what ?y ] }")
    assert not reusable("SELECT ?x", "{ ?x ?p ?y SERVICE <http://example.org/sparql> { ?y ?q ?z } }")
    count = parse_registration(f"REGISTER QUERY c AS {PREFIX}SELECT ?x FROM STREAM <{EX}s> [TRIPLES 5] "
                               "WHERE { ?x ?p ?y }")
    assert not may_reuse(count, engine.register_parsed(count).schedule, [state])


def test_a_log_numbers_the_rows_from_a_time_on():
    log = TransientLog()
    for ts in ([10, 10, 20], [20, 35], [50]):
        n = len(ts)
        log.append(*(np.array(column, dtype=np.int64) for column in (ts, [1] * n, [2] * n, list(range(n)))))
    assert [log.sequence_at(t) for t in (0, 10, 11, 20, 21, 35, 36, 50, 51)] == [0, 0, 2, 2, 4, 4, 5, 5, 6]
