"""One stream batch, indexed once at ingest and read by every window that spans it.

Wukong+S keeps a stream index beside the store: each batch's triples sorted
in the store's key orders, so that a window is the few batches it spans and a
query exploring from a bound vertex touches only that key's entries. Here a
batch is a :class:`TimedTriples`: a :class:`MemoryGraph` that keeps the
batch's rows as they arrived (duplicates included) and carries each row's
timestamp through its sort orders. A window that covers the whole batch reads
it as it is; a window whose border cuts through it reads a :class:`TimeSlice`,
which filters the *matches* by timestamp, so the cost follows the matches,
never the batch.

Batches are immutable and shared: the orders are built once (eagerly for the
predicate-first orders by :meth:`TimedTriples.build_index`, lazily for the
others) and every registered query reads the same arrays.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from engine.store.graph import Graph, Matches, contains_by_match
from engine.store.memory_graph import Between, MemoryGraph

#: how many stored graphs a batch keeps its rows outside of (see TimedTriples.without)
WITHOUT_KEPT = 4

#: odd 64-bit multipliers of the triple fingerprint (any odd constants do)
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))


def fingerprints(s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each triple: equal triples have equal fingerprints (the
    converse almost always holds; callers treat a match as "maybe equal")."""
    with np.errstate(over="ignore"):
        return (s.view(np.uint64) * _MIX[0]) ^ (p.view(np.uint64) * _MIX[1]) ^ (o.view(np.uint64) * _MIX[2])


class TimedTriples(MemoryGraph):
    """The triples of one or more consecutive stream batches, with a timestamp per row.

    ``maybe_repeats`` is False only when no triple of these rows occurs twice
    among them or in the batches that were live before them: a window made of
    such batches needs no deduplication of its matches (see
    :class:`~engine.store.window_graph.WindowGraph`)."""

    def __init__(self, ts: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray,
                 maybe_repeats: bool) -> None:
        super().__init__(s, p, o, unique=True)
        self.ts = np.asarray(ts, dtype=np.int64)
        self._carried = self.ts
        self.maybe_repeats = maybe_repeats
        #: per stored graph (by identity, holding it): this batch's rows outside it
        self._without: dict[int, tuple[Graph, TimedTriples]] = {}

    @cached_property
    def min_ts(self) -> int:
        return int(self.ts[0]) if len(self.ts) else 0

    @cached_property
    def max_ts(self) -> int:
        return int(self.ts[-1]) if len(self.ts) else 0

    @cached_property
    def sorted_fingerprints(self) -> np.ndarray:
        """The rows' fingerprints, sorted: later batches test their rows against them."""
        return np.sort(fingerprints(self.s, self.p, self.o))

    def build_index(self) -> None:
        """Build the orders every window read starts from (by predicate and
        subject, by predicate and object), and the planner's statistics, now:
        at ingest, once, instead of in the first query that reads the batch."""
        _ = self.pso, self.pos, self._predicate_stats

    def without(self, graph: Graph) -> TimedTriples:
        """The batch's rows that are not triples of ``graph``: the batch itself
        when none is, else a new indexed batch. Worked out once per batch and
        graph, and kept on the batch (for the last WITHOUT_KEPT graphs): a
        C-SPARQL window merged with an unchanging FROM graph reads each batch
        at every step it spans, and would otherwise test every match against
        the stored graph again at each one."""
        found = self._without.get(id(graph))
        if found is not None and found[0] is graph:
            return found[1]
        outside = self._rows_outside(graph)
        kept = dict(self._without)  # replaced, not changed: queries run in several threads
        while len(kept) >= WITHOUT_KEPT:
            kept.pop(next(iter(kept)))
        kept[id(graph)] = (graph, outside)
        self._without = kept
        if outside is not self:
            outside._without = {id(graph): (graph, outside)}
        return outside

    def outside(self, graph: Graph) -> bool:
        """Whether no row of this batch is a triple of ``graph`` (known
        without a look-up only once :meth:`without` said so)."""
        found = self._without.get(id(graph))
        return found is not None and found[0] is graph and found[1] is self

    def _rows_outside(self, graph: Graph) -> TimedTriples:
        """The rows that are not triples of ``graph``; only the predicates the
        graph has at all are looked up."""
        predicates = np.unique(self.p)
        shared = [q for q in predicates.tolist() if graph.count(None, q, None)]
        if not shared:
            return self
        candidates = np.isin(self.p, shared) if len(shared) < len(predicates) else slice(None)
        stored = np.zeros(len(self.p), dtype=bool)
        stored[candidates] = graph.contains(self.s[candidates], self.p[candidates], self.o[candidates])
        if not stored.any():
            return self
        keep = ~stored
        outside = TimedTriples(self.ts[keep], self.s[keep], self.p[keep], self.o[keep], self.maybe_repeats)
        outside.build_index()
        return outside

    def between(self, start: int, end: int) -> MemoryGraph:
        """The rows with ``start <= ts < end``: the batch itself when they all
        are, else a :class:`TimeSlice` of it."""
        if start <= self.min_ts and self.max_ts < end:
            return self
        return TimeSlice(self, start, end)


class TimeSlice:
    """The rows of a :class:`TimedTriples` with ``start <= ts < end``.

    Matches are those of the batch, filtered by the timestamp carried in its
    orders; counts and statistics are the batch's (an upper bound, which is
    all the planner needs). Only the batches at a window's borders are read
    this way."""

    def __init__(self, batch: TimedTriples, start: int, end: int) -> None:
        self.batch = batch
        self.start = start
        self.end = end
        self.maybe_repeats = batch.maybe_repeats
        #: which of the batch's rows the slice reads, by their carried timestamps
        self._visible = Between(start, end)

    def without(self, graph: Graph) -> TimeSlice:
        """This slice of the batch's rows outside ``graph`` (see :meth:`TimedTriples.without`)."""
        outside = self.batch.without(graph)
        return self if outside is self.batch else TimeSlice(outside, self.start, self.end)

    def outside(self, graph: Graph) -> bool:
        return self.batch.outside(graph)

    @cached_property
    def _rows(self) -> np.ndarray:
        return self._visible(self.batch.ts)

    @property
    def ts(self) -> np.ndarray:
        return self.batch.ts[self._rows]

    @property
    def s(self) -> np.ndarray:
        return self.batch.s[self._rows]

    @property
    def p(self) -> np.ndarray:
        return self.batch.p[self._rows]

    @property
    def o(self) -> np.ndarray:
        return self.batch.o[self._rows]

    def __len__(self) -> int:
        # a batch's rows arrive in timestamp order: two binary searches, no scan
        ts = self.batch.ts
        return int(np.searchsorted(ts, self.end, side="left") - np.searchsorted(ts, self.start, side="left"))

    def count(self, s: int | None, p: int | None, o: int | None) -> int:
        return self.batch.count(s, p, o)

    def degree_stats(self, p: int | None) -> tuple[int, int, int]:
        return self.batch.degree_stats(p)

    def match(self, s: np.ndarray | None, p: np.ndarray | None, o: np.ndarray | None,
              n_rows: int) -> Matches:
        return self.batch.match_where(s, p, o, n_rows, self._visible)

    def contains(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
        return contains_by_match(self, s, p, o)

    def with_changes(self, add: MemoryGraph | None, remove: MemoryGraph | None) -> MemoryGraph:
        return MemoryGraph(self.s, self.p, self.o).with_changes(add, remove)
