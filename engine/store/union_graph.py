"""A graph made of several disjoint graphs, read as one.

Two uses: a stored graph as a base plus small appended deltas (an LSM: a
stream batch appends a delta instead of rebuilding the base, see
:mod:`engine.store.layered_graph`), and the default graph of a continuous
query as its windows plus the stored graphs it names. Members never share a
triple (callers guarantee it), so a match is just the concatenation of the
members' matches and counts add up. A member held in memory (a delta) is
skipped when the ranges of its columns miss the values a pattern asks for,
a compact one when it has no edge of the pattern's predicate:
each member probed costs every pattern of every query a few NumPy calls,
and a delta of other predicates (a trickle of updates about something else)
would otherwise slow every query.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from engine.store.compact_graph import CompactGraph
from engine.store.graph import Graph, Matches, NeighbourReader, neighbour_reader
from engine.store.memory_graph import EMPTY, DerivedColumns, MemoryGraph, no_neighbours


class UnionGraph(DerivedColumns):
    """The :class:`~engine.store.graph.Graph` interface over disjoint member graphs."""

    def __init__(self, members: Sequence[Graph]) -> None:
        self.members = [m for m in members if len(m)]

    def __len__(self) -> int:
        return sum(len(m) for m in self.members)

    def _members_for(self, spans: Spans) -> list[Graph]:
        """The members that may hold a triple within ``spans`` (per position,
        the (lowest, highest) ID asked for, None: any)."""
        if len(self.members) == 1:
            return self.members
        return [m for m in self.members if may_hold(m, spans)]

    def count(self, s: int | None, p: int | None, o: int | None) -> int:
        spans = tuple(None if v is None else (v, v) for v in (s, p, o))
        return sum(m.count(s, p, o) for m in self._members_for(spans))

    def degree_stats(self, p: int | None) -> tuple[int, int, int]:
        """Summed over the members (distinct counts are then an upper bound)."""
        totals = [0, 0, 0]
        for member in self._members_for((None, None if p is None else (p, p), None)):
            stats = member.degree_stats(p)
            for i in range(3):
                totals[i] += stats[i]
        return totals[0], totals[1], totals[2]

    def match(
        self, s: np.ndarray | None, p: np.ndarray | None, o: np.ndarray | None, n_rows: int
    ) -> Matches:
        members = self._members_for(ColumnSpans((s, p, o))) if n_rows else self.members
        parts = [m.match(s, p, o, n_rows) for m in members]
        if not parts:
            return EMPTY, EMPTY, EMPTY, EMPTY
        if len(parts) == 1:
            return parts[0]
        rows, ss, pp, oo = (np.concatenate([part[i] for part in parts]) for i in range(4))
        return rows, ss, pp, oo

    @cached_property
    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.members:
            return EMPTY, EMPTY, EMPTY
        return (
            np.concatenate([m.s for m in self.members]),
            np.concatenate([m.p for m in self.members]),
            np.concatenate([m.o for m in self.members]),
        )

    def contains(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
        """Boolean mask: is each (s[i], p[i], o[i]) in the graph?"""
        found = np.zeros(len(s), dtype=bool)
        for member in self.members:
            rows, *_ = member.match(s, p, o, len(s))
            found[rows] = True
        return found

    def neighbour_reader(self, predicate: int | None, backward: bool,
                         excluded: frozenset[int] = frozenset()) -> NeighbourReader | None:
        """The members' lists one after the other (None unless every member
        has a reader); a member without the predicate is left out."""
        readers = self.member_readers(predicate, backward, excluded)
        if readers is None:
            return None
        if len(readers) == 1:
            return readers[0]
        if not readers:
            return no_neighbours

        def read(vertex: int) -> list[int]:
            found: list[int] = []
            for member in readers:
                found += member(vertex)
            return found

        return read

    def member_readers(self, predicate: int | None, backward: bool,
                       excluded: frozenset[int] = frozenset()) -> list[NeighbourReader] | None:
        """One reader per member that may have ``predicate``'s edges (None
        unless each has one): a caller that wants a vertex's list as parts,
        each a view of its member's arrays, rather than one joined copy."""
        spans = (None, None if predicate is None else (predicate, predicate), None)
        readers = [neighbour_reader(m, predicate, backward, excluded)
                   for m in self.members if may_hold(m, spans)]
        return None if any(r is None for r in readers) else readers  # type: ignore[return-value]

    def materialize(self) -> MemoryGraph:
        """One in-memory graph with the same triples (used before edits that delete)."""
        if len(self.members) == 1 and isinstance(self.members[0], MemoryGraph):
            return self.members[0]
        return MemoryGraph(self.s, self.p, self.o, unique=False)

    def with_changes(self, add: MemoryGraph | None, remove: MemoryGraph | None) -> MemoryGraph:
        return self.materialize().with_changes(add, remove)


def column_span(column: np.ndarray | None) -> tuple[int, int] | None:
    """(lowest, highest) value of a bound column, None for a free position."""
    if column is None or not len(column):
        return None
    if len(column) == 1:
        value = int(column[0])
        return value, value
    return int(column.min()), int(column.max())


#: per position (subject, predicate, object) the (lowest, highest) ID a
#: pattern asks for, None for any
Spans = Sequence[tuple[int, int] | None]


class ColumnSpans:
    """The spans of a match's bound columns, each computed when first asked
    for (two reductions of a column): a compact member needs the
    predicate's alone, and a delta that lacks the predicate needs no other."""

    __slots__ = ("_columns", "_spans")

    def __init__(self, columns: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]) -> None:
        self._columns = columns
        self._spans: list[tuple[int, int] | None | bool] = [False, False, False]  # False: not yet

    def __getitem__(self, position: int) -> tuple[int, int] | None:
        span = self._spans[position]
        if span is False:
            span = self._spans[position] = column_span(self._columns[position])
        return span  # type: ignore[return-value]


#: the positions a delta's ranges are checked in: the predicate first (a
#: delta of other predicates is skipped on it alone), then subject and object
_CHECK_ORDER = (1, 0, 2)


def may_hold(member: Graph, spans: Spans | ColumnSpans) -> bool:
    """False when ``member`` has no triple within ``spans``: one held in
    memory by its columns' ranges, compact CSR arrays by their predicates
    (for a pattern with one predicate); True for any other graph, which is
    simply probed."""
    if isinstance(member, CompactGraph):
        predicate = spans[1]
        return predicate is None or predicate[0] != predicate[1] or predicate[0] in member.predicate_ids
    if not isinstance(member, MemoryGraph):
        return True
    bounds = member.bounds
    if bounds is None:
        return False
    for position in _CHECK_ORDER:
        span = spans[position]
        lowest, highest = bounds[position]
        if span is not None and (span[1] < lowest or span[0] > highest):
            return False
    return True
