"""A cluster in one process: shard servers called directly, no Ray, no transport.

The coordinator's code is the same as over Ray (``LocalShardCalls`` is the
reference ``RayShardCalls`` is tested against), so the stream and query
semantics of a sharded store can be tested here quickly, and a shard's
"restart" is a new server recovered from its directory.
"""

from __future__ import annotations

from pathlib import Path

from engine.api import Store
from engine.cluster.coordinator_log import CoordinatorLog
from engine.cluster.shard_calls import LocalShardCalls
from engine.cluster.shard_server import ShardServer
from engine.cluster.sharded_store import ShardedQuadStore
from engine.store.compact_dictionary import CompactTermDictionary

SHARDS = 3


def shard_server(directory: Path, shard: int, shards: int = SHARDS) -> ShardServer:
    """Shard ``shard`` recovered from ``directory`` (a new server: as after its process died)."""
    return ShardServer(shard, shards, str(directory), None, sync=False, region_host=None)


def coordinator_died(store: Store) -> None:
    """What a coordinator's killed process leaves: its files, and no lock on
    its log's directory (the kernel releases it); nothing closed or flushed."""
    store.quad_store.coordinator_log.lock.release()


def local_cluster_store(directory: Path, shards: int = SHARDS) -> tuple[Store, LocalShardCalls]:
    """A store over ``shards`` in-process shard servers kept in ``directory``."""
    calls = LocalShardCalls([shard_server(directory, k, shards) for k in range(shards)])
    terms = CompactTermDictionary()
    log = CoordinatorLog(directory / "coordinator", terms, 0, sync=False)
    return Store(quad_store=ShardedQuadStore(terms, calls, log)), calls
