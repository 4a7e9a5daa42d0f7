"""The 34 W3C SPARQL 1.1 Protocol tests, one per manifest entry, replayed
against a live server (``protocol/manifest.ttl``)."""

import pytest

from engine.api import Store
from tests.harness.w3c.manifest import suite_missing_reason
from tests.harness.w3c_http.manifest import protocol_tests, replay

pytestmark = pytest.mark.skipif(bool(suite_missing_reason()), reason=suite_missing_reason() or "")

TESTS = protocol_tests() if not suite_missing_reason() else []


def test_the_manifest_has_34_tests():
    assert len(TESTS) == 34


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_w3c_protocol(test, serve):
    store = Store()
    for path, graph in test.graph_data:
        store.load(path, graph=graph)
    replay(test, serve(store))
