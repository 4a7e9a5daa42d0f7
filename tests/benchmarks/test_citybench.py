"""benchmarks.citybench at a tiny size: a CityBench query as written gets
every window, equal to pyoxigraph's answer at K = 1, and copies of a query
with two STEPs each get every window. Not a timing test."""

import pytest

from benchmarks.citybench import QUERIES, peer_store, query_names, run_query
from benchmarks.citybench_data import citybench_store

pytestmark = pytest.mark.skipif(not (QUERIES / "Q1.txt").exists(),
                                reason="CityBench is not in ../shared/datasets")


@pytest.fixture(scope="module")
def store():
    return citybench_store()


def test_every_query_file_is_run():
    assert set(query_names()) == {path.stem for path in QUERIES.glob("*.txt")}
    assert query_names()[:3] == ["Q1", "Q1_5_win_1", "Q1_win_1"]


def test_one_copy_equals_pyoxigraph_window_for_window(store):
    run = run_query(store, peer_store(), "Q1", (QUERIES / "Q1.txt").read_text(), 1, steps=2, row_ms=1000)
    assert run.error is None and run.problems == []
    assert run.events == run.checked == 3 + 2  # RANGE 3s / STEP 1s warm-up windows, then the timed ones
    assert len(run.latency_s) == 2 and sum(run.rows) > 0


def test_copies_of_a_query_with_two_steps_get_every_window(store):
    text = (QUERIES / "traffic_parking_1.txt").read_text()
    run = run_query(store, None, "traffic_parking_1", text, 2, steps=2, row_ms=1000)
    assert run.error is None and run.problems == [] and run.step_ms == 500
    assert run.events > 2 * 2 and len(run.latency_s) == 2
