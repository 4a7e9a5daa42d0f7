"""A real Ray local cluster for the cluster tests, and stores on its shards.

One Ray runtime per test session (Ray starts in about 2 s here); the shard
actors are created once per shard count and reset between independent
stores, since creating processes per W3C test would dominate the run.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import ray

from engine.api import Store
from engine.cluster.coordinator import open_cluster_store
from engine.cluster.ray_shards import RayShardCalls, start_shards

_counter = itertools.count()


def start_ray() -> None:
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, include_dashboard=False, namespace="rivulet",
                 log_to_driver=False, configure_logging=False)


class ClusterStores:
    """Fresh stores over the same ``shards`` shard processes."""

    def __init__(self, root: Path, shards: int = 3, transport: str = "ray", group: str = "tests") -> None:
        start_ray()
        self.root = root
        self.transport = transport
        first = root / f"store-{next(_counter)}"
        self.actors = start_shards(shards, str(first), None, sync=False, in_place=transport != "ray",
                                   group=group)
        self.calls = RayShardCalls(self.actors)
        self._current = first
        #: the store made last (closed when the next one is made: its log and connections)
        self._store: Store | None = None

    def new_store(self) -> Store:
        self._close_store()
        directory = self.root / f"store-{next(_counter)}"
        self.calls.fork({k: ("reset", (str(directory),)) for k in range(self.calls.shards)})
        self._current = directory
        self._store = open_cluster_store(self.calls, directory, None, sync=False, transport=self.transport)
        return self._store

    def _close_store(self) -> None:
        if self._store is not None:
            self._store.quad_store.close()
            self._store = None

    def stop(self) -> None:
        self._close_store()
        self.calls.stop()
