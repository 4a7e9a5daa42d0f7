"""A transaction's view of a sharded graph: the shards' state plus its own
writes, which reach the shards only at commit.

Updates read what they wrote earlier in the same request (``INSERT ...;
DELETE WHERE ...``), so the coordinator keeps the transaction's additions
and removals beside the snapshot it started from, as two disjoint sets. The
view is ``(base - removed) + added``; building it reads nothing from the
shards (stream absorption, which never reads its own writes, costs no
round trip), and a read filters the base's matches through the two sets.
"""

from __future__ import annotations

import numpy as np

from engine.store.graph import Graph, Matches, contains_by_match
from engine.store.memory_graph import EMPTY, DerivedColumns, MemoryGraph


def _minus(graph: MemoryGraph, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> MemoryGraph:
    if not len(graph) or not len(s):
        return graph
    keep = ~MemoryGraph(s, p, o).contains(graph.s, graph.p, graph.o)
    return MemoryGraph(graph.s[keep], graph.p[keep], graph.o[keep], unique=True)


def _plus(graph: MemoryGraph, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> MemoryGraph:
    if not len(s):
        return graph
    return MemoryGraph(np.concatenate([graph.s, s]), np.concatenate([graph.p, p]),
                       np.concatenate([graph.o, o]))


def _without(matches: Matches, graph: MemoryGraph) -> Matches:
    rows, s, p, o = matches
    if not len(graph) or not len(rows):
        return matches
    keep = ~graph.contains(s, p, o)
    return rows[keep], s[keep], p[keep], o[keep]


class PendingGraph(DerivedColumns):
    """``base`` minus ``removed`` plus ``added`` (``added`` and ``removed``
    disjoint; either may overlap the base)."""

    def __init__(self, base: Graph, added: MemoryGraph | None = None, removed: MemoryGraph | None = None
                 ) -> None:
        self.base = base
        self.added = added if added is not None else MemoryGraph.empty()
        self.removed = removed if removed is not None else MemoryGraph.empty()

    def with_added(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> PendingGraph:
        return PendingGraph(self.base, _plus(self.added, s, p, o), _minus(self.removed, s, p, o))

    def with_removed(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> PendingGraph:
        return PendingGraph(self.base, _minus(self.added, s, p, o), _plus(self.removed, s, p, o))

    def __len__(self) -> int:
        return self.count(None, None, None)

    def count(self, s: int | None, p: int | None, o: int | None) -> int:
        """Exact: the base's count, less its removed triples, plus the added
        ones it lacks (the two sets are asked of the base, which is rare)."""
        total = self.base.count(s, p, o)
        for graph, sign in ((self.removed, -1), (self.added, 1)):
            rows, ss, pp, oo = graph.match(*(None if v is None else np.array([v]) for v in (s, p, o)), 1)
            if len(rows):
                inside = self.base.contains(ss, pp, oo)
                total += sign * int(inside.sum() if sign < 0 else (~inside).sum())
        return total

    def degree_stats(self, p: int | None) -> tuple[int, int, int]:
        base, added = self.base.degree_stats(p), self.added.degree_stats(p)
        return tuple(a + b for a, b in zip(base, added, strict=True))

    def match(self, s: np.ndarray | None, p: np.ndarray | None, o: np.ndarray | None, n_rows: int
              ) -> Matches:
        found = self.base.match(s, p, o, n_rows)
        found = _without(_without(found, self.removed), self.added)
        if not len(self.added):
            return found
        more = self.added.match(s, p, o, n_rows)
        cols = [np.concatenate([a, b]) for a, b in zip(found, more, strict=True)]
        order = np.argsort(cols[0], kind="stable")
        return cols[0][order], cols[1][order], cols[2][order], cols[3][order]

    def contains(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
        return contains_by_match(self, s, p, o)

    @property
    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows, s, p, o = self.match(None, None, None, 1)
        return (s, p, o) if len(rows) else (EMPTY, EMPTY, EMPTY)

    def with_changes(self, add: MemoryGraph | None, remove: MemoryGraph | None) -> PendingGraph:
        graph = self
        if remove is not None and len(remove):
            graph = graph.with_removed(remove.s, remove.p, remove.o)
        if add is not None and len(add):
            graph = graph.with_added(add.s, add.p, add.o)
        return graph
