"""The stream engine against SEMANTICS.md, one rule per test."""

import time

import pytest

from engine.api import Store
from engine.rdf import IRI, Literal
from engine.stream import StreamDefinition, StreamEngine, Subscription
from engine.stream.errors import BadRegistration, DuplicateName, LateItem, TooManyWindows, UnknownStream

EX = "http://example.org/"


def iri(local: str) -> IRI:
    return IRI(EX + local)


def triple(s: str, p: str, o) -> tuple:
    return iri(s), iri(p), o if not isinstance(o, str) else iri(o)


def subscribe(engine, text) -> Subscription:
    """Register a query and subscribe to it; the test drains its events."""
    return engine.register(text).subscribe()


def rows(event):
    return sorted(tuple(t.value if isinstance(t, IRI) else t.lexical for t in row) for row in event.rows)


def test_item_at_the_close_belongs_to_the_next_window(engine):
    queue = subscribe(engine, f"REGISTER QUERY q AS SELECT ?s FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                              "WHERE { ?s ?p ?o }")
    engine.ingest("a", [(500, [triple("x", "name", Literal("x"))])])
    engine.ingest("a", [(1000, [triple("y", "name", Literal("y"))])])
    engine.heartbeat("a", 2000)
    events = queue.drain()
    assert [(e.start_ms, e.end_ms) for e in events] == [(0, 1000), (1000, 2000)]
    assert rows(events[0]) == [(EX + "x",)]
    assert rows(events[1]) == [(EX + "y",)]


def test_empty_windows_are_reported_and_none_is_skipped(engine):
    queue = subscribe(engine, f"REGISTER QUERY q AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}a> "
                              "[RANGE 1s STEP 1s] WHERE { ?s ?p ?o }")
    engine.ingest("a", [(100, [triple("x", "name", Literal("x"))])])
    engine.heartbeat("a", 5000)
    events = queue.drain()
    assert [e.sequence for e in events] == [1, 2, 3, 4, 5]
    assert [e.rows[0][0].lexical for e in events] == ["1", "0", "0", "0", "0"]


def test_late_items_are_rejected_and_change_nothing(engine):
    engine.ingest("a", [(1000, [triple("x", "name", Literal("x"))])])
    with pytest.raises(LateItem, match="999"):
        engine.ingest("a", [(1500, [triple("y", "name", Literal("y"))]), (999, [])])
    assert engine.stream("a").watermark == 1000
    assert engine.stream("a").triples == 1


def test_a_multi_stream_query_waits_for_every_stream(engine):
    queue = subscribe(engine, f"REGISTER QUERY q AS SELECT ?s ?o FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                              f"FROM STREAM <{EX}b> [RANGE 1s STEP 1s] "
                              f"WHERE {{ ?s <{EX}knows> ?x . ?x <{EX}name> ?o }}")
    engine.ingest("a", [(100, [triple("x", "knows", "y")])])
    engine.heartbeat("a", 3000)
    events = queue.drain()
    assert events == []
    engine.ingest("b", [(200, [triple("y", "name", Literal("Y"))])])
    engine.heartbeat("b", 1000)
    events += queue.drain()
    assert len(events) == 1 and rows(events[0]) == [(EX + "x", "Y")]


def test_stored_data_is_read_as_of_the_window_close(engine):
    """Window [0,1000) must not see what stream b absorbed at 1500, even though
    it was ingested before the window fired."""
    store = engine.store
    queue = subscribe(engine, f"REGISTER QUERY q AS SELECT ?who FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                              f"FROM STREAM <{EX}b> [RANGE 1s STEP 1s] FROM <{EX}b> "
                              f"WHERE {{ ?who <{EX}temp> ?t . ?who <{EX}name> ?n }}")
    engine.ingest("a", [(100, [triple("x", "temp", Literal("20"))])])
    engine.ingest("b", [(1500, [triple("x", "name", Literal("X"))])])  # absorbed into graph <b>
    engine.heartbeat("a", 2000)
    events = queue.drain()
    assert rows(events[0]) == []  # window 1: the name arrived later (as of 1000)
    assert len(store.query(f"SELECT * WHERE {{ GRAPH <{EX}b> {{ ?s ?p ?o }} }}")) == 1


def test_timing_triples_are_not_stored_and_expire(engine):
    engine.register(f"REGISTER QUERY q AS SELECT * FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                    "WHERE { ?s ?p ?o }")
    for t in range(0, 5000, 100):
        engine.ingest("a", [(t, [triple("x", "temp", Literal(str(t))), triple("x", "name", Literal("x"))])])
    # only the timeless name is stored; the readings of old windows are freed
    assert len(engine.store.query(f"SELECT * WHERE {{ GRAPH <{EX}a> {{ ?s ?p ?o }} }}")) == 1
    assert len(engine.stream("a").log) <= 2 * 20


def test_istream_and_dstream(engine):
    body = (f"AS SELECT ?s FROM NAMED WINDOW <{EX}w> ON <{EX}a> [RANGE PT2S STEP PT1S] "
            f"WHERE {{ WINDOW <{EX}w> {{ ?s <{EX}name> ?n }} }}")
    inserted_queue = subscribe(engine, "REGISTER ISTREAM qi " + body)
    deleted_queue = subscribe(engine, "REGISTER DSTREAM qd " + body)
    engine.ingest("a", [(100, [triple("x", "name", Literal("x"))])])
    engine.ingest("a", [(1100, [triple("y", "name", Literal("y"))])])
    engine.heartbeat("a", 3000)
    inserted = inserted_queue.drain()
    assert [rows(e) for e in inserted] == [[(EX + "x",)], [(EX + "y",)], []]
    deleted = deleted_queue.drain()
    assert [rows(e) for e in deleted] == [[], [], [(EX + "x",)]]


def test_rspql_joins_a_window_with_the_stored_default_graph(engine):
    engine.store.update(f"INSERT DATA {{ <{EX}x> <{EX}city> \"Oslo\" }}")
    queue = subscribe(engine, f"REGISTER RSTREAM q AS SELECT ?s ?c FROM NAMED WINDOW <{EX}w> ON <{EX}a> "
                              f"[RANGE PT1S STEP PT1S] WHERE {{ WINDOW <{EX}w> {{ ?s <{EX}temp> ?t }} "
                              f"?s <{EX}city> ?c }}")
    engine.ingest("a", [(10, [triple("x", "temp", Literal("5"))])])
    engine.heartbeat("a", 1000)
    events = queue.drain()
    assert rows(events[0]) == [(EX + "x", "Oslo")]


def test_register_stream_output_feeds_another_query(engine):
    engine.register(f"REGISTER STREAM <{EX}hot> AS CONSTRUCT {{ ?s <{EX}hot> true }} "
                    f"FROM STREAM <{EX}a> [RANGE 1s STEP 1s] WHERE {{ ?s <{EX}temp> ?t FILTER(?t > 30) }}")
    queue = subscribe(engine, f"REGISTER QUERY alarms AS SELECT ?s FROM STREAM <{EX}hot> [RANGE 1s STEP 1s] "
                              f"WHERE {{ ?s <{EX}hot> true }}")
    hot = Literal("35", "http://www.w3.org/2001/XMLSchema#integer")
    engine.ingest("a", [(10, [triple("x", "temp", hot)])])
    engine.heartbeat("a", 1000)  # the output item is at 1000: the alarm window closing at 2000 holds it
    engine.heartbeat("a", 2000)
    events = queue.drain()
    assert [rows(e) for e in events] == [[(EX + "x",)]]


def test_count_windows_tumble_every_n_triples(engine):
    queue = subscribe(engine, f"REGISTER QUERY q AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}b> [TRIPLES 3] "
                              "WHERE { ?s ?p ?o }")
    for t in range(7):
        engine.ingest("b", [(t, [triple(f"s{t}", "p", "o")])])
    events = queue.drain()
    assert [e.rows[0][0].lexical for e in events] == ["3", "3"]


def test_f_timestamp(engine):
    queue = subscribe(engine, f"PREFIX f: <http://larkc.eu/csparql/sparql/jena/ext#> "
                              f"REGISTER QUERY q AS SELECT ?s (f:timestamp(?s, <{EX}name>, ?n) AS ?ts) "
                              f"FROM STREAM <{EX}b> [RANGE 1s STEP 1s] WHERE {{ ?s <{EX}name> ?n }}")
    engine.ingest("b", [(250, [triple("x", "name", Literal("x"))])])
    engine.ingest("b", [(600, [triple("y", "name", Literal("y"))]),
                        (700, [triple("x", "name", Literal("x"))])])
    engine.heartbeat("b", 1000)
    events = queue.drain()
    assert rows(events[0]) == [(EX + "x", "700"), (EX + "y", "600")]  # the latest occurrence


def test_registration_errors(engine):
    with pytest.raises(UnknownStream):
        engine.register("REGISTER QUERY q AS SELECT * FROM STREAM <http://nope> [RANGE 1s STEP 1s] "
                        "WHERE { ?s ?p ?o }")
    with pytest.raises(BadRegistration, match="TRIPLES"):  # different STEPs are fine, a count beside time not
        engine.register(f"REGISTER QUERY q AS SELECT * FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                        f"FROM STREAM <{EX}b> [TRIPLES 5] WHERE {{ ?s ?p ?o }}")
    engine.register(f"REGISTER QUERY q AS SELECT * FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                    "WHERE { ?s ?p ?o }")
    with pytest.raises(DuplicateName):
        engine.register(f"REGISTER QUERY q AS SELECT * FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                        "WHERE { ?s ?p ?o }")


def test_idle_streams_follow_the_wall_clock():
    engine = StreamEngine(Store())
    engine.declare_stream(StreamDefinition("idle", iri("idle"), idle="wallclock", idle_lag_ms=0))
    try:
        deadline = time.monotonic() + 5
        while engine.stream("idle").watermark is None and time.monotonic() < deadline:
            time.sleep(0.02)
        mark = engine.stream("idle").watermark
        assert mark is not None and abs(mark - time.time() * 1000) < 5000
    finally:
        engine.close()


def test_terms_only_timing_data_uses_are_freed_with_their_window(engine):
    """A new observation IRI and value per reading must not grow the dictionary forever."""
    engine.register(f"REGISTER QUERY q AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                    "WHERE { ?s ?p ?o }")
    terms = engine.store.terms
    sizes = []
    for t in range(0, 20_000, 100):
        readings = [triple(f"obs{t}-{i}", "temp", Literal(f"{t}.{i}")) for i in range(10)]
        engine.ingest("a", [(t, readings)])
        sizes.append(len(terms))
    # at most one window of readings (10 per 100 ms, two new terms each) stays alive:
    # after 20 s the dictionary is no bigger than after the first 3 s
    assert max(sizes[100:]) <= max(sizes[:30]) < 300
    # a term still in a live window is not visible to one-shot queries as a stored term
    last = engine.store.query(f"ASK {{ <{EX}obs19900-0> ?p ?o }}")
    assert last.boolean is False


def test_terms_repeated_in_consecutive_batches_are_freed_with_their_window(engine):
    """A reading's IRI named again in the next batch (a late correction, a
    second property): the log merges the small batches into one chunk, and
    the chunk's release must drop every reference the batches took."""
    engine.register(f"REGISTER QUERY q AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                    "WHERE { ?s ?p ?o }")
    terms = engine.store.terms
    sizes = []
    for t in range(0, 20_000, 100):
        k = t // 100
        readings = [triple(f"obs{k}", "temp", Literal(f"{k}.5")),
                    triple(f"obs{k - 1}", "temp", Literal(f"{k - 1}.25"))]
        engine.ingest("a", [(t, readings)])
        sizes.append(len(terms))
    assert max(sizes[100:]) <= max(sizes[:30]) < 300
    assert engine.store.terms.lookup(iri("obs3")) == 0  # long out of every window: freed


def test_a_term_used_by_stored_data_survives_its_window(engine):
    engine.register(f"REGISTER QUERY q AS SELECT * FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                    "WHERE { ?s ?p ?o }")
    reading, name = triple("sensor9", "temp", Literal("1.5")), triple("sensor9", "name", Literal("s9"))
    engine.ingest("a", [(0, [reading, name])])
    engine.heartbeat("a", 10_000)
    assert engine.store.query(f"ASK {{ GRAPH <{EX}a> {{ <{EX}sensor9> <{EX}name> \"s9\" }} }}").boolean
    assert engine.store.terms.lookup(Literal("1.5")) == 0  # the reading's value is gone


def test_a_timestamp_that_would_close_too_many_windows_is_refused(engine):
    queue = subscribe(engine, f"REGISTER QUERY q AS SELECT * FROM STREAM <{EX}a> [RANGE 1s STEP 100ms] "
                              "WHERE { ?s ?p ?o }")
    engine.ingest("a", [(0, [triple("x", "name", Literal("x"))])])
    with pytest.raises(TooManyWindows, match="1700000000000"):
        engine.heartbeat("a", 1_700_000_000_000)  # a clock in ms after stream time from 0
    events = queue.drain()
    assert engine.stream("a").watermark == 0 and events == []
    engine.heartbeat("a", 1000)
    events += queue.drain()
    assert len(events) == 10


def test_istream_applies_to_construct_too(engine):
    queue = subscribe(engine, f"REGISTER ISTREAM <{EX}out> AS CONSTRUCT {{ ?s <{EX}seen> true }} "
                              f"FROM NAMED WINDOW <{EX}w> ON <{EX}a> [RANGE PT2S STEP PT1S] "
                              f"WHERE {{ WINDOW <{EX}w> {{ ?s <{EX}name> ?n }} }}")
    engine.ingest("a", [(100, [triple("x", "name", Literal("x"))])])
    engine.heartbeat("a", 3000)
    events = queue.drain()
    assert [len(e.triples) for e in events] == [1, 0, 0]


def test_an_update_keeps_the_snapshot_of_pending_windows(engine):
    """An INSERT into a stream's stored graph must not lose the timestamps
    that keep later stream data out of earlier windows."""
    queue = subscribe(engine, f"REGISTER QUERY q AS SELECT ?s FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                              f"FROM STREAM <{EX}b> [RANGE 1s STEP 1s] FROM <{EX}a> "
                              f"WHERE {{ ?s <{EX}name> ?n }}")
    engine.ingest("b", [(10, [triple("b1", "other", "x")])])
    engine.ingest("a", [(5000, [triple("late", "name", Literal("late"))])])
    engine.store.update(f"INSERT DATA {{ GRAPH <{EX}a> {{ <{EX}u> <{EX}other> 1 }} }}")
    engine.heartbeat("b", 1000)
    events = queue.drain()
    assert rows(events[0]) == []
    assert engine.store.query(f"ASK {{ GRAPH <{EX}a> {{ <{EX}u> <{EX}other> 1 }} }}").boolean


def test_datetime_timestamps_are_exact_milliseconds():
    from engine.stream import parse_timestamp

    assert parse_timestamp("1987-03-12T00:11:34.550Z") == 542506294550
    assert parse_timestamp("2023-11-14T22:13:20") == 1700000000000
