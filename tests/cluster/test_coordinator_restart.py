"""A cluster's coordinator that dies keeps its streams and continuous queries:
a new one over the same shards (and, the second time, over new shard
processes too) recovers them from its data directory and every window comes
out as one node's, numbered as if nothing had happened."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.lsbench_data import STREAMS, generate
from benchmarks.lsbench_queries import QUERIES, RANGE_MS, STEP_MS
from engine.api import Store
from engine.cluster.coordinator_log import CoordinatorLog
from engine.cluster.shard_calls import LocalShardCalls
from engine.cluster.sharded_store import ShardedQuadStore
from engine.durability import DataDirectory
from engine.rdf import format_term
from engine.store.compact_dictionary import CompactTermDictionary
from engine.stream import StreamDefinition, StreamEngine
from tests.cluster.local_cluster import SHARDS, coordinator_died, shard_server
from tests.cluster.lsbench_streams import stored_nquads, stream_batches

RATES = {"poststream": 40, "postlikestream": 100, "photostream": 20, "photolikestream": 50, "gpsstream": 60}
BATCH_MS = 200
DATA_MS = 4_000
#: batches after which the coordinator dies: the first time its streams were checkpointed before
FIRST_DEATH, SECOND_DEATH = 40, 75
CHECKPOINT_AT = 25
EX = "http://example.org/cluster/"
#: a query over timing data only, beside L1-L6 (its rows are in no stored graph)
GPS = (f"REGISTER QUERY gps AS SELECT ?user (COUNT(*) AS ?n) "
       f"FROM STREAM <{STREAMS['gpsstream'].iri.value}> [RANGE 1s STEP 100ms] "
       "WHERE { ?user <http://www.ins.cwi.nl/sib/vocabulary/gps_latitude> ?lat } GROUP BY ?user")


POSTS = STREAMS["poststream"].iri.value


@pytest.fixture(scope="module")
def lsbench(tmp_path_factory) -> tuple[Path, list]:
    data = generate(3_000)
    path = stored_nquads(data, tmp_path_factory.mktemp("lsbench") / "stored.nq")
    return path, stream_batches(data, RATES, BATCH_MS, DATA_MS)


def _names(engine: StreamEngine) -> list[str]:
    return sorted(engine.queries)


def _events(engine: StreamEngine) -> dict[str, list[tuple]]:
    return {name: [(e.sequence, e.start_ms, e.end_ms, sorted(tuple(map(str, r)) for r in e.rows))
                   for e in engine.subscribe(name, 0).replay] for name in _names(engine)}


def _declare_and_register(engine: StreamEngine) -> None:
    for spec in STREAMS.values():
        engine.declare_stream(StreamDefinition(spec.name, spec.iri, timing=spec.timing))
    for query in QUERIES:
        engine.register(query.registration())
    engine.register(GPS)


def _finish(engine: StreamEngine, batches: list) -> None:
    for name, items in batches:
        engine.ingest(name, items)
    final = batches[-1][1][-1][0] + RANGE_MS + 2 * STEP_MS
    for name in STREAMS:
        engine.heartbeat(name, final)


def _died(data: DataDirectory) -> None:
    """The coordinator's process is killed: its files stay, its locks go."""
    data.lock.release()
    coordinator_died(data.store)


def _coordinator(directory: Path, servers: list) -> DataDirectory:
    """A coordinator (store and stream engine) over ``servers``, recovered from ``directory``."""
    terms = CompactTermDictionary()
    log = CoordinatorLog(directory / "coordinator", terms, 0, sync=False)
    store = Store(quad_store=ShardedQuadStore(terms, LocalShardCalls(servers), log))
    return DataDirectory.open(directory / "streams", sync=False, store=store,
                              engine_options={"retain_events": 10_000})


def test_streams_and_queries_outlive_their_coordinator(lsbench, tmp_path):
    path, batches = lsbench
    # a post streamed after the stream checkpoint, deleted before the coordinator dies
    after = next(n for n, (name, items) in enumerate(batches)
                 if n > CHECKPOINT_AT and name == "poststream" and len(items) > 1)
    post = batches[after][1][0][1][0]
    deleted = " ".join(format_term(term) for term in post)
    reference_store = Store()
    reference_store.load(path)
    reference = StreamEngine(reference_store, retain_events=10_000)
    _declare_and_register(reference)
    _finish(reference, batches)
    expected = _events(reference)
    assert all(any(rows for *_, rows in events) for events in expected.values())

    servers = [shard_server(tmp_path, k) for k in range(SHARDS)]
    data = _coordinator(tmp_path, servers)
    data.store.load(path)
    _declare_and_register(data.engine)
    for n, (name, items) in enumerate(batches[:FIRST_DEATH]):
        data.engine.ingest(name, items)
        if n == after + 1:  # an acknowledged delete of a streamed triple
            data.store.update(f"DELETE DATA {{ GRAPH <{POSTS}> {{ {deleted} }} }}")
        if n == CHECKPOINT_AT:
            data.checkpoint()
    # the coordinator dies (nothing closed); a new one takes over the same shards
    _died(data)
    data = _coordinator(tmp_path, servers)
    assert data.recovery.checkpoint_lsn > 0 and data.recovery.batches_carried > 0
    assert _names(data.engine) == sorted(expected)
    assert not data.store.query(f"ASK {{ GRAPH <{POSTS}> {{ {deleted} }} }}").boolean
    for name, items in batches[FIRST_DEATH:SECOND_DEATH]:
        data.engine.ingest(name, items)
    # now every process dies: new shard servers recover from their directories too
    _died(data)
    servers = [shard_server(tmp_path, k) for k in range(SHARDS)]
    data = _coordinator(tmp_path, servers)
    assert data.recovery.records_replayed > 0
    assert not data.store.query(f"ASK {{ GRAPH <{POSTS}> {{ {deleted} }} }}").boolean
    _finish(data.engine, batches[SECOND_DEATH:])
    got = _events(data.engine)
    for name in expected:
        assert got[name] == expected[name], name
    data.close()
