"""benchmarks.duplicate_queries at a tiny size: copies of CityBench's queries
and of LSBench's L4/L6 each get every window's event, in order. Not a timing test."""

import pytest

from benchmarks.duplicate_queries import CITYBENCH, citybench_runs, lsbench_runs

pytestmark = pytest.mark.skipif(not (CITYBENCH / "csparql_query" / "Q8.txt").exists(),
                                reason="CityBench is not in ../shared/datasets")


def test_citybench_copies_get_every_window():
    runs = citybench_runs([1, 3], steps=2, row_ms=1000)
    runs += citybench_runs([2], steps=3, row_ms=5000, label=" sparse")
    assert [(r.query, r.k) for r in runs] == [(q, k) for q in ("Q1", "Q5", "Q8") for k in (1, 3)] + [
        ("Q1 sparse", 2), ("Q5 sparse", 2), ("Q8 sparse", 2)]
    for run in runs:
        steps = 3 if "sparse" in run.query else 2
        assert run.problems == [], run.query
        assert run.events == run.k * (3 + steps)  # three warm-up steps: RANGE 3s STEP 1s
        assert len(run.latency_s) == steps


def test_lsbench_copies_get_every_window():
    runs = lsbench_runs([2], triples=5_000, steps=2, seed=1)
    assert [(r.query, r.k) for r in runs] == [("L4", 2), ("L6", 2)]
    assert all(r.problems == [] and r.events == 2 * (10 + 2) for r in runs)
