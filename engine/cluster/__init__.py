"""A store partitioned over shards: the cluster layer (see docs/operations.md).

The compact store is partitioned by vertex (``ID % shards``, in both
directions, as ``rivulet load --shards N`` writes it); each partition is
served by one shard (a Ray actor in a cluster), and the coordinator (the
HTTP endpoint process) runs the executor unchanged over graphs whose reads
go to the shards. Transports (``engine.cluster.transport``) carry the reads.

``engine.cluster.ray_shards`` (Ray's actors) is imported on its own: Ray is
an optional dependency (the ``cluster`` extra), and nothing else here needs it.
"""

from engine.cluster.coordinator import open_cluster_store
from engine.cluster.shard_calls import LocalShardCalls, ShardCalls, ShardUnavailable
from engine.cluster.shard_server import ShardServer

__all__ = ["LocalShardCalls", "ShardCalls", "ShardServer", "ShardUnavailable", "open_cluster_store"]
