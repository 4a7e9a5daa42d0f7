"""One real Ray local cluster for the cluster tests (started once, about 2 s)."""

from __future__ import annotations

import pytest
import ray

from engine.cluster.ray_shards import NAMESPACE, actor_name
from tests.cluster.ray_cluster import start_ray

#: the most shards a test's coordinators make under the default names
MAX_SHARDS = 8


@pytest.fixture(scope="session")
def ray_runtime():
    start_ray()
    yield
    ray.shutdown()


@pytest.fixture
def ray_address(ray_runtime) -> str:
    """The address of this session's Ray cluster, for coordinators run as
    processes (``rivulet serve --cluster ADDRESS``); the shards they made
    under the default names (which outlive a coordinator) are killed after."""
    yield ray.get_runtime_context().gcs_address
    for k in range(MAX_SHARDS):
        try:
            ray.kill(ray.get_actor(actor_name(k), namespace=NAMESPACE), no_restart=True)
        except ValueError:  # none by that name
            continue
