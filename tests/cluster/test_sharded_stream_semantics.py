"""The stream engine's rules (``tests/stream/test_stream_engine.py``, one
rule of SEMANTICS.md per test) again, over a store on three shards: the
windows are read from the shards' shares of the stream index."""

import pytest

from engine.stream import StreamDefinition, StreamEngine
from tests.cluster.local_cluster import local_cluster_store
from tests.stream.test_stream_engine import *  # noqa: F403 (the rules, collected here with this engine)
from tests.stream.test_stream_engine import EX, iri


@pytest.fixture
def engine(tmp_path):
    store, _ = local_cluster_store(tmp_path)
    engine = StreamEngine(store)
    engine.declare_stream(StreamDefinition("a", iri("a"), timing=frozenset({EX + "temp"})))
    engine.declare_stream(StreamDefinition("b", iri("b")))
    yield engine
    engine.close()
