"""A graph's sort orders are the lexicographic orders of its triples, whether
its columns come sorted (no sort is made then) or in any order."""

import numpy as np
import pytest

from engine.store.memory_graph import MemoryGraph, _lex_sorted


@pytest.mark.parametrize("seed", range(10))
def test_every_order_is_lexicographic(seed):
    rng = np.random.default_rng(seed)
    n, width = int(rng.integers(0, 400)), int(rng.integers(1, 6))  # narrow IDs: many ties
    s, p, o = (rng.integers(1, width + 1, n) for _ in range(3))
    for graph in (MemoryGraph(s, p, o), MemoryGraph(s, p, o, unique=True)):
        for name, columns in (("pso", (graph.p, graph.s, graph.o)), ("pos", (graph.p, graph.o, graph.s)),
                              ("spo", (graph.s, graph.p, graph.o)), ("osp", (graph.o, graph.s, graph.p))):
            order = getattr(graph, name)
            expected = sorted(zip(*(c.tolist() for c in columns)))
            assert list(zip(order.first.tolist(), order.second.tolist(), order.third.tolist())) == expected


@pytest.mark.parametrize("seed", range(10))
def test_sortedness_is_told_right(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(0, 60))
    rows = rng.integers(0, 3, (n, 3))
    if rng.random() < 0.5:
        rows = rows[np.lexsort(rows.T[::-1])]
    expected = [tuple(r) for r in rows.tolist()] == sorted(tuple(r) for r in rows.tolist())
    assert _lex_sorted(rows[:, 0], rows[:, 1], rows[:, 2]) == expected
