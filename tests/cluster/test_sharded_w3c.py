"""Three shards on a real Ray cluster answer the W3C SPARQL 1.1 evaluation
tests exactly as one node does: the same tests pass, with the same answers
(the runner compares each answer with the suite's expected one)."""

from __future__ import annotations

import time

import pytest

from tests.cluster.ray_cluster import ClusterStores
from tests.harness.w3c.manifest import SUITE_ROOT, suite_missing_reason
from tests.harness.w3c.runner import run_suite

CATEGORIES = ("query evaluation", "update evaluation")
#: seconds one test may take on three shards
SHARDED_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def one_node() -> dict:
    """The one-node outcomes by test name, run once for both transports."""
    missing = suite_missing_reason()
    if missing:
        print(f"skipping: {missing}")
        pytest.skip(missing)
    return {o.test.name: o for o in run_suite(SUITE_ROOT, categories=CATEGORIES).outcomes}


@pytest.mark.parametrize("transport", ["ray", "tcp"])
def test_three_shards_pass_what_one_node_passes(ray_runtime, tmp_path, transport, one_node):
    single = one_node
    stores = ClusterStores(tmp_path, shards=3, transport=transport, group=f"w3c-{transport}")
    try:
        started = time.monotonic()
        # a test's shards are new Ray actors: on a loaded machine one test took over the
        # runner's 10 s (its alarm then lands inside a C call, a SystemError, not a timeout)
        sharded = run_suite(SUITE_ROOT, categories=CATEGORIES, make_store=stores.new_store,
                            timeout=SHARDED_TIMEOUT_S)
        sharded_s = time.monotonic() - started
    finally:
        stores.stop()
    differing = [f"{o.test.folder}/{o.test.name}: sharded {'passes' if o.passed else o.reason}, "
                 f"one node {'passes' if single[o.test.name].passed else single[o.test.name].reason}"
                 for o in sharded.outcomes if o.passed != single[o.test.name].passed]
    passed = sum(o.passed for o in sharded.outcomes)
    print(f"3 shards ({transport}): {passed}/{len(sharded.outcomes)} passed in {sharded_s:.1f} s; "
          f"one node: {sum(o.passed for o in single.values())}/{len(single)}")
    assert len(sharded.outcomes) == len(single) > 300
    assert not differing, "\n".join(differing)
