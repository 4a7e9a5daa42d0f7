"""Queries whose windows have different STEPs (issue 26, item 5).

SEMANTICS.md: such a query evaluates at every instant that is a close of
any of its windows, in time order, once every stream it reads has a
watermark at or past it; at that instant each window holds its latest window
closed by then, and the event carries each window's bounds. Generated
scenarios (random RANGE/STEP pairs, two streams whose watermarks move apart,
two windows on one stream, a group of queries sharing one plan, a stored
graph read as of the instant, a late registration) are checked evaluation by
evaluation against :mod:`tests.stream.window_oracle`, which runs the WHERE
clause in pyoxigraph over exactly each window's content; CityBench's two
queries with two STEPs register and answer the same way.
"""

from __future__ import annotations

import random

import pytest

from engine.api import Store
from engine.rdf import IRI
from engine.stream import StreamDefinition, StreamEngine
from tests.harness import citybench

pytest.importorskip("pyoxigraph")
from tests.stream.window_oracle import OracleQuery, OracleWindow, StreamRecord, event_answer  # noqa: E402

EX = "http://example.org/"
STATIC = EX + "static"
STEPS = (100, 150, 200, 250, 300, 400, 500, 1000)
#: a few vertices, so that joins across windows and with the stored graph match
VERTICES = 6


def iri(local: str) -> IRI:
    return IRI(EX + local)


def spans(rng: random.Random) -> tuple[int, int]:
    """A random (RANGE, STEP): mostly sliding or tumbling, sometimes sampling (RANGE < STEP)."""
    step = rng.choice(STEPS)
    return rng.choice((step, 2 * step, 3 * step, 5 * step // 2, step // 2)), step


def csparql_windows(windows: list[OracleWindow]) -> str:
    return " ".join(f"FROM STREAM <{EX}{w.stream}> [RANGE {w.range_ms}ms STEP {w.step_ms}ms]"
                    for w in windows)


def rspql_windows(windows: list[OracleWindow]) -> str:
    return " ".join(f"FROM NAMED WINDOW <{w.name}> ON <{EX}{w.stream}> "
                    f"[RANGE PT{w.range_ms / 1000}S STEP PT{w.step_ms / 1000}S]" for w in windows)


def scenario_queries(rng: random.Random, stored_of_s2) -> dict[str, tuple[str, OracleQuery]]:
    """name -> (registration, oracle) of the queries registered from the start."""
    def pair(first: str = "s1", second: str = "s2", named: bool = False) -> list[OracleWindow]:
        return [OracleWindow(stream, f"{EX}w{i}" if named else None, *spans(rng))
                for i, stream in enumerate((first, second), 1)]

    queries = {}
    windows = pair()
    where = f"{{ ?a <{EX}p> ?b . ?b <{EX}q> ?c }}"
    queries["join"] = (f"REGISTER QUERY join AS SELECT ?a ?c {csparql_windows(windows)} FROM <{STATIC}> "
                       f"WHERE {where}",
                       OracleQuery(windows, "csparql", "RSTREAM", f"SELECT ?a ?c WHERE {where}",
                                   stored=lambda t: STATIC_TRIPLES))
    windows = pair("s1", "s1")  # two windows on one stream
    select = "SELECT (COUNT(*) AS ?n)"
    queries["count"] = (f"REGISTER QUERY count AS {select} {csparql_windows(windows)} WHERE {{ ?s ?p ?o }}",
                        OracleQuery(windows, "csparql", "RSTREAM", f"{select} WHERE {{ ?s ?p ?o }}"))
    windows = pair(named=True)
    where = f"{{ WINDOW <{EX}w1> {{ ?a <{EX}p> ?b }} WINDOW <{EX}w2> {{ ?b <{EX}q> ?c }} }}"
    queries["named"] = (f"REGISTER ISTREAM named AS SELECT ?a ?b ?c {rspql_windows(windows)} WHERE {where}",
                        OracleQuery(windows, "rspql", "ISTREAM",
                                    f"SELECT ?a ?b ?c WHERE {where.replace('WINDOW', 'GRAPH')}"))
    windows = pair(named=True)[:1]  # one window beside the stored graph of s2, read as of the instant
    where = f"{{ WINDOW <{EX}w1> {{ ?a <{EX}q> ?b }} ?b <{EX}q> ?c }}"
    windows = [windows[0], OracleWindow("s2", f"{EX}w2", *spans(rng))]
    queries["as_of"] = (f"REGISTER DSTREAM as_of AS SELECT ?a ?c FROM <{EX}s2> {rspql_windows(windows)} "
                        f"WHERE {where}",
                        OracleQuery(windows, "rspql", "DSTREAM",
                                    f"SELECT ?a ?c WHERE {where.replace('WINDOW', 'GRAPH')}",
                                    stored=stored_of_s2))
    windows = pair()
    for k in (1, 2):  # the same up to a constant: one shared plan
        where = f"{{ <{EX}v{k}> <{EX}p> ?b . ?b <{EX}q> ?c }}"
        queries[f"shared{k}"] = (
            f"REGISTER QUERY shared{k} AS SELECT ?b ?c {csparql_windows(windows)} WHERE {where}",
            OracleQuery(windows, "csparql", "RSTREAM", f"SELECT ?b ?c WHERE {where}"))
    return queries


STATIC_TRIPLES = {(iri(f"v{i}"), iri("q"), iri(f"v{(i * 5) % VERTICES}")) for i in range(0, VERTICES, 2)}


def random_items(rng: random.Random, until: int) -> list[tuple[int, list]]:
    items, ts = [], rng.randrange(0, 300)
    while ts < until:
        triples = [(iri(f"v{rng.randrange(VERTICES)}"), iri(rng.choice("pq")),
                    iri(f"v{rng.randrange(VERTICES)}")) for _ in range(rng.randint(1, 3))]
        items.append((ts, triples))
        ts += rng.randrange(5, 80)
    return items


def random_posts(rng: random.Random, items: dict[str, list], end: int) -> list[tuple[str, list]]:
    """Batches of each stream in order, interleaved so that one stream's
    watermark runs ahead of the other's by up to seconds, with heartbeats
    now and then; last a heartbeat at ``end`` on each."""
    pending = {name: list(stream) for name, stream in items.items()}
    posts = []
    while any(pending.values()):
        name = rng.choice([n for n, left in pending.items() if left])
        batch = [pending[name].pop(0) for _ in range(min(len(pending[name]), rng.randint(1, 12)))]
        if rng.random() < 0.2:
            batch.append((min(batch[-1][0] + rng.randrange(0, 200), end), []))
            while pending[name] and pending[name][0][0] < batch[-1][0]:
                pending[name].pop(0)  # nothing older than a heartbeat
        posts.append((name, batch))
    return posts + [(name, [(end, [])]) for name in items]


def check_events(events, expected, query) -> None:
    assert [e.sequence for e in events] == list(range(1, len(expected) + 1))
    for event, (instant, bounds, rows) in zip(events, expected, strict=True):
        assert event.end_ms == instant and event.start_ms == min(start for start, _ in bounds)
        assert [(w.start_ms, w.end_ms) for w in event.windows] == bounds
        assert [(w.stream, w.name) for w in event.windows] == [(EX + w.stream, w.name) for w in query.windows]
        assert event.error is None
        assert event_answer(event) == rows, (event.sequence, instant)


@pytest.mark.parametrize("seed", range(8))
def test_windows_with_different_steps_equal_the_oracle(seed):
    rng = random.Random(seed)
    store = Store()
    store.add(list(STATIC_TRIPLES), graph=STATIC)
    engine = StreamEngine(store, retain_events=100_000)
    for name in ("s1", "s2", "s3", "s4"):
        engine.declare_stream(StreamDefinition(name, iri(name)))
    records = {name: StreamRecord() for name in ("s1", "s2", "s3", "s4")}

    def stored_of_s2(instant: int) -> set:  # the stored graph of s2 as of the instant: every item before it
        return {t for _, ts, triples in records["s2"].items if ts < instant for t in triples}

    queries = scenario_queries(rng, stored_of_s2)
    queues = {name: engine.register(text).subscribe() for name, (text, _) in queries.items()}
    # the late query reads copies of s1 and s2 that no other query reads: what
    # was posted before it registered is gone from the transient log
    late_windows = [OracleWindow("s3", None, *spans(rng)), OracleWindow("s4", None, *spans(rng))]
    late_where = f"{{ ?a <{EX}p> ?b . ?b <{EX}p> ?c }}"
    late_text = f"REGISTER QUERY late AS SELECT ?a ?c {csparql_windows(late_windows)} WHERE {late_where}"
    late = OracleQuery(late_windows, "csparql", "RSTREAM", f"SELECT ?a ?c WHERE {late_where}")
    end = 4_000
    items = {"s1": random_items(rng, end), "s2": random_items(rng, end)}
    posts = random_posts(rng, items, end)
    register_late_at = rng.randrange(len(posts) // 4, len(posts) // 2)
    oracles = {name: oracle for name, (_, oracle) in queries.items()}
    events = {name: [] for name in [*queries, "late"]}
    for number, (name, batch) in enumerate(posts):
        if number == register_late_at:
            late.start(records, number)
            queues["late"] = engine.register(late_text).subscribe()
            oracles["late"] = late
        for stream in (name, {"s1": "s3", "s2": "s4"}[name]):
            engine.ingest(stream, batch)
            records[stream].post(number, batch)
            data = [ts for ts, triples in batch if triples]
            for oracle in oracles.values():
                if data and any(w.stream == stream for w in oracle.windows):
                    oracle.saw_item(data[0])
        for query_name, queue in queues.items():
            events[query_name] += queue.drain()
            due = oracles[query_name].due_instants(records)
            assert len(events[query_name]) == len(due), (query_name, number)
    for name, oracle in oracles.items():
        check_events(events[name], oracle.expected(records), oracle)
    assert len(events["join"]) >= 4 and len(events["late"]) >= 2
    assert engine.queries["shared1"].shape_id == engine.queries["shared2"].shape_id


def test_a_query_with_different_steps_reports_from_the_first_instant_after_the_watermark():
    """Registered while the streams are at 1,234 and 2,000 ms: the first
    instant is the first close of either window after 1,234 (1,500, a close
    of the 500 ms window), then 2,000 (both), 2,500, 3,000 (both)..."""
    engine = StreamEngine(Store())
    for name in ("a", "b"):
        engine.declare_stream(StreamDefinition(name, iri(name)))
    engine.heartbeat("a", 1_234)
    engine.heartbeat("b", 2_000)
    queue = engine.register(f"REGISTER QUERY q AS SELECT * FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                            f"FROM STREAM <{EX}b> [RANGE 600ms STEP 500ms] WHERE {{ ?s ?p ?o }}").subscribe()
    assert engine.queries["q"].to_json()["next_window_close"] == 1_500
    engine.heartbeat("a", 3_000)
    engine.heartbeat("b", 3_000)
    events = queue.drain()
    assert [e.end_ms for e in events] == [1_500, 2_000, 2_500, 3_000]
    assert [[(w.start_ms, w.end_ms) for w in e.windows] for e in events] == [
        [(0, 1_000), (900, 1_500)], [(1_000, 2_000), (1_400, 2_000)],
        [(1_000, 2_000), (1_900, 2_500)], [(2_000, 3_000), (2_400, 3_000)]]
    assert [e.start_ms for e in events] == [0, 1_000, 1_000, 2_000]


def test_citybench_queries_with_two_steps_register_and_answer():
    """location_parking_1 and traffic_parking_1 read a parking stream with
    [RANGE 20s STEP 10s] beside a 1.5 s one, over generated data in
    CityBench's shape; every evaluation equals the oracle's."""
    if not citybench.available():
        pytest.skip("../shared/datasets/citybench is absent: CityBench's queries not run")
    rng = random.Random(26)
    store = Store()
    store.add(citybench.sensor_repository(), graph=citybench.REPOSITORY)
    engine = StreamEngine(store, retain_events=100_000)
    for stream in citybench.STREAMS:
        engine.declare_stream(StreamDefinition(stream.rsplit("#", 1)[1], IRI(stream)))
    oracles, queues = {}, {}
    for name in citybench.TWO_STEP_QUERIES:
        text = citybench.registration(name)
        queues[name] = engine.register(text).subscribe()
        windows = [OracleWindow(stream, None, range_ms, step_ms)
                   for stream, range_ms, step_ms in citybench.windows(name)]
        oracles[name] = OracleQuery(windows, "csparql", "RSTREAM", citybench.select_where(name),
                                    stored=lambda t: set(citybench.sensor_repository()))
    records = {stream: StreamRecord() for stream in citybench.STREAMS}
    for number, (stream, batch) in enumerate(citybench.observations(rng, 60_000)):
        engine.ingest(stream.rsplit("#", 1)[1], batch)
        records[stream].post(number, batch)
        for oracle in oracles.values():
            if any(w.stream == stream for w in oracle.windows) and any(t for _, t in batch):
                oracle.saw_item(next(ts for ts, t in batch if t))
    for name, queue in queues.items():
        events, expected = queue.drain(), oracles[name].expected(records)
        assert len(expected) > 40 and sum(len(rows) for *_, rows in expected) > 0, name
        assert [e.sequence for e in events] == list(range(1, len(expected) + 1)), name
        for event, (instant, bounds, rows) in zip(events, expected, strict=True):
            assert event.end_ms == instant and [(w.start_ms, w.end_ms) for w in event.windows] == bounds
            assert event_answer(event) == rows, (name, instant)
