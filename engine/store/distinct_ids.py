"""The distinct values of an ID column and each row's position among them.

What ``np.unique(values, return_inverse=True)`` gives, through the compiled
hash pass of :mod:`~engine.store.distinct_ids_kernel` where it applies (a
column of 64-bit integers: IDs, packed keys): NumPy sorts the whole column
with a stable argsort, the hash pass sorts only the distinct values, and the
columns a join or a report holds repeat their values (3-10x faster
measured there). Anything else goes to NumPy.
"""

from __future__ import annotations

import numpy as np

from engine.store.distinct_ids_kernel import first_occurrence_codes, unique_with_codes

#: the kernel's table numbers values with 32-bit codes
KERNEL_LIMIT = 1 << 30


def unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, inverse)``: the sorted distinct values of the 1-D column
    ``values`` and, per value, its index among them (as ``np.unique``)."""
    if values.dtype != np.int64 or values.ndim != 1 or len(values) >= KERNEL_LIMIT:
        return np.unique(values, return_inverse=True)
    return unique_with_codes(np.ascontiguousarray(values))


def first_occurrences(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, codes)``: the position of each distinct value's first
    occurrence, in the order they occur, and per value the index of its
    distinct value among them: one hash pass, no sort (codes are numbered
    as values first occur, so a first occurrence is where the running
    largest code grows)."""
    if not len(values):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if values.dtype != np.int64 or values.ndim != 1 or len(values) >= KERNEL_LIMIT:
        distinct, first, inverse = np.unique(values, return_index=True, return_inverse=True)
        by_occurrence = np.argsort(first, kind="stable")
        rank = np.empty(len(first), dtype=np.int64)
        rank[by_occurrence] = np.arange(len(first))
        return first[by_occurrence].astype(np.int64), rank[inverse]
    _, codes = first_occurrence_codes(np.ascontiguousarray(values))
    grows = np.empty(len(codes), dtype=bool)
    grows[0] = True
    running = np.maximum.accumulate(codes)
    grows[1:] = running[1:] > running[:-1]
    return np.flatnonzero(grows), codes.astype(np.int64, copy=False)


def distinct_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, counts)``: each distinct value of a column (in the order
    they occur) and how often it occurs; by the hash pass for an ID column."""
    if values.dtype != np.int64 or values.ndim != 1 or len(values) >= KERNEL_LIMIT:
        return np.unique(values, return_counts=True)
    first, codes = first_occurrences(values)
    return values[first], np.bincount(codes, minlength=len(first))


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``: the distinct values of a column, sorted; by the
    hash pass for an ID column (only the distinct values are sorted)."""
    if values.dtype != np.int64 or values.ndim != 1 or len(values) >= KERNEL_LIMIT:
        return np.unique(values)
    distinct, _ = first_occurrence_codes(np.ascontiguousarray(values))
    return np.sort(distinct)


def unique_index_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True, return_inverse=True)``: the
    sorted distinct values, each one's first position, and each value's
    index among them; by the hash pass for an ID column (a batch's term
    hashes: only the distinct values are sorted)."""
    if values.dtype != np.int64 or values.ndim != 1 or len(values) >= KERNEL_LIMIT or not len(values):
        return np.unique(values, return_index=True, return_inverse=True)
    first, codes = first_occurrences(values)
    order = np.argsort(values[first])
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order), dtype=np.intp)
    return values[first[order]], first[order], rank[codes]


#: odd 64-bit multipliers of the row hash (splitmix64's)
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9))


def row_hashes(columns: list[np.ndarray]) -> np.ndarray:
    """A 64-bit hash of each row of the integer ``columns`` (multiply and
    xor-shift per column)."""
    h = np.zeros(len(columns[0]), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in columns:
            h = (h ^ column.astype(np.uint64, copy=False)) * _MIX[0]
            h ^= h >> np.uint64(31)
            h *= _MIX[1]
        h ^= h >> np.uint64(29)
    return h.view(np.int64)


def row_groups(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(first, group)`` of the rows of ``columns`` (equal length, at least
    one): each distinct row's first position, in the order they occur, and
    each row's index among them, by one hash pass over a hash per row; each
    row is then compared whole with its group's first. None when two
    different rows share a hash (the caller then sorts)."""
    keys = columns[0] if len(columns) == 1 else row_hashes(columns)
    first, group = first_occurrences(keys)
    if len(columns) > 1 and not all(np.array_equal(column[first][group], column) for column in columns):
        return None
    return first, group
