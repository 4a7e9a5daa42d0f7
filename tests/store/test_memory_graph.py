"""The ID-level store: exploration through sorted neighbour lists, snapshots."""

import numpy as np

from engine.store import DEFAULT_GRAPH, MemoryGraph, QuadStore, expand_ranges


def ids(*values):
    return np.array(values, dtype=np.int64)


def small_graph():
    # s p o: 1 knows 2, 1 knows 3, 2 knows 3, 3 likes 1, duplicate of the first
    return MemoryGraph(ids(1, 1, 2, 3, 1), ids(10, 10, 10, 11, 10), ids(2, 3, 3, 1, 2))


def test_duplicates_collapse():
    assert len(small_graph()) == 4


def test_expand_ranges_gives_every_position():
    rows, pos = expand_ranges(ids(0, 5, 2), ids(2, 5, 4))
    assert rows.tolist() == [0, 0, 2, 2]
    assert pos.tolist() == [0, 1, 2, 3]


def test_match_out_neighbours_for_a_column_of_subjects():
    graph = small_graph()
    rows, s, p, o = graph.match(ids(1, 2, 7), ids(10, 10, 10), None, 3)
    got = sorted(zip(rows.tolist(), o.tolist()))
    assert got == [(0, 2), (0, 3), (1, 3)]


def test_match_in_neighbours_and_fully_bound():
    graph = small_graph()
    rows, s, _, _ = graph.match(None, ids(10), ids(3), 1)
    assert sorted(s.tolist()) == [1, 2]
    rows, _, _, _ = graph.match(ids(1, 1), ids(10, 10), ids(3, 1), 2)
    assert rows.tolist() == [0]


def test_match_with_variable_predicate():
    graph = small_graph()
    rows, s, p, o = graph.match(ids(3), None, None, 1)
    assert list(zip(p.tolist(), o.tolist())) == [(11, 1)]
    rows, s, p, o = graph.match(None, None, ids(1), 1)
    assert s.tolist() == [3]


def test_query_local_ids_match_nothing():
    graph = small_graph()
    rows, *_ = graph.match(ids(-4), ids(10), None, 1)
    assert len(rows) == 0
    assert graph.count(None, -1, None) == 0


def test_exact_counts():
    graph = small_graph()
    assert graph.count(None, 10, None) == 3
    assert graph.count(1, 10, None) == 2
    assert graph.count(None, 10, 3) == 2
    assert graph.count(1, None, 3) == 1
    assert graph.count(None, None, None) == 4


def test_with_changes_is_copy_on_write():
    graph = small_graph()
    changed = graph.with_changes(MemoryGraph(ids(9), ids(10), ids(9)), MemoryGraph(ids(1), ids(10), ids(2)))
    assert len(graph) == 4
    assert sorted(zip(changed.s.tolist(), changed.o.tolist())) == [(1, 3), (2, 3), (3, 1), (9, 9)]


def test_aborted_transaction_changes_nothing_and_snapshots_stay_stable():
    store = QuadStore()
    before = store.snapshot()
    txn = store.begin()
    txn.add(DEFAULT_GRAPH, ids(1), ids(2), ids(3))
    store.abort(txn)
    assert len(store.snapshot().graphs[DEFAULT_GRAPH]) == 0
    txn = store.begin()
    txn.add(DEFAULT_GRAPH, ids(1), ids(2), ids(3))
    txn.commit()
    assert len(before.graphs[DEFAULT_GRAPH]) == 0
    assert len(store.snapshot().graphs[DEFAULT_GRAPH]) == 1


def test_a_fully_bound_probe_into_long_neighbour_lists_finds_exactly_the_triples():
    rng = np.random.default_rng(3)
    s = rng.integers(1, 4, 3000)  # three subjects with about 1000 objects each
    o = rng.integers(1, 5000, 3000)
    graph = MemoryGraph(s, np.full(3000, 10), o)
    probe_s = rng.integers(0, 5, 400)
    probe_o = rng.integers(0, 5001, 400)
    probe_o[:100] = o[:100]  # some hits for sure
    probe_s[:100] = s[:100]
    rows, ms, mp, mo = graph.match(probe_s, np.full(400, 10), probe_o, 400)
    stored = set(zip(s.tolist(), o.tolist()))
    expected = [i for i in range(400) if (int(probe_s[i]), int(probe_o[i])) in stored]
    assert sorted(rows.tolist()) == expected
    assert (ms == probe_s[rows]).all() and (mo == probe_o[rows]).all() and (mp == 10).all()


def test_subject_and_object_bound_with_a_variable_predicate_find_every_predicate():
    # one subject, many predicates and objects: in SPO order the objects are
    # sorted per predicate only, so a search on them alone would miss matches
    rng = np.random.default_rng(5)
    p = rng.integers(10, 20, 2000)
    o = rng.integers(1, 300, 2000)
    graph = MemoryGraph(np.ones(2000, dtype=np.int64), p, o)
    probe_o = np.arange(1, 301)
    rows, _, mp, mo = graph.match(np.ones(300, dtype=np.int64), None, probe_o, 300)
    expected = {(int(a), int(b)) for a, b in zip(p, o)}
    assert set(zip(mp.tolist(), mo.tolist())) == expected
