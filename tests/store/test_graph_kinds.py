"""Every in-memory kind of stored graph answers like a MemoryGraph of the same
triples, through the one Graph protocol (the memory-mapped kind is checked
the same way in tests/loader)."""

import numpy as np
import pytest

from engine.store import NO_STREAM, Graph, LayeredGraph, MemoryGraph, TimedTriples, TimeSlice, UnionGraph
from engine.store.compact_graph import CompactGraph
from engine.store.row_budget import RowBudgetExceeded, row_budget


def ids(*values):
    return np.array(values, dtype=np.int64)


S, P, O = ids(1, 1, 2, 3, 4, 5), ids(10, 10, 10, 11, 10, 11), ids(2, 3, 3, 1, 1, 2)


def kinds() -> dict[str, Graph]:
    first, second = MemoryGraph(S[:3], P[:3], O[:3]), MemoryGraph(S[3:], P[3:], O[3:])
    layered = LayeredGraph(first).appended(S[3:], P[3:], O[3:], ids(5, 6, 7), stream=0)
    return {"memory": MemoryGraph(S, P, O), "union": UnionGraph([first, second]), "layered": layered}


@pytest.mark.parametrize("kind", ["memory", "union", "layered"])
def test_each_kind_counts_matches_and_contains_like_the_memory_graph(kind):
    graph, reference = kinds()[kind], MemoryGraph(S, P, O)
    assert len(graph) == len(reference)
    for probe in [(1, None, None), (None, 10, None), (None, None, 1), (1, 10, 3), (None, 99, None)]:
        assert graph.count(*probe) == reference.count(*probe)
    assert graph.degree_stats(10)[0] == reference.degree_stats(10)[0]
    rows, s, p, o = graph.match(ids(1, 5), None, None, 2)
    want = reference.match(ids(1, 5), None, None, 2)
    assert sorted(zip(rows.tolist(), s.tolist(), p.tolist(), o.tolist())) == \
        sorted(zip(*(column.tolist() for column in want)))
    assert graph.contains(ids(1, 1, 9), ids(10, 11, 10), ids(3, 3, 1)).tolist() == [True, False, False]
    assert sorted(zip(graph.s.tolist(), graph.p.tolist(), graph.o.tolist())) == \
        sorted(zip(S.tolist(), P.tolist(), O.tolist()))
    changed = graph.with_changes(MemoryGraph(ids(9), ids(10), ids(9)), MemoryGraph(ids(1), ids(10), ids(2)))
    assert len(changed) == len(reference) and changed.count(9, 10, 9) == 1 and changed.count(1, 10, 2) == 0


def test_degree_stats_of_a_predicate_are_matches_subjects_and_objects():
    assert MemoryGraph(S, P, O).degree_stats(10) == (4, 3, 3)
    assert MemoryGraph(S, P, O).degree_stats(None) == (6, 5, 3)
    assert UnionGraph([]).degree_stats(10) == (0, 0, 0)


def _random_members(rng: np.random.Generator) -> list[MemoryGraph]:
    """Disjoint members over narrow, random ID ranges (so that many miss a probe)."""
    s, p, o = (rng.integers(1, 60, 400) for _ in range(3))
    whole = MemoryGraph(s, p, o)  # distinct triples, sorted
    cuts = np.sort(rng.choice(np.arange(1, len(whole)), size=5, replace=False))
    members, start = [], 0
    for stop in [*cuts.tolist(), len(whole)]:
        # sorted by (p, s, o): each slice holds a narrow predicate range
        members.append(MemoryGraph(whole.s[start:stop], whole.p[start:stop], whole.o[start:stop]))
        start = stop
    return members


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("seed", range(20))
def test_a_union_that_skips_members_out_of_range_answers_like_one_graph(seed, compact):
    rng = np.random.default_rng(seed)
    members = _random_members(rng)
    if compact:  # every other member as CSR arrays, skipped by their predicates
        members = [CompactGraph.build(m.s, m.p, m.o) if i % 2 and len(m) else m
                   for i, m in enumerate(members)]
    union = UnionGraph(members)
    reference = MemoryGraph(np.concatenate([m.s for m in members]), np.concatenate([m.p for m in members]),
                            np.concatenate([m.o for m in members]))
    for _ in range(40):
        probe = [None if rng.random() < 0.4 else int(rng.integers(0, 62)) for _ in range(3)]
        assert union.count(*probe) == reference.count(*probe)
        assert union.degree_stats(probe[1])[0] == reference.degree_stats(probe[1])[0]
        n = int(rng.integers(1, 6))
        columns = [None if v is None else rng.integers(max(v - 3, 0), v + 3, n) for v in probe]
        got = union.match(*columns, n_rows=n)
        want = reference.match(*columns, n_rows=n)
        assert sorted(zip(*(c.tolist() for c in got))) == sorted(zip(*(c.tolist() for c in want)))


def test_a_member_whose_ranges_miss_the_pattern_is_not_probed(monkeypatch):
    near, far = MemoryGraph(ids(1, 2), ids(10, 10), ids(3, 4)), MemoryGraph(ids(1), ids(500), ids(7))
    union = UnionGraph([near, far])

    def refuse(*args, **kwargs):
        raise AssertionError("probed a member that cannot match")

    monkeypatch.setattr(far, "match", refuse)
    monkeypatch.setattr(far, "count", refuse)
    rows, s, p, o = union.match(ids(1, 2), ids(10, 10), None, 2)
    assert sorted(zip(s.tolist(), o.tolist())) == [(1, 3), (2, 4)]
    assert union.count(1, 10, None) == 1


def test_a_compact_member_without_the_patterns_predicate_is_not_probed(monkeypatch):
    stored = CompactGraph.build(ids(1, 2), ids(10, 10), ids(3, 4))
    numbers = MemoryGraph(ids(1), ids(11), ids(7))
    union = UnionGraph([stored, numbers])
    assert stored.predicate_ids == frozenset({10})

    def refuse(*args, **kwargs):
        raise AssertionError("probed a compact member that has no edge of the predicate")

    monkeypatch.setattr(stored, "match", refuse)
    monkeypatch.setattr(stored, "count", refuse)
    rows, s, p, o = union.match(ids(1, 2), ids(11, 11), None, 2)
    assert (rows.tolist(), o.tolist()) == ([0], [7])
    assert union.count(1, 11, None) == 1
    monkeypatch.undo()
    assert union.count(None, 10, None) == 2 and union.count(1, None, None) == 2


def test_a_trickle_of_one_triple_updates_keeps_a_few_deltas_and_every_triple():
    graph = LayeredGraph(MemoryGraph(S, P, O))
    for k in range(3000):
        graph = graph.appended(ids(1000 + k), ids(20), ids(k + 1), ids(0), stream=NO_STREAM)
        assert len(graph.deltas) <= 3
    assert len(graph) == len(S) + 3000
    assert graph.count(None, 20, None) == 3000
    assert graph.count(1000 + 2999, 20, 3000) == 1 and graph.count(1, 10, 2) == 1


@pytest.mark.parametrize("seed", range(10))
def test_a_time_slice_charges_the_row_budget_with_its_own_rows_only(seed):
    """A window's slice of a stream batch shares its ranges with other
    windows' rows: the budget counts the slice's matches, so a step is
    refused exactly when the slice's own rows are over it."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 200))
    ts = np.sort(rng.integers(0, 100, n))
    s, p, o = rng.integers(1, 4, n), rng.integers(1, 3, n), rng.integers(1, 1000, n)
    keys = np.unique(np.stack([s, p, o], axis=1), axis=0, return_index=True)[1]
    keep = np.sort(keys)  # distinct triples, still in timestamp order
    batch = TimedTriples(ts[keep], s[keep], p[keep], o[keep], maybe_repeats=False)
    start = int(rng.integers(0, 90))
    window = TimeSlice(batch, start, start + int(rng.integers(1, 10)))
    probe = (ids(1, 2, 3), ids(1, 1, 1), None)
    inside = (batch.ts >= window.start) & (batch.ts < window.end)
    rows = zip(batch.s[inside].tolist(), batch.p[inside].tolist(), batch.o[inside].tolist())
    expected = sorted(row for row in rows if row[1] == 1)
    with row_budget(len(expected)):
        _, ms, mp, mo = window.match(*probe, n_rows=3)
    assert sorted(zip(ms.tolist(), mp.tolist(), mo.tolist())) == expected
    if expected:
        with row_budget(len(expected) - 1), pytest.raises(RowBudgetExceeded):
            window.match(*probe, n_rows=3)
