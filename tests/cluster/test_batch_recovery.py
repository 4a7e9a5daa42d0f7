"""A stream batch that the coordinator logged but never committed (it died,
or its commit failed, between the two) is committed by the next start, so
the windows and the stream's stored graph agree on it; a batch committed
once is never absorbed again, also after the coordinator's log is compacted.

In process (shard servers called directly), at exactly the moment between
the two logs, for every batch of a generated run: the real kill of a real
coordinator process is tested in ``test_coordinator_kill``."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine.api import Store
from engine.cluster.coordinator_log import COMPACTED, CoordinatorLog
from engine.cluster.shard_calls import LocalShardCalls
from engine.cluster.sharded_store import ShardedQuadStore
from engine.durability import DataDirectory
from engine.rdf import IRI, Literal
from engine.store import StoreUnavailable
from engine.store.compact_dictionary import CompactTermDictionary
from engine.stream import StreamDefinition
from tests.cluster.local_cluster import SHARDS, coordinator_died, shard_server

EX = "http://example.org/batches/"
STREAM = f"{EX}gauges"
REGISTRATION = (f"REGISTER QUERY total AS SELECT (COUNT(*) AS ?n) FROM STREAM <{STREAM}> "
                "[RANGE 1h STEP 1s] WHERE { ?s ?p ?o }")
STORED = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{STREAM}> {{ ?s ?p ?o }} }}"
BATCHES = 6


class Died(BaseException):
    """The coordinator's process ends here (nothing after it runs)."""


def coordinator(directory: Path, servers: list, compact_bytes: int = 64 << 20) -> DataDirectory:
    terms = CompactTermDictionary()
    log = CoordinatorLog(directory / "coordinator", terms, 0, sync=False, compact_bytes=compact_bytes)
    store = Store(quad_store=ShardedQuadStore(terms, LocalShardCalls(servers), log))
    return DataDirectory.open(directory / "streams", sync=False, store=store)


def died(data: DataDirectory) -> None:
    data.lock.release()
    coordinator_died(data.store)


def batch(number: int, triples: int, timestamp: int) -> list:
    return [(timestamp, [(IRI(f"{EX}b{number}/s{k}"), IRI(f"{EX}level"), Literal(str(k)))
                         for k in range(triples)])]


def agree(data: DataDirectory, heartbeat: int) -> int:
    """Close the window holding every batch; the rows it counted, which the
    stored graph must hold too."""
    data.engine.heartbeat("gauges", heartbeat)
    event = data.engine.subscribe("total", 0).replay[-1]
    assert event.end_ms == heartbeat
    in_window = int(event.rows[0][0].lexical)
    assert in_window == stored(data)
    return in_window


def stored(data: DataDirectory) -> int:
    return int(next(data.store.query(STORED).rows())[0].lexical)


def dying_at_the_commit(data: DataDirectory) -> None:
    """The next commit the coordinator logs kills it first."""
    def log(*_args, **_kwargs) -> None:
        raise Died
    data.store.quad_store.coordinator_log.log = log


@pytest.mark.parametrize("seed", range(6))
def test_a_batch_logged_but_not_committed_is_committed_at_the_next_start(tmp_path, seed):
    rng = random.Random(seed)
    servers = [shard_server(tmp_path, k) for k in range(SHARDS)]
    data = coordinator(tmp_path, servers, compact_bytes=1)  # compacts whenever the shards allow
    data.engine.declare_stream(StreamDefinition("gauges", IRI(STREAM)))
    data.engine.register(REGISTRATION)
    expected = 0
    for n in range(BATCHES):
        size, timestamp = rng.randint(1, 300), 1_000 * (n + 1)
        if rng.random() < 0.5:  # an acknowledged batch first
            data.engine.ingest("gauges", batch(1_000 + n, size, timestamp))
            expected += size
        dying_at_the_commit(data)
        with pytest.raises(Died):
            data.engine.ingest("gauges", batch(n, size + 1, timestamp))
        died(data)
        if rng.random() < 0.5:  # the shards checkpoint: the next commit may compact the log
            for server in servers:
                server.checkpoint()
        data = coordinator(tmp_path, servers, compact_bytes=1)
        expected += size + 1
        assert agree(data, timestamp + 1_000) == expected
    assert (tmp_path / "coordinator" / COMPACTED).exists()
    # committed once, never again: a delete after the recovery's commit holds through restarts
    data.store.update(f'DELETE DATA {{ GRAPH <{STREAM}> {{ <{EX}b0/s0> <{EX}level> "0" }} }}')
    for server in servers:
        server.checkpoint()
    data.store.update(f"INSERT DATA {{ <{EX}x> <{EX}y> <{EX}z> }}")  # compacts past every batch
    died(data)
    data = coordinator(tmp_path, servers)
    assert stored(data) == expected - 1
    data.close()


def test_a_batch_whose_commit_failed_stops_later_writes_until_the_restart_commits_it(tmp_path):
    servers = [shard_server(tmp_path, k) for k in range(SHARDS)]
    data = coordinator(tmp_path, servers)
    data.engine.declare_stream(StreamDefinition("gauges", IRI(STREAM)))
    data.engine.register(REGISTRATION)
    data.engine.ingest("gauges", batch(0, 10, 1_000))
    coordinator_log = data.store.quad_store.coordinator_log
    logs = coordinator_log.log

    def full_disk(*_args, **_kwargs) -> None:
        raise OSError(28, "No space left on device")
    coordinator_log.log = full_disk
    with pytest.raises(OSError):
        data.engine.ingest("gauges", batch(1, 20, 2_000))
    coordinator_log.log = logs  # the disk has room again: still, nothing is committed after that batch
    wal = tmp_path / "streams" / "wal"
    sizes = {path: path.stat().st_size for path in wal.glob("*.log")}
    with pytest.raises(StoreUnavailable, match="logged but not committed"):
        data.engine.ingest("gauges", batch(2, 40, 3_000))
    with pytest.raises(StoreUnavailable, match="logged but not committed"):
        data.store.update(f"INSERT DATA {{ <{EX}x> <{EX}y> <{EX}z> }}")
    assert {path: path.stat().st_size for path in wal.glob("*.log")} == sizes  # the refused batch: not logged
    died(data)
    data = coordinator(tmp_path, servers)
    assert agree(data, 4_000) == 30
    data.engine.ingest("gauges", batch(2, 40, 4_000))
    assert agree(data, 5_000) == 70
    data.close()
