"""As-of reads on three shards: streams absorbing into one graph (repeated
triples across streams, large and small posts, deletes and inserts) give
the oracle's windows, through one shard's checkpoint and its restart from
it (its deltas keep their timestamps, and the copies of their triples that
other streams absorbed). The scenarios are ``tests/stream/as_of_scenarios.py``'s.
"""

from __future__ import annotations

import pytest

from engine.rdf import IRI
from engine.stream import StreamDefinition, StreamEngine
from tests.cluster.local_cluster import local_cluster_store, shard_server
from tests.stream.as_of_scenarios import EX, G, generate, run_checked, terms

pytest.importorskip("pyoxigraph")


@pytest.mark.parametrize("seed,large", [(400, 1), (401, 0), (402, 0)])
def test_sharded_windows_read_the_graph_as_of_their_close_through_a_shard_restart(tmp_path, seed, large):
    scenario = generate(seed, large=large)
    store, calls = local_cluster_store(tmp_path)
    store.add(terms(scenario.loaded), graph=G)
    engine = StreamEngine(store)
    for definition in scenario.definitions():
        engine.declare_stream(definition)
    for text in scenario.queries().values():
        engine.register(text)
    steps = len(scenario.steps)
    seen = {}

    def disturb(index: int) -> bool:
        if index == steps // 3:
            calls.servers[1].checkpoint()
        elif index == 2 * steps // 3:
            calls.servers[1].close()
            calls.servers[1] = shard_server(tmp_path, 1)
            seen["recovery"] = calls.servers[1].recovery
        return False

    run_checked(scenario, lambda: engine, lambda: store, disturb)
    assert seen["recovery"]["checkpoint"] > 0
    store.quad_store.close()


def test_a_shard_checkpoint_keeps_the_copies_other_streams_absorbed(tmp_path):
    """Issue 26's case, with every shard checkpointed and restarted between
    B's copy of x1 (at 1500, after A's at 10000) and the close at 2000."""
    store, calls = local_cluster_store(tmp_path)
    engine = StreamEngine(store)
    for name in ("A", "B"):
        engine.declare_stream(StreamDefinition(name, IRI(EX + name), graph=IRI(G)))
    queue = engine.register(
        f"REGISTER RSTREAM q AS SELECT ?x ?y FROM <{G}> FROM NAMED WINDOW <{EX}wa> ON <{EX}A> "
        f"[RANGE PT1S STEP PT1S] FROM NAMED WINDOW <{EX}wb> ON <{EX}B> [RANGE PT1S STEP PT1S] "
        f"WHERE {{ ?x <{EX}rel> ?y }}").subscribe()
    engine.ingest("B", [(1000, [rel(0)])])
    engine.ingest("A", [(10000, [rel(1)])])
    engine.ingest("B", [(1500, [rel(1)])])
    for k, server in enumerate(calls.servers):
        server.checkpoint()
        server.close()
        calls.servers[k] = shard_server(tmp_path, k)
    engine.heartbeat("B", 2000)
    events = queue.drain()
    assert [sorted((x.value, y.value) for x, y in e.rows) for e in events] == [
        [(EX + "x0", EX + "y0"), (EX + "x1", EX + "y1")]]
    store.quad_store.close()


def rel(i: int) -> tuple[IRI, IRI, IRI]:
    return IRI(f"{EX}x{i}"), IRI(f"{EX}rel"), IRI(f"{EX}y{i}")
