"""One real Ray local cluster for the cluster tests (started once, about 2 s)."""

from __future__ import annotations

import pytest
import ray

from tests.cluster.ray_cluster import start_ray


@pytest.fixture(scope="session")
def ray_runtime():
    start_ray()
    yield
    ray.shutdown()
