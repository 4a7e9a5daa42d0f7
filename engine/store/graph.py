"""The one interface of a stored graph, whatever holds its triples.

Five kinds implement :class:`Graph`: :class:`~engine.store.memory_graph.MemoryGraph`
(sorted in-memory arrays), :class:`~engine.store.compact_graph.CompactGraph`
(a loaded store's memory-mapped CSR), :class:`~engine.store.union_graph.UnionGraph`
(disjoint members read as one), :class:`~engine.store.layered_graph.LayeredGraph`
(a base plus timestamped stream deltas) and :class:`~engine.store.trimmed_graph.TrimmedGraph`
(a large base less the triples deleted from it); the stream index adds
:class:`~engine.store.timed_triples.TimedTriples` (one indexed batch), its
:class:`~engine.store.timed_triples.TimeSlice` and
:class:`~engine.store.window_graph.WindowGraph` (a window read in place). The executor, property paths,
updates and the stream engine see only this protocol, so a graph's kind is
the store's business alone.

Every operation is column-at-a-time: a pattern is matched for a whole column
of bound values in one call, never row by row. The one exception is
:func:`neighbour_reader`, for explorations one or a few vertices wide.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from engine.store.memory_graph import MemoryGraph

#: what :meth:`Graph.match` returns: (input row, s, p, o) per matching triple
Matches = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: one vertex's neighbours (positive IDs, repeats possible), read by index from Python
NeighbourReader = Callable[[int], Sequence[int]]


class Graph(Protocol):
    """A set of (s, p, o) triples of term IDs."""

    @property
    def s(self) -> np.ndarray:
        """Subject of every triple (int64; aligned with ``p`` and ``o``)."""
        ...

    @property
    def p(self) -> np.ndarray:
        """Predicate of every triple."""
        ...

    @property
    def o(self) -> np.ndarray:
        """Object of every triple."""
        ...

    def __len__(self) -> int:
        """Number of triples."""
        ...

    def count(self, s: int | None, p: int | None, o: int | None) -> int:
        """Exact number of triples matching constants (None = any): the
        planner's cardinality source."""
        ...

    def degree_stats(self, p: int | None) -> tuple[int, int, int]:
        """(matching triples, distinct subjects, distinct objects) of predicate
        ``p``, or of the whole graph when ``p`` is None: the planner's fan-out
        estimates (an upper bound for the distinct counts of a union)."""
        ...

    def match(
        self, s: np.ndarray | None, p: np.ndarray | None, o: np.ndarray | None, n_rows: int
    ) -> Matches:
        """Match one triple pattern for each of ``n_rows`` input rows: a column
        per bound position (None = variable). Returns (input row, s, p, o) of
        every match, grouped by input row."""
        ...

    def contains(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
        """Boolean mask: is each (s[i], p[i], o[i]) in the graph?"""
        ...

    def with_changes(self, add: MemoryGraph | None, remove: MemoryGraph | None) -> Graph:
        """A new graph: this one minus ``remove`` plus ``add`` (copy on write,
        so readers of this one keep a consistent snapshot); in memory, and
        compact when this one is."""
        ...


def contains_by_match(graph: Graph, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
    """:meth:`Graph.contains` for a graph that matches fully bound patterns."""
    rows, *_ = graph.match(s, p, o, len(s))
    found = np.zeros(len(s), dtype=bool)
    found[rows] = True
    return found


def neighbour_reader(graph: Graph, predicate: int | None, backward: bool,
                     excluded: frozenset[int] = frozenset()) -> NeighbourReader | None:
    """A read of one vertex's neighbour list at a time: its objects through
    ``predicate`` (its subjects when ``backward``), or, with ``predicate``
    None, its neighbours through every predicate not in ``excluded``.

    Why: a property path that explores one vertex at a time (a chain
    100,000 links deep is 100,000 levels of one vertex) would pay NumPy's
    fixed cost of about a microsecond per call, a dozen calls per level, in
    :meth:`Graph.match`; reading the vertex's list by index from Python costs
    about as much as one of those calls. None when the graph's kind has no
    such read (remote shards, windows read in place): callers then use
    :meth:`Graph.match`. Kinds that have one define ``neighbour_reader``
    with this signature."""
    make = getattr(graph, "neighbour_reader", None)
    return None if make is None else make(predicate, backward, excluded)
