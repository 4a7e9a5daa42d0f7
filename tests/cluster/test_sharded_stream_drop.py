"""Dropping a stream (``tests/stream/test_stream_drop.py``) again over a store
on three shards, and what is particular to them: the shards free their
shares of the dropped stream's rows at once (no later batch of that stream
would carry the expiry), and a stream declared again under the name logs
its rows under a number of its own."""

from __future__ import annotations

import pytest

from engine.stream import StreamDefinition, StreamEngine
from tests.cluster.local_cluster import local_cluster_store
from tests.stream.test_stream_drop import *  # noqa: F403 (the rules, collected here with this engine)
from tests.stream.test_stream_drop import EX, counting, iri, readings


@pytest.fixture
def cluster(tmp_path):
    store, calls = local_cluster_store(tmp_path)
    engine = StreamEngine(store)
    engine.declare_stream(StreamDefinition("a", iri("a"), timing=frozenset({EX + "temp"})))
    engine.declare_stream(StreamDefinition("b", iri("b")))
    yield engine, calls
    engine.close()
    store.quad_store.close()


@pytest.fixture
def engine(cluster):
    return cluster[0]


def shard_rows(calls, stream: int) -> int:
    return sum(len(log) for server in calls.servers
               for (number, _role), log in server.state.streams.logs.items() if number == stream)


def test_the_shards_free_a_dropped_streams_rows_at_once(cluster):
    engine, calls = cluster
    engine.register(counting("q", "a"))
    engine.ingest("a", readings(500, 6, "x"))
    number = engine.stream("a").number
    assert shard_rows(calls, number) == 2 * 12  # every row in both roles
    engine.unregister("q")
    assert shard_rows(calls, number) == 2 * 12  # the expiry waits for the stream's next batch...
    engine.drop_stream("a")
    assert shard_rows(calls, number) == 0  # ...which a dropped stream never has
    assert not any(key[0] == number for server in calls.servers for key in server.state.streams.logs)
    engine.declare_stream(StreamDefinition("a", iri("a"), timing=frozenset({EX + "temp"})))
    engine.register(counting("q", "a"))
    engine.ingest("a", readings(100, 2, "y"))
    assert engine.stream("a").number != number
    assert shard_rows(calls, engine.stream("a").number) == 2 * 4


def test_a_drop_the_shards_cannot_take_now_is_done_and_says_so(cluster, caplog):
    """A store that refuses writes (a commit some shard never took) cannot
    send the expiry: the stream is dropped all the same (the drop is logged
    before), and its rows go when the coordinator restarts."""
    engine, calls = cluster
    engine.ingest("a", readings(500, 2, "x"))
    engine.store.quad_store._stuck = "commit 9 did not reach every shard"
    engine.drop_stream("a")
    assert "a" not in engine.streams
    assert "until the coordinator restarts: commit 9 did not reach every shard" in caplog.text
