"""The compiled merge of sorted triple sets (engine/store/sorted_triples_kernel.pyx)
is their set union in (predicate, subject, object) order, and a layered
graph compacted through it holds exactly its triples, on generated sets that
overlap, are empty, or repeat values in every column."""

import numpy as np
import pytest
from engine.store.sorted_triples_kernel import contains_sorted, merge_sorted

from engine.store.layered_graph import LayeredGraph, make_delta
from engine.store.memory_graph import MemoryGraph


def _triples(rng: np.random.Generator, n: int, ids: int) -> MemoryGraph:
    return MemoryGraph(*(rng.integers(1, ids, n) for _ in range(3)))  # sorted (p, s, o), distinct


def _rows(g: MemoryGraph) -> list[tuple[int, int, int]]:
    return list(zip(g.p.tolist(), g.s.tolist(), g.o.tolist(), strict=True))


@pytest.mark.parametrize("seed", range(6))
def test_the_merge_is_the_sorted_union(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = int(rng.choice([3, 20, 2**31 - 1]))
    a = _triples(rng, int(rng.integers(0, 3000)), ids)
    b = _triples(rng, int(rng.integers(0, 3000)), ids)
    s, p, o = merge_sorted(a.s, a.p, a.o, b.s, b.p, b.o)
    assert list(zip(p.tolist(), s.tolist(), o.tolist(), strict=True)) == sorted(set(_rows(a)) | set(_rows(b)))


@pytest.mark.parametrize("seed", range(6))
def test_membership_of_sorted_probes(seed: int) -> None:
    rng = np.random.default_rng(50 + seed)
    ids = int(rng.choice([3, 30, 2**31 - 1]))
    held = _triples(rng, int(rng.integers(0, 4000)), ids)
    probes = _triples(rng, int(rng.integers(0, 4000)), ids)
    # some probes the set holds, some twice (repeated probes are allowed)
    picked = rng.integers(0, max(len(held), 1), int(rng.integers(0, 500))) if len(held) else []
    s, p, o = (np.concatenate([a, b[picked], b[picked]]) for a, b in
               ((probes.s, held.s), (probes.p, held.p), (probes.o, held.o)))
    order = np.lexsort((o, s, p))
    s, p, o = s[order], p[order], o[order]
    found = contains_sorted(held.s, held.p, held.o, s, p, o)
    members = set(_rows(held))
    assert found.tolist() == [row in members for row in zip(p.tolist(), s.tolist(), o.tolist(), strict=True)]


@pytest.mark.parametrize("seed", range(2))
def test_a_compacted_graph_holds_its_triples(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    base = _triples(rng, 70_000, 50_000)
    graph = LayeredGraph(base)
    expected = set(_rows(base))
    for step in range(4):
        new = _triples(rng, 6_000, 50_000)
        graph = graph.appended(new.s, new.p, new.o, np.full(len(new), step, dtype=np.int64), 0)
        fresh = set(_rows(new)) - expected
        # the batch's triples the graph held already are not in its delta
        assert sorted(fresh) == _rows(graph.deltas[-1].triples)
        expected |= fresh
    # every stream row is older than the safe bound: the deltas merge into the base
    merged = graph.compacted({0: 10})
    assert not merged.deltas and isinstance(merged.base, MemoryGraph)
    assert _rows(merged.base) == sorted(expected)
    # a base in no particular order is sorted first
    shuffled = rng.permutation(len(base))
    unordered = MemoryGraph(base.s[shuffled], base.p[shuffled], base.o[shuffled], unique=True)
    more = _triples(rng, 20_000, 50_000)  # a quarter of the base: it merges
    fresh = ~base.contains(more.s, more.p, more.o)
    zeros = np.zeros(int(fresh.sum()), dtype=np.int64)
    delta = make_delta(more.s[fresh], more.p[fresh], more.o[fresh], zeros, 0)
    again = LayeredGraph(unordered, (delta,)).compacted({0: 10})
    assert not again.deltas
    assert _rows(again.base) == sorted(set(_rows(base)) | set(_rows(more)))
