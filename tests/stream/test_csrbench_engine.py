"""CSRBench through the engine API: every window of Q1-Q7 equals the reference."""

import pytest

from engine.api import Store
from engine.rdf import IRI, parse_rdf
from engine.stream import StreamDefinition, StreamEngine
from tests.harness import csrbench

pytestmark = pytest.mark.skipif(
    not csrbench.available(), reason="../shared/conformance/csrbench is absent: CSRBench not run"
)


@pytest.fixture(scope="module")
def items():
    return [(ts, [(s, p, o) for s, p, o, _ in parse_rdf(path)]) for ts, path in csrbench.data_files()]


@pytest.mark.parametrize("n", csrbench.QUERY_NUMBERS)
def test_every_window_matches_the_reference(n, items):
    check_windows(n, items, Store())


def check_windows(n: int, items: list, store: Store) -> None:
    """Replay CSRBench into ``store``'s stream engine; query ``n``'s windows equal the reference."""
    spec = csrbench.expected(n)
    engine = StreamEngine(store)
    engine.declare_stream(StreamDefinition("sensors", IRI(csrbench.STREAM)))
    running = engine.register(csrbench.registration(n))
    queue = running.subscribe()
    events = []
    for ts, triples in items:
        engine.ingest("sensors", [(ts, triples)])
        events += queue.drain()
    engine.heartbeat("sensors", spec["final_watermark_ms"])
    events += queue.drain()
    got = [
        {
            "close_ms": e.end_ms,
            "bindings": [
                {v: csrbench.term_json(t) for v, t in zip(e.variables, row, strict=True) if t is not None}
                for row in e.rows
            ],
        }
        for e in events
    ]
    assert csrbench.normalise_windows(got) == csrbench.normalise_windows(spec["windows"])
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert all(e.end_ms - e.start_ms == spec["range_ms"] for e in events)
