"""Queries that differ only in constants are evaluated once per window for
all, and each still gets exactly the events it would get alone."""

from collections import Counter

from benchmarks.lsbench_data import STREAMS, StreamGenerator, generate, scaled_rates
from benchmarks.lsbench_queries import STEP_MS
from benchmarks.shared_queries import load_store, shared_queries
from engine.sparql.syntax import parse_registration
from engine.stream import StreamDefinition, StreamEngine, shared_plan
from engine.stream.shared_shape import shared_shape

PREFIX = "PREFIX ex: <http://example.org/>\n"


def registration(name: str, where: str, select: str = "SELECT ?x", extra: str = "") -> str:
    return (f"REGISTER QUERY {name} AS {PREFIX}{select} FROM STREAM <http://example.org/s> "
            f"[RANGE 1s STEP 100ms] {extra} WHERE {where}")


def shape(text: str):
    return shared_shape(parse_registration(text))


def test_queries_that_differ_in_constants_have_one_shape():
    a = shape(registration("a", "{ ?x ex:knows ex:alice . ?x ex:likes ?y }"))
    b = shape(registration("b", "{ ?x ex:knows ex:bob . ?x ex:likes ?y }"))
    assert a is not None and a.key == b.key
    assert [c.value for c in a.constants] == ["http://example.org/alice"]


def test_a_constant_used_twice_is_one_placeholder_and_differs_from_two_constants():
    same = shape(registration("a", "{ ex:alice ex:knows ?x . ?x ex:knows ex:alice }"))
    two = shape(registration("b", "{ ex:alice ex:knows ?x . ?x ex:knows ex:bob }"))
    assert len(same.constants) == 1 and len(two.constants) == 2
    assert same.key != two.key


def test_other_shapes_are_evaluated_alone():
    assert shape(registration("a", "{ ?x ex:knows ?y }")) is None  # no constant to share
    assert shape(registration("b", "{ ?x ex:knows ex:alice FILTER (?x != ex:bob) }")) is None
    assert shape(registration("c", "{ ?x ex:knows ex:alice }", select="SELECT (COUNT(*) AS ?n)")) is None
    assert shape(registration("d", "{ ?x ex:knows ex:alice }", extra="FROM <http://example.org/g>")).key != \
        shape(registration("e", "{ ?x ex:knows ex:alice }")).key


def replay(queries, data, steps: int, share: bool) -> dict[str, list[tuple]]:
    """Every query's events (window end, rows as a multiset): all registered
    on one engine, or each on an engine of its own."""
    if share:
        engine = StreamEngine(load_store(data))
        engines = {q.name: engine for q in queries}
    else:
        engines = {q.name: StreamEngine(load_store(data)) for q in queries}
    for engine in set(engines.values()):
        for spec in STREAMS.values():
            engine.declare_stream(StreamDefinition(spec.name, spec.iri, timing=spec.timing))
    subscriptions = {q.name: engines[q.name].register(q.registration()).subscribe() for q in queries}
    generator = StreamGenerator(data, scaled_rates(0.05), 3)
    for _ in range(steps):
        close = generator.now + STEP_MS
        items = generator.advance(close)["poststream"]
        for engine in set(engines.values()):
            if items:
                engine.ingest("poststream", items)
            engine.heartbeat("poststream", close)
    return {name: [(e.end_ms, Counter(e.rows)) for e in sub.drain()] for name, sub in subscriptions.items()}


def test_a_group_reports_what_each_query_reports_alone(monkeypatch):
    data = generate(5000)
    queries = shared_queries(data, 6)
    groups = []
    original = shared_plan.evaluate_group

    def counting(group, *args):
        groups.append(len(group))
        return original(group, *args)

    monkeypatch.setattr("engine.stream.stream_engine.evaluate_group", counting)
    shared = replay(queries, data, steps=25, share=True)
    assert groups and max(groups) == 3  # three L2 and three L3 shapes, each evaluated as a group
    alone = replay(queries, data, steps=25, share=False)
    assert shared == alone
    assert sum(len(rows) for events in shared.values() for _, rows in events) > 0


def test_a_query_left_alone_by_its_group_goes_on_incrementally_with_the_right_rows():
    """Group evaluations keep no RSTREAM result (the next window alone is
    evaluated in full): a query whose peers go evaluates incrementally from
    there, and reports what it reports when it was alone all along."""
    data = generate(5000)
    queries = shared_queries(data, 6)
    survivor = queries[1]  # L3-shaped: evaluated incrementally once alone
    engine = StreamEngine(load_store(data))
    for spec in STREAMS.values():
        engine.declare_stream(StreamDefinition(spec.name, spec.iri, timing=spec.timing))
    running = {q.name: engine.register(q.registration()) for q in queries}
    subscription = running[survivor.name].subscribe()
    generator = StreamGenerator(data, scaled_rates(0.05), 3)
    for step in range(30):
        if step == 12:
            for q in queries:
                if q.name != survivor.name:
                    engine.unregister(q.name)
        close = generator.now + STEP_MS
        items = generator.advance(close)["poststream"]
        if items:
            engine.ingest("poststream", items)
        engine.heartbeat("poststream", close)
    together = [(e.end_ms, Counter(e.rows)) for e in subscription.drain()]
    assert running[survivor.name].incremental.costs.delta_windows > 0
    assert together == replay([survivor], data, steps=30, share=False)[survivor.name]
    assert sum(len(rows) for _, rows in together[12:]) > 0
