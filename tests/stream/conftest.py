"""The engine most stream tests start from: two streams, ``a`` with ``ex:temp``
as its timing predicate (the rest of its triples are timeless) and ``b``."""

from __future__ import annotations

import pytest

from engine.api import Store
from engine.rdf import IRI
from engine.stream import StreamDefinition, StreamEngine

EX = "http://example.org/"


@pytest.fixture
def engine():
    engine = StreamEngine(Store())
    engine.declare_stream(StreamDefinition("a", IRI(EX + "a"), timing=frozenset({EX + "temp"})))
    engine.declare_stream(StreamDefinition("b", IRI(EX + "b")))
    yield engine
    engine.close()
