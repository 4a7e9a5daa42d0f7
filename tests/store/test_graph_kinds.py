"""Every in-memory kind of stored graph answers like a MemoryGraph of the same
triples, through the one Graph protocol (the memory-mapped kind is checked
the same way in tests/loader)."""

import numpy as np
import pytest

from engine.store import Graph, LayeredGraph, MemoryGraph, UnionGraph


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
