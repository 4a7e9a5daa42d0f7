"""How the coordinator calls its shards: one step on several shards at once.

:class:`ShardCalls` is what the sharded graph and store need: call a method
of several shards concurrently and collect the answers (a fork-join), with
the shards' failures turned into errors a caller can act on
(:class:`ShardUnavailable`, and the shards' own, such as a snapshot gone).
:class:`LocalShardCalls` runs in-process shard servers (tests, and a
single-process check of the cluster code); ``engine.cluster.ray_shards``
runs Ray actors.
"""

from __future__ import annotations

from typing import Any, Protocol

from engine.store.availability import StoreUnavailable

#: shard methods that read and change nothing: they may take a cheaper path
#: than a Ray call (``engine.cluster.step_calls``) and be sent again
READ_STEPS = frozenset({"match", "count", "degree_stats", "columns", "sizes", "ping",
                        "window_match", "window_count", "window_rows"})


class ShardUnavailable(StoreUnavailable):
    """A shard did not answer (its process died and is being restarted):
    the request can be retried once it is back; nothing was answered wrong."""


class ShardCalls(Protocol):
    """Calls into the shards of one cluster."""

    #: how many shards the store is partitioned into
    shards: int

    def fork(self, calls: dict[int, tuple[str, tuple]]) -> dict[int, Any]:
        """Run ``method(*args)`` on each named shard at once; the answers by
        shard. Raises :class:`ShardUnavailable`, or what a shard raised."""
        ...

    def info(self) -> list[dict]:
        """Each shard's own report (version, addresses, recovery)."""
        ...


class LocalShardCalls:
    """Shard servers in this process (no transport): the reference the
    Ray-backed calls are tested against."""

    def __init__(self, servers: list) -> None:
        self.servers = servers
        self.shards = len(servers)

    def fork(self, calls: dict[int, tuple[str, tuple]]) -> dict[int, Any]:
        return {k: getattr(self.servers[k], method)(*args) for k, (method, args) in calls.items()}

    def info(self) -> list[dict]:
        return [server.info() for server in self.servers]


def broadcast(calls: ShardCalls, method: str, *args: Any) -> dict[int, Any]:
    """The same call on every shard."""
    return calls.fork({k: (method, args) for k in range(calls.shards)})

