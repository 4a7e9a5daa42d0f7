"""The content of a window, read in place from the stream index, optionally
merged with stored graphs.

A window ``[t - r, t)`` of one stream is the batches it spans (whole, or a
:class:`~engine.store.timed_triples.TimeSlice` at its borders); a C-SPARQL
query merges the windows of all its streams. This graph matches a pattern in
each batch and concatenates the matches, so that evaluating a window costs
the matches, not the window's size, and nothing is copied or sorted per
window. Three things make the union a set, as SEMANTICS.md wants:

* a triple may occur in several batches of one stream (a sensor repeating a
  reading): the matches are deduplicated, but only when some batch of the
  window says it may repeat a triple (each batch tested its rows once, at
  ingest, against the live batches before it);
* two streams may carry the same triple: matches are deduplicated when they
  come from the windows of more than one stream (a pattern with a bound
  predicate rarely matches in two streams);
* C-SPARQL merges the windows with the stored ``FROM`` graphs (``beside``):
  a window match that is also a stored triple is dropped, and only for the
  predicates the stored graph has at all, so a stream predicate that no
  stored triple uses costs one count per call. A query whose FROM graph does
  not change from step to step reads its batches without the stored triples
  instead (:meth:`~engine.store.timed_triples.TimedTriples.without`, worked
  out once per batch and kept across the steps that span it): then no match
  is looked up in the stored graph at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from engine.store.distinct_ids import row_groups
from engine.store.graph import Graph, Matches, NeighbourReader, neighbour_reader
from engine.store.memory_graph import EMPTY, SORTED_PROBE_MIN, DerivedColumns, MemoryGraph, expand_ranges
from engine.store.timed_triples import TimedTriples, TimeSlice


def distinct_rows(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group equal rows of the probe ``columns`` (the first column sorts first).

    Returns ``(firsts, groups, members)``: the index of one row per distinct
    row, in sorted order (so the probe keys built from them increase); group
    ``g`` is the input rows ``members[groups[g]:groups[g + 1]]``."""
    members = np.lexsort(columns[::-1]) if len(columns) > 1 else np.argsort(columns[0], kind="stable")
    ordered = [column[members] for column in columns]
    starts = np.zeros(len(members), dtype=bool)
    starts[0] = True
    for column in ordered:
        starts[1:] |= column[1:] != column[:-1]
    first_positions = np.flatnonzero(starts)
    groups = np.append(first_positions, len(members))
    return members[first_positions], groups, members


def distinct_matches(rows: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> Matches:
    """The matches without repeats (same input row, same triple), each
    where it first occurs: by hashing the matches (a window of repeated
    likes has thousands), sorting them only should two share a hash."""
    if len(rows) < 2:
        return rows, s, p, o
    grouped = row_groups([rows, s, p, o])
    firsts = distinct_rows([rows, s, p, o])[0] if grouped is None else grouped[0]
    return rows[firsts], s[firsts], p[firsts], o[firsts]


def _outside(part, graph: Graph) -> bool:
    """Whether ``part`` is known to hold no triple of ``graph``."""
    outside = getattr(part, "outside", None)
    return outside is not None and outside(graph)


class WindowGraph(DerivedColumns):
    """The :class:`~engine.store.graph.Graph` of the windows of a query: per
    stream window, its batch slices (``windows``), read as one set, plus the
    stored graph ``beside`` them if any."""

    def __init__(self, windows: Sequence[Sequence[TimedTriples | TimeSlice]],
                 beside: Graph | None = None) -> None:
        kept = ([part for part in parts if len(part)] for parts in windows)
        self.windows = [parts for parts in kept if parts]
        self.parts = [part for parts in self.windows for part in parts]
        self.beside = beside if beside is not None and len(beside) else None
        #: per window, whether its batches may repeat a triple among them
        self.repeats = [any(part.maybe_repeats for part in parts) for parts in self.windows]
        #: the parts not known to hold no triple of ``beside``: their matches are
        #: looked up there (all of them at once when no part is known to)
        self._unchecked = (set() if self.beside is None else
                           {id(part) for part in self.parts if not _outside(part, self.beside)})
        #: whether no part holds a triple of ``beside`` (no match needs a look-up there)
        self.disjoint = not self._unchecked
        self._checked_per_part = 0 < len(self._unchecked) < len(self.parts)

    def __len__(self) -> int:
        """Rows of the window (repeats counted) plus the stored triples."""
        return self.window_rows + (len(self.beside) if self.beside else 0)

    @cached_property
    def window_rows(self) -> int:
        """Rows of the windows alone (repeats counted): what a continuous
        query's held plan watches (:mod:`engine.sparql.plan.held_orders`)."""
        return sum(len(part) for part in self.parts)

    def count(self, s: int | None, p: int | None, o: int | None) -> int:
        total = sum(part.count(s, p, o) for part in self.parts)
        return total + (self.beside.count(s, p, o) if self.beside else 0)

    def degree_stats(self, p: int | None) -> tuple[int, int, int]:
        """Summed over the parts and the stored graph (the distinct counts are then an upper bound)."""
        totals = [0, 0, 0]
        for member in (*self.parts, *((self.beside,) if self.beside else ())):
            stats = member.degree_stats(p)
            for i in range(3):
                totals[i] += stats[i]
        return totals[0], totals[1], totals[2]

    def match(self, s: np.ndarray | None, p: np.ndarray | None, o: np.ndarray | None,
              n_rows: int) -> Matches:
        """The matches of every input row. Only the batches that hold the
        pattern's predicate are read; a long probe column is reduced to its
        distinct rows once here, not once per batch."""
        windows = self._windows_with(p)
        if not windows:
            return self.beside.match(s, p, o, n_rows) if self.beside else (EMPTY, EMPTY, EMPTY, EMPTY)
        bound = [column for column in (p, s, o) if column is not None]
        if n_rows <= SORTED_PROBE_MIN or not bound:
            return self._match_rows(windows, s, p, o, n_rows)
        firsts, groups, members = distinct_rows(bound)
        pick = [None if column is None else column[firsts] for column in (s, p, o)]
        found, ss, pp, oo = self._match_rows(windows, *pick, len(firsts))
        # each match of a distinct row is a match of every input row in its group
        which, at = expand_ranges(groups[found], groups[found + 1])
        return members[at], ss[which], pp[which], oo[which]

    def _windows_with(self, p: np.ndarray | None) -> list[tuple[list, bool]]:
        """Per stream window, its parts that hold predicate ``p`` when it is one
        constant (the batches' predicate statistics say), with its repeat flag."""
        windows = list(zip(self.windows, self.repeats, strict=True))
        if p is None or not len(p) or not bool((p == p[0]).all()):
            return windows
        predicate = int(p[0])
        kept = [([part for part in parts if part.degree_stats(predicate)[0]], repeats)
                for parts, repeats in windows]
        return [(parts, repeats) for parts, repeats in kept if parts]

    def _match_rows(self, windows, s, p, o, n_rows: int) -> Matches:
        found = self._window_matches(windows, s, p, o, n_rows)
        if self.beside is None:
            return found
        if not self.disjoint and not self._checked_per_part:
            found = self._not_stored(*found)
        stored = self.beside.match(s, p, o, n_rows)
        if not len(found[0]):
            return stored
        if not len(stored[0]):
            return found
        rows, ss, pp, oo = (np.concatenate([found[i], stored[i]]) for i in range(4))
        return rows, ss, pp, oo

    def _part_matches(self, part, s, p, o, n_rows: int) -> Matches:
        """The matches of one part; without the stored triples when some parts
        are known to hold none and this one is not."""
        found = part.match(s, p, o, n_rows)
        if self._checked_per_part and len(found[0]) and id(part) in self._unchecked:
            return self._not_stored(*found)
        return found

    def _window_matches(self, windows, s, p, o, n_rows: int) -> Matches:
        found = []
        repeats = False
        for parts, may_repeat in windows:
            results = [r for r in (self._part_matches(part, s, p, o, n_rows) for part in parts) if len(r[0])]
            if results:
                found.extend(results)
                repeats = repeats or may_repeat or len(found) > len(results)
        if not found:
            return EMPTY, EMPTY, EMPTY, EMPTY
        if len(found) == 1 and not repeats:
            return found[0]
        rows, ss, pp, oo = (np.concatenate([r[i] for r in found]) for i in range(4))
        return distinct_matches(rows, ss, pp, oo) if repeats else (rows, ss, pp, oo)

    def _not_stored(self, rows: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> Matches:
        """Drop the window matches that are stored triples too (the merge is a set)."""
        if not len(rows):
            return rows, s, p, o
        predicates = np.unique(p)
        shared = [q for q in predicates.tolist() if self.beside.count(None, q, None)]
        if not shared:
            return rows, s, p, o
        candidates = np.isin(p, shared) if len(shared) < len(predicates) else np.ones(len(p), dtype=bool)
        duplicate = np.zeros(len(rows), dtype=bool)
        duplicate[candidates] = self.beside.contains(s[candidates], p[candidates], o[candidates])
        keep = ~duplicate
        return rows[keep], s[keep], p[keep], o[keep]

    def neighbour_reader(self, predicate: int | None, backward: bool,
                         excluded: frozenset[int] = frozenset()) -> NeighbourReader | None:
        """The stored graph's reader (:func:`engine.store.graph.neighbour_reader`)
        when no window holds ``predicate``: the windows then add nothing to
        its lists (LSBench L6's ``foaf:knows`` beside a stream of likes), and
        the intersection kernel reads them in place. None otherwise."""
        if predicate is None or self.beside is None or self._windows_with(np.array([predicate])):
            return None
        return neighbour_reader(self.beside, predicate, backward, excluded)

    def contains(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
        found = np.zeros(len(s), dtype=bool)
        for member in (*self.parts, *((self.beside,) if self.beside else ())):
            found |= member.contains(s, p, o)
        return found

    @cached_property
    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every triple once (built only by the rare operators that scan a whole graph)."""
        members = [*self.parts, *((self.beside,) if self.beside else ())]
        if not members:
            return EMPTY, EMPTY, EMPTY
        whole = MemoryGraph(np.concatenate([m.s for m in members]), np.concatenate([m.p for m in members]),
                            np.concatenate([m.o for m in members]))
        return whole.s, whole.p, whole.o

    def with_changes(self, add: MemoryGraph | None, remove: MemoryGraph | None) -> MemoryGraph:
        return MemoryGraph(self.s, self.p, self.o).with_changes(add, remove)
