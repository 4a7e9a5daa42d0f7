"""The W3C SPARQL 1.1 Graph Store HTTP Protocol tests (direct and indirect
graph identification), one per manifest entry, replayed against a live
server (``graph-store-protocol/manifest.ttl``)."""

import pytest

from tests.harness.w3c.manifest import suite_missing_reason
from tests.harness.w3c_http.manifest import graph_store_tests, replay

pytestmark = pytest.mark.skipif(bool(suite_missing_reason()), reason=suite_missing_reason() or "")

TESTS = graph_store_tests() if not suite_missing_reason() else []


def test_the_manifests_have_13_tests():
    assert len(TESTS) == 13
    assert len({t.name for t in TESTS}) == 13


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_w3c_graph_store(test, serve):
    replay(test, serve())
