"""A large graph read without the triples deleted from it (tombstones).

A SPARQL DELETE used to rebuild the graph it touched: a compact graph of
10M triples took 6.2 s and 1.9 GB for one deleted triple (measured in
process), and a 100M store would not have fit this machine's memory. Now
the deleted triples of a large base are kept apart, sorted, as the
``gone`` set, and every read of the base leaves them out: a count
subtracts theirs, a match drops its rows that ``gone`` holds (probed only
when the pattern's constants fall within ``gone``'s ID ranges), and a
neighbour list of a vertex that lost an edge is read again through a
match. Inserting a deleted triple again puts it in a delta as for any new
triple (the base no longer shows it). The base is rebuilt without them
only once they are a quarter of it (:meth:`TrimmedGraph.due`,
:meth:`~engine.store.layered_graph.LayeredGraph.compacted`), as deltas
join it, and a checkpoint writes the base's files without them a chunk
at a time (:mod:`engine.durability.checkpoint`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.store.compact_graph import CompactGraph, compact_or_memory
from engine.store.graph import Graph, Matches, NeighbourReader, neighbour_reader
from engine.store.memory_graph import DerivedColumns, MemoryGraph, all_columns
from engine.store.union_graph import column_span, may_hold

#: an in-memory base smaller than this is simply rebuilt by a delete
TRIM_MIN = 65536
#: the tombstones are merged into the base once they are 1/MERGE_SHARE of it
MERGE_SHARE = 4


class TrimmedGraph(DerivedColumns):
    """``base`` (compact or in memory) minus ``gone``: triples the base holds
    (sorted, distinct), behind the :class:`~engine.store.graph.Graph` interface."""

    def __init__(self, base: Graph, gone: MemoryGraph) -> None:
        self.base = base
        self.gone = gone

    def __len__(self) -> int:
        return len(self.base) - len(self.gone)

    @property
    def compact(self) -> bool:
        """Whether the base is compact CSR arrays (which never hold a value ID)."""
        return isinstance(self.base, CompactGraph)

    def due(self) -> bool:
        """Whether the tombstones are enough to rebuild the base without them."""
        return len(self.gone) * MERGE_SHARE >= max(len(self.base), TRIM_MIN)

    def rebuilt(self) -> Graph:
        """The base without the tombstones, built anew (compact if it was)."""
        s, p, o = self._columns
        return compact_or_memory(s, p, o) if self.compact else MemoryGraph(s, p, o, unique=True)

    def count(self, s: int | None, p: int | None, o: int | None) -> int:
        return self.base.count(s, p, o) - self.gone.count(s, p, o)

    def degree_stats(self, p: int | None) -> tuple[int, int, int]:
        """The base's, less the deleted triples (its distinct counts are then upper bounds)."""
        triples, subjects, objects = self.base.degree_stats(p)
        return triples - self.gone.count(None, p, None), subjects, objects

    def match(
        self, s: np.ndarray | None, p: np.ndarray | None, o: np.ndarray | None, n_rows: int
    ) -> Matches:
        rows, ss, pp, oo = self.base.match(s, p, o, n_rows)
        # a delete touches few subjects and predicates: most patterns' constants miss its ID ranges
        if not len(rows) or not may_hold(self.gone, (column_span(s), column_span(p), column_span(o))):
            return rows, ss, pp, oo
        keep = ~self.gone.contains(ss, pp, oo)
        return rows[keep], ss[keep], pp[keep], oo[keep]

    @property
    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Derived on each use, as the compact base's are."""
        s, p, o = all_columns(self.base)
        keep = ~self.gone.contains(s, p, o)
        return s[keep], p[keep], o[keep]

    def contains(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
        return self.base.contains(s, p, o) & ~self.gone.contains(s, p, o)

    def neighbour_reader(self, predicate: int | None, backward: bool,
                         excluded: frozenset[int] = frozenset()) -> NeighbourReader | None:
        """The base's lists, kept as they are (with their compiled layout)
        when no tombstone has the predicate; otherwise a vertex that lost an
        edge there is read through :meth:`match`."""
        read = neighbour_reader(self.base, predicate, backward, excluded)
        if read is None:
            return None
        gone = self.gone
        touched = gone.p == predicate if predicate is not None else ~np.isin(gone.p, list(excluded))
        if not touched.any():
            return read
        losers = set((gone.o if backward else gone.s)[touched].tolist())
        predicates = None if predicate is None else np.array([predicate], dtype=np.int64)

        def trimmed_read(vertex: int) -> Sequence[int]:
            if vertex not in losers:
                return read(vertex)
            at = np.array([vertex], dtype=np.int64)
            if backward:
                _, ends, pp, _ = self.match(None, predicates, at, 1)
            else:
                _, _, pp, ends = self.match(at, predicates, None, 1)
            if predicate is None and excluded:
                ends = ends[~np.isin(pp, list(excluded))]
            return ends.tolist()

        return trimmed_read

    def with_changes(self, add: MemoryGraph | None, remove: MemoryGraph | None) -> Graph:
        return self.rebuilt().with_changes(add, remove)


def without_triples(base: Graph, gone: MemoryGraph) -> Graph:
    """``base`` without the triples of ``gone`` it holds: tombstones on a
    large base (no copy of it), a small in-memory base rebuilt."""
    held = base.contains(gone.s, gone.p, gone.o)
    if not held.any():
        return base
    removed = MemoryGraph(gone.s[held], gone.p[held], gone.o[held])
    if isinstance(base, TrimmedGraph):
        earlier = base.gone
        return TrimmedGraph(base.base, MemoryGraph(np.concatenate([earlier.s, removed.s]),
                                                   np.concatenate([earlier.p, removed.p]),
                                                   np.concatenate([earlier.o, removed.o])))
    if isinstance(base, MemoryGraph) and len(base) < TRIM_MIN:
        return base.with_changes(None, removed)
    return TrimmedGraph(base, removed)


def is_compact(graph: Graph) -> bool:
    """Whether ``graph`` is compact CSR arrays, trimmed or not (so it holds no value ID)."""
    return isinstance(graph, CompactGraph) or (isinstance(graph, TrimmedGraph) and graph.compact)
