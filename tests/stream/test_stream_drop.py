"""Dropping a stream (issue 26, item 6), in the engine: refused while a query
reads it or writes into it; its transient data and the terms only that data
used are freed; its stored graph stays; the name may be declared again, as a
new stream whose deltas never share the old one's number. The rules are run
again over a cluster's shards (tests/cluster/test_sharded_stream_drop.py);
the log, the catalog and the HTTP API are tested in tests/durability and
tests/endpoint/test_stream_drop_http.py."""

from __future__ import annotations

import pytest

from engine.rdf import IRI, Literal
from engine.stream import StreamDefinition, StreamEngine
from engine.stream.errors import StreamError, UnknownStream

EX = "http://example.org/"


def iri(local: str) -> IRI:
    return IRI(EX + local)


def readings(start: int, count: int, tag: str, step: int = 100) -> list:
    """``count`` items, each a timing reading and a timeless fact with terms of their own."""
    return [(start + k * step, [(iri(f"{tag}/sensor{k}"), iri("temp"), Literal(f"{tag}-{k}")),
                                (iri(f"{tag}/sensor{k}"), iri("on"), iri(f"{tag}/river{k % 3}"))])
            for k in range(count)]


def counting(name: str, stream: str) -> str:
    return (f"REGISTER QUERY {name} AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}{stream}> "
            "[RANGE 1s STEP 1s] WHERE { ?s ?p ?o }")


def in_use(call) -> str:
    with pytest.raises(StreamError) as refused:
        call()
    assert refused.value.status == 409
    return str(refused.value)


def graph_rows(engine: StreamEngine, graph: str) -> set[tuple[str, str, str]]:
    rows = engine.store.query(f"SELECT ?s ?p ?o {{ GRAPH <{EX}{graph}> {{ ?s ?p ?o }} }}").rows()
    return {tuple(str(t) for t in row) for row in rows}


def test_a_dropped_stream_is_gone_and_what_it_absorbed_stays(engine):
    engine.ingest("a", readings(1000, 4, "x"))
    absorbed = graph_rows(engine, "a")
    assert len(absorbed) == 4  # the timeless facts; the readings were timing
    engine.drop_stream("a")
    assert "a" not in engine.streams
    for call in (lambda: engine.stream("a"), lambda: engine.ingest("a", readings(5000, 1, "y")),
                 lambda: engine.heartbeat("a", 9000), lambda: engine.drop_stream("a")):
        with pytest.raises(UnknownStream):
            call()
    with pytest.raises(UnknownStream):
        engine.register(counting("q", "a"))
    assert graph_rows(engine, "a") == absorbed
    assert "b" in engine.streams


def test_a_stream_a_query_reads_cannot_be_dropped_until_the_query_is_unregistered(engine):
    queue = engine.register(counting("q", "a")).subscribe()
    engine.ingest("a", readings(500, 3, "x"))
    message = in_use(lambda: engine.drop_stream("a"))
    assert "'q'" in message and "unregister" in message
    # nothing changed: the stream goes on, the query fires
    engine.heartbeat("a", 2000)
    assert [e.rows[0][0].lexical for e in queue.drain()] == ["6", "0"]
    engine.unregister("q")
    engine.drop_stream("a")
    assert "a" not in engine.streams


def test_an_output_stream_cannot_be_dropped_while_its_query_writes_into_it_and_stays_after(engine):
    engine.register(f"REGISTER STREAM <{EX}out> AS CONSTRUCT {{ ?s ?p ?o }} FROM STREAM <{EX}a> "
                    "[RANGE 1s STEP 1s] WHERE { ?s ?p ?o }")
    (out,) = [name for name, s in engine.streams.items() if s.definition.iri == iri("out")]
    (producer,) = engine.queries
    assert repr(producer) in in_use(lambda: engine.drop_stream(out))
    engine.ingest("a", readings(500, 2, "x"))
    engine.heartbeat("a", 1000)
    engine.unregister(producer)
    assert out in engine.streams  # kept: other queries may read it, and its graph holds the output
    assert engine.stream(out).watermark == 1000
    engine.drop_stream(out)
    assert len(graph_rows(engine, "out")) == 4


def test_a_name_declared_again_after_a_drop_is_a_new_stream(engine):
    engine.ingest("b", readings(50_000, 3, "old"))
    old = engine.stream("b")
    engine.drop_stream("b")
    state, created = engine.declare_stream(StreamDefinition("b", iri("b")))
    assert created and state is not old
    assert (state.watermark, state.items, state.triples, state.log.total) == (None, 0, 0, 0)
    assert state.number not in {s.number for s in (old, engine.stream("a"))}
    # an earlier timestamp than the old stream's watermark is not late for the new stream
    queue = engine.register(counting("q", "b")).subscribe()
    engine.ingest("b", readings(100, 2, "new"))
    engine.heartbeat("b", 1000)
    assert [e.rows[0][0].lexical for e in queue.drain()] == ["4"]
    assert len(graph_rows(engine, "b")) == 6 + 4  # the old stream's and the new one's


def test_the_new_streams_as_of_reads_do_not_cut_the_old_streams_deltas(engine):
    """A query FROM the graph both streams of one name absorb into: the new
    stream's windows read the store as of their close, which cuts only the
    new stream's deltas (its own number), never the old one's."""
    engine.ingest("b", readings(50_000, 3, "old"))
    engine.drop_stream("b")
    engine.declare_stream(StreamDefinition("b", iri("b")))
    queue = engine.register(f"REGISTER QUERY q AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}b> "
                            f"[RANGE 1s STEP 1s] FROM <{EX}b> WHERE {{ ?s <{EX}on> ?o }}").subscribe()
    engine.ingest("b", readings(100, 2, "new") + readings(1500, 2, "later"))
    engine.heartbeat("b", 3000)
    counts = [e.rows[0][0].lexical for e in queue.drain()]
    # window [0, 1000): the old stream's three facts (at 50,000 ms, but another stream's: not cut)
    # and the new stream's two before 1000 ms, not the two after
    assert counts[:2] == [str(3 + 2), str(3 + 4)]


def test_dropping_frees_the_streams_transient_data_and_the_terms_only_it_used(engine):
    terms = engine.store.terms
    engine.register(counting("q", "a"))
    engine.ingest("a", readings(500, 2, "warm"))
    engine.unregister("q")
    engine.drop_stream("a")
    engine.declare_stream(StreamDefinition("a", iri("a"), timing=frozenset({EX + "temp"})))
    baseline = len(terms)
    for cycle in range(3):
        engine.register(counting("q", "a"))
        engine.ingest("a", [(10_000 * (cycle + 1) + k, [(iri("s"), iri("temp"), Literal(f"c{cycle}-{k}"))])
                            for k in range(50)])
        assert len(engine.stream("a").log) == 50
        engine.unregister("q")
        engine.drop_stream("a")
        engine.declare_stream(StreamDefinition("a", iri("a"), timing=frozenset({EX + "temp"})))
        assert len(engine.stream("a").log) == 0
        assert len(terms) == baseline, "the readings' terms (only timing data used them) were not freed"
