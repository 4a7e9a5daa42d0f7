"""A window's answer as ID columns, and multisets of such rows in NumPy.

A continuous query's answer is a matrix of term IDs, a row per solution (a
column per projected variable; CONSTRUCT: subject, predicate, object), with
what decodes it. Report policies compare answers as multisets of rows
(:mod:`~engine.stream.report_policy`); here the rows are grouped by sorting
the matrix (one ``np.lexsort``), so equal rows are found without a Python
object per row, and only the rows that are reported are decoded.

IDs are what is compared, so they must name the same term in both answers:
the report policy holds the IDs of the rows it keeps (a term is then never
freed and its ID never reused while a kept row names it), and gives terms
that the dictionary does not number (values computed by the query) keys of
its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from engine.rdf import TermDictionary
from engine.store.distinct_ids import distinct_sorted, row_groups, row_hashes
from engine.stream.reported_rows import Decode, ReportedRows


@dataclass(eq=False)
class WindowRows:
    """An answer: ``ids`` (n rows x k columns, 0 unbound, negative IDs local to
    ``decode``), decoded on demand, or rows decoded already (``ids`` None).
    ``dictionary`` numbers the positive IDs."""

    ids: np.ndarray | None
    dictionary: TermDictionary | None = None
    decode: Decode | None = None
    _reported: ReportedRows | None = field(default=None, repr=False)

    @classmethod
    def of_reported(cls, rows: ReportedRows, dictionary: TermDictionary | None = None) -> WindowRows:
        """An answer whose rows are decoded (a window's answer kept across
        windows: its IDs may be freed by then, its terms stay)."""
        return cls(None, dictionary, _reported=rows)

    def __len__(self) -> int:
        return len(self._reported) if self.ids is None else len(self.ids)

    def reported(self) -> ReportedRows:
        """The rows decoded (each distinct ID once), made once."""
        if self._reported is None:
            self._reported = ReportedRows.of_ids(self.ids, self.decode)
        return self._reported

    def rows(self) -> list[tuple]:
        """The rows as tuples of terms."""
        return self.reported().tuples()

    def detached(self) -> WindowRows:
        """The same answer as decoded rows only, safe to keep past this window."""
        return WindowRows.of_reported(self.reported(), self.dictionary)

    def take(self, start: int, end: int) -> WindowRows:
        """Rows ``[start, end)``."""
        if self.ids is None:
            return WindowRows.of_reported(self._reported.take(slice(start, end)), self.dictionary)
        reported = None if self._reported is None else self._reported.take(slice(start, end))
        return WindowRows(self.ids[start:end], self.dictionary, self.decode, reported)


def decode_rows(ids: np.ndarray, decode: Decode) -> list[tuple]:
    """Rows of ``ids`` as tuples of terms, a column decoded at a time."""
    if not ids.shape[1]:
        return [()] * len(ids)
    return list(zip(*[decode(column) for column in ids.T], strict=True))


def group_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, group)``: the position of the first occurrence of each
    distinct row, in order of first occurrence, and the group of each row
    (an index into ``first``). One hash pass over a 64-bit hash per row
    (:func:`~engine.store.distinct_ids.row_groups`); should two different
    rows share a hash, the rows are sorted column by column instead."""
    n = len(rows)
    if not rows.shape[1] or n == 0:
        return np.zeros(min(n, 1), dtype=np.int64), np.zeros(n, dtype=np.int64)
    grouped = row_groups(list(rows.T))
    if grouped is not None:
        return grouped
    keys = row_hashes(list(rows.T))  # two different rows share a hash: sort them
    order = np.argsort(keys)
    ordered = rows[order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    if rows.shape[1] > 1:
        ordered_keys = keys[order]
        if (starts[1:] & (ordered_keys[1:] == ordered_keys[:-1])).any():  # two rows, one hash
            order = np.lexsort(rows.T[::-1])
            ordered = rows[order]
            starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    sorted_group = np.cumsum(starts) - 1
    first = np.minimum.reduceat(order, np.flatnonzero(starts))
    by_occurrence = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int64)
    rank[by_occurrence] = np.arange(len(first))
    group = np.empty(n, dtype=np.int64)
    group[order] = rank[sorted_group]
    return first[by_occurrence], group


@dataclass(frozen=True, eq=False)
class IdMultiset:
    """Distinct rows of keys (``rows``, in order of first occurrence) with how
    many times each occurs (``counts``, all positive). Never changed in
    place: copies of a query share one."""

    rows: np.ndarray
    counts: np.ndarray
    #: the rows decoded, kept by a policy that reports whole results from
    #: changes (None: not kept)
    decoded: ReportedRows | None = None

    @classmethod
    def empty(cls, width: int) -> IdMultiset:
        return cls(np.zeros((0, width), dtype=np.int64), np.zeros(0, dtype=np.int64))

    @classmethod
    def of(cls, rows: np.ndarray, decoded: ReportedRows | None = None) -> IdMultiset:
        """The multiset of ``rows`` (``decoded``: the rows decoded, to keep)."""
        first, group = group_rows(rows)
        counts = np.bincount(group, minlength=len(first)).astype(np.int64)
        return cls(rows[first], counts, None if decoded is None else decoded.take(first))

    def __len__(self) -> int:
        """Rows counted with their repetitions."""
        return int(self.counts.sum())

    def elements(self) -> np.ndarray:
        """Every row, repeated as often as it occurs."""
        return np.repeat(self.rows, self.counts, axis=0)

    @cached_property
    def term_ids(self) -> np.ndarray:
        """The distinct dictionary IDs the rows name (what a policy holds)."""
        return distinct_sorted(self.rows[self.rows > 0])


def combine(parts: list[tuple[np.ndarray, np.ndarray]], width: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, counts, first)``: the distinct rows of the parts, each
    ``(rows, weights)`` (a row may repeat), in order of first occurrence, the
    parts in the order given; per distinct row, its weights summed in each
    part (a column per part); and where it first occurs in the parts, one
    after the other."""
    rows = np.concatenate([r for r, _ in parts]) if parts else np.zeros((0, width), np.int64)
    first, group = group_rows(rows)
    counts = np.zeros((len(first), len(parts)), dtype=np.int64)
    at = 0
    for k, (part, weights) in enumerate(parts):
        size = len(part)
        counts[:, k] = np.bincount(group[at:at + size], weights=weights, minlength=len(first))
        at += size
    return rows[first], counts, first

