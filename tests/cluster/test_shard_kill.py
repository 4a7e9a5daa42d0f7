"""LSBench windows over a 3-shard store on a real Ray cluster equal one
node's, window for window, and stay equal when a shard's process is killed
mid-stream: Ray restarts the actor, it recovers from its own log, the
commits that met it dead are retried, windows that met it dead wait for it,
and no acknowledged item is lost (the shards' stored graphs equal one node's,
also after every shard process is killed and the store reopened)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import ray

from benchmarks.lsbench_data import START_MS, STREAMS, generate
from benchmarks.lsbench_queries import QUERIES, RANGE_MS, STEP_MS
from engine.api import Store
from engine.cluster.coordinator import open_cluster_store
from engine.cluster.ray_shards import RayShardCalls, start_shards
from engine.loader.local_load import build_store_directory
from engine.stream import StreamDefinition, StreamEngine
from tests.cluster.local_cluster import coordinator_died
from tests.cluster.lsbench_streams import stored_nquads, stream_batches

STORED_TRIPLES = 3_000
RATES = {"poststream": 50, "postlikestream": 120, "photostream": 25, "photolikestream": 60, "gpsstream": 80}
BATCH_MS = 200
DATA_MS = 4_000
FINAL_MS = START_MS + DATA_MS + RANGE_MS + 2 * STEP_MS
#: the batch after which shard 1's process is killed
KILL_AT = 8


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[Path, Path, object]:
    """The LSBench stored graphs as a 1-shard and a 3-shard store directory."""
    root = tmp_path_factory.mktemp("lsbench")
    data = generate(STORED_TRIPLES)
    path = stored_nquads(data, root / "stored.nq")
    build_store_directory([path], root / "one", shards=1)
    build_store_directory([path], root / "three", shards=3)
    return root / "one", root / "three", data


def _run(store: Store, batches, on_batch=None) -> dict[str, list[tuple]]:
    engine = StreamEngine(store, retain_events=10_000)
    for spec in STREAMS.values():
        engine.declare_stream(StreamDefinition(spec.name, spec.iri, timing=spec.timing))
    for query in QUERIES:
        engine.register(query.registration())
    for n, (name, items) in enumerate(batches):
        engine.ingest(name, items)
        if on_batch is not None:
            on_batch(n)
    for name in STREAMS:
        engine.heartbeat(name, FINAL_MS)
    return {q.name: [(e.sequence, e.start_ms, e.end_ms, sorted(tuple(map(str, r)) for r in e.rows))
                     for e in engine.subscribe(q.name, 0).replay] for q in QUERIES}


def _contents(store: Store) -> set[tuple]:
    return {tuple(map(str, row)) for row in
            store.query("SELECT * { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }").rows()}


def test_windows_equal_one_nodes_through_a_shard_kill(ray_runtime, stored, tmp_path):
    one, three, data = stored
    batches = stream_batches(data, RATES, BATCH_MS, DATA_MS)
    reference_store = Store.open(one)
    expected = _run(reference_store, batches)
    assert sum(len(events) for events in expected.values()) > 100

    data_dir = tmp_path / "cluster"
    actors = start_shards(3, str(data_dir), str(three), sync=True, group="kill")
    calls = RayShardCalls(actors)
    try:
        store = open_cluster_store(calls, data_dir, three, sync=True, transport="tcp")
        killed = {}

        def kill(n: int) -> None:
            """Kill shard 1 after batch KILL_AT; note how long each later batch took."""
            now = time.monotonic()
            if n == KILL_AT:
                killed["pid"] = calls.info()[1]["pid"]
                ray.kill(actors[1], no_restart=False)
                killed["stall"] = 0.0
            elif n > KILL_AT:
                killed["stall"] = max(killed["stall"], now - killed["last"])
            killed["last"] = now
        got = _run(store, batches, kill)
        info = calls.info()[1]
        print(f"shard 1 killed after batch {KILL_AT} of {len(batches)} (pid {killed['pid']} -> "
              f"{info['pid']}); slowest batch after it {killed['stall']:.2f} s; recovery: {info['recovery']}")
        assert info["pid"] != killed["pid"] and info["recovery"]["replayed"] > 0
        for query in QUERIES:
            assert got[query.name] == expected[query.name], query.name
        assert store.quad_store.in_place.steps["in_place"] > 0
        assert _contents(store) == _contents(reference_store)

        # every shard process killed at once: the store reopened from the logs is the same
        for actor in actors:
            ray.kill(actor, no_restart=False)
        deadline = time.monotonic() + 60
        while True:
            try:
                calls.info()
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        coordinator_died(store)  # and the coordinator's: a new one opens the logs
        reopened = open_cluster_store(calls, data_dir, three, sync=True, transport="ray")
        assert _contents(reopened) == _contents(reference_store)
    finally:
        calls.stop()
