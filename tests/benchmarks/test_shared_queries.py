"""benchmarks.shared_queries at a tiny size: K queries with different constants
on one stream, and every subscription gets every window's event, in order.
Not a timing test."""

import pytest

from benchmarks.lsbench_data import ACCOUNT_OF, SOCIAL_GRAPH, StreamGenerator, generate, scaled_rates
from benchmarks.shared_queries import (
    STREAM,
    check_events,
    load_store,
    new_engine,
    persons_by_rank,
    run_k,
    shared_queries,
)
from engine.rdf import format_term

K = 3
WARMUP, STEPS = 2, 3


@pytest.fixture(scope="module")
def data():
    return generate(5_000)


def test_queries_have_distinct_stored_persons(data):
    queries = shared_queries(data, 10)
    assert [q.name for q in queries][:3] == ["L2_k0", "L3_k1", "L2_k2"]
    assert len({q.where for q in queries}) == 10
    stored = {format_term(o) for _, p, o in data.social_triples() if p == ACCOUNT_OF}
    assert len(stored) == len(persons_by_rank(data))
    for query in queries:
        constant = query.where.split("sioc:account_of ", 1)[1].split(" ", 1)[0]
        assert constant in stored
        assert f"FROM <{SOCIAL_GRAPH}>" in query.registration()


def test_every_query_reports_every_window_in_order(data):
    engine = new_engine(load_store(data))
    generator = StreamGenerator(data, {STREAM: scaled_rates(0.05)[STREAM]})
    for _ in range(2):  # the second K registers on a stream that already has a watermark
        result = run_k(engine, generator, shared_queries(data, K), WARMUP, STEPS, slow_step_s=60.0)
        assert result.problems == []
        assert len(result.closes) == WARMUP + STEPS and len(result.step_s) == STEPS
        assert sorted(result.events) == ["L2_k0", "L2_k2", "L3_k1"]
        for events in result.events.values():
            assert [(seq, end) for seq, end, _ in events] == [(i + 1, c) for i, c in enumerate(result.closes)]
        assert result.events_checked == K * (WARMUP + STEPS)
        assert result.rows > 0  # active persons: the windows join
        assert not engine.queries


def test_check_events_reports_gaps_and_disorder():
    closes = [100, 200, 300]
    assert check_events({"q": [(1, 100, 0), (2, 200, 5), (3, 300, 1)]}, closes) == []
    assert check_events({"q": [(1, 100, 0), (2, 300, 0)]}, closes)
    assert check_events({"q": [(1, 100, 0), (3, 200, 0), (4, 300, 0)]}, closes)
    assert check_events({"q": [(1, 100, 0), (2, 200, 0), (3, 300, 0), (4, 400, 0)]}, closes)
