"""CSRBench over a store on three shards: every window of Q1-Q7 equals the
reference, read from the shards' shares of the stream."""

import pytest

from tests.cluster.local_cluster import local_cluster_store
from tests.harness import csrbench
from tests.stream.test_csrbench_engine import check_windows, items  # noqa: F401 (items: the fixture)

pytestmark = pytest.mark.skipif(
    not csrbench.available(), reason="../shared/conformance/csrbench is absent: CSRBench not run"
)


@pytest.mark.parametrize("n", csrbench.QUERY_NUMBERS)
def test_every_window_on_three_shards_matches_the_reference(n, items, tmp_path):  # noqa: F811
    store, calls = local_cluster_store(tmp_path)
    check_windows(n, items, store)
    assert sum(len(server.state.streams) for server in calls.servers) > 0
