"""The rows a window reports, as an index matrix into their distinct terms.

A report names few distinct terms many times (the predicate of every
triple, the sensor of every reading), so it is kept as each distinct term
once and, per row and column, the position of its term: decoding is a
distinct ID at a time, and the SSE writer spells each distinct term's JSON
once and assembles the rows from those pieces
(:func:`~engine.sparql.results.json_results.write_json_indexed`).

The terms are decoded when the window is reported, while the report
policy still holds the IDs, so an event stays right however long it is
retained (or replayed after ``Last-Event-ID``, or kept by a checkpoint):
it names no ID that the dictionary may free and give to another term.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.rdf import Term
from engine.store.distinct_ids import unique_inverse

#: decodes a column of IDs (or keys) into terms (None: unbound)
Decode = Callable[[np.ndarray], list]


@dataclass(frozen=True, eq=False)
class ReportedRows:
    """``index`` (n rows x k columns) holds positions in ``terms`` (an object
    array of terms, None for unbound). Never changed in place: the copies of
    a query and the events they report share one."""

    terms: np.ndarray
    index: np.ndarray

    @classmethod
    def empty(cls, width: int) -> ReportedRows:
        return cls(_objects([]), np.zeros((0, width), dtype=np.intp))

    @classmethod
    def of_ids(cls, ids: np.ndarray, decode: Decode) -> ReportedRows:
        """The rows of the ID matrix ``ids``, each distinct ID decoded once."""
        if not ids.size:
            return cls(_objects([]), np.zeros(ids.shape, dtype=np.intp))
        distinct, codes = unique_inverse(ids.reshape(-1))
        return cls(_objects(decode(distinct)), codes.reshape(ids.shape))

    @classmethod
    def of_tuples(cls, rows: Sequence[Sequence[Term | None]], width: int) -> ReportedRows:
        """Rows given as tuples of terms (equal terms share a position)."""
        positions: dict[Term | None, int] = {}
        index = np.array([[positions.setdefault(term, len(positions)) for term in row] for row in rows],
                         dtype=np.intp).reshape(len(rows), width)
        return cls(_objects(list(positions)), index)

    def __len__(self) -> int:
        return len(self.index)

    @property
    def width(self) -> int:
        return self.index.shape[1]

    def tuples(self) -> list[tuple[Term | None, ...]]:
        """The rows as tuples of terms."""
        if not self.width:
            return [()] * len(self)
        return list(zip(*[self.terms[column].tolist() for column in self.index.T], strict=True))

    def take(self, rows: np.ndarray) -> ReportedRows:
        """The rows selected by ``rows`` (positions or a mask), the terms no
        longer named dropped."""
        return ReportedRows(self.terms, self.index[rows]).compact()

    def split(self, bounds: Sequence[int]) -> list[ReportedRows]:
        """Rows ``[bounds[i], bounds[i + 1])`` as one report each, with only
        the terms it names, as :meth:`take` gives them: one hash pass over all
        the parts' positions (a group's report split by query), where a take per
        part would pay NumPy's per-call cost a part at a time."""
        count = len(bounds) - 1
        if not self.index.size:
            return [ReportedRows(self.terms[:0], self.index[bounds[i]:bounds[i + 1]]) for i in range(count)]
        n, width = self.index.shape
        part = np.repeat(np.arange(count), np.diff(bounds))
        keys = (part[:, None] * len(self.terms) + self.index).astype(np.int64, copy=False).ravel()
        distinct, inverse = unique_inverse(keys)
        terms = self.terms[distinct % len(self.terms)]
        starts = np.searchsorted(distinct // len(self.terms), np.arange(count + 1))
        # positions within each part's own terms, for all parts in one subtraction
        local = inverse.reshape(n, width) - starts[part][:, None]
        starts = starts.tolist()
        return [ReportedRows(terms[starts[i]:starts[i + 1]], local[bounds[i]:bounds[i + 1]])
                for i in range(count)]

    def repeated(self, counts: np.ndarray) -> ReportedRows:
        """Each row repeated ``counts`` times (none if 0), in order."""
        return ReportedRows(self.terms, np.repeat(self.index, counts, axis=0))

    def compact(self) -> ReportedRows:
        """The same rows with only the terms they name (a count per term, no sort)."""
        used = np.bincount(self.index.ravel(), minlength=len(self.terms)) > 0
        if used.all():
            return self
        position = np.cumsum(used) - 1
        return ReportedRows(self.terms[used], position[self.index])


def joined(first: ReportedRows, second: ReportedRows, at_first: np.ndarray) -> ReportedRows:
    """Rows from two reports: row ``i`` is ``first``'s row ``at_first[i]``
    where that is not negative, and else the next row of ``second`` (taken in
    order)."""
    old = at_first >= 0
    index = np.empty((len(at_first), first.width), dtype=np.intp)
    index[old] = first.index[at_first[old]]
    index[~old] = second.index + len(first.terms)
    return ReportedRows(np.concatenate([first.terms, second.terms]), index).compact()


def _objects(terms: list) -> np.ndarray:
    """Terms as a NumPy object array (filled one by one: a term is never
    unpacked as a sequence)."""
    out = np.empty(len(terms), dtype=object)
    for i, term in enumerate(terms):
        out[i] = term
    return out
