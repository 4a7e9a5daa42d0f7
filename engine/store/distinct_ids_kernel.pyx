# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The distinct values of an integer column and each value's position among
them, by hashing, compiled.

Why: a window's report is decoded a distinct term at a time and split by
query (engine/stream/reported_rows.py); ``np.unique(..., return_inverse=True)``
does that with a stable argsort, O(n log n), and was a tenth of a step of
K = 1000 registered queries (31,000 rows of two columns a step). One pass over
an open-addressing table is O(n); the distinct values come out in order of
first occurrence, and :func:`unique_with_codes` sorts only those, to give
exactly what ``np.unique`` gives (what every caller, through
engine/store/distinct_ids.py, expects).
"""

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc

import numpy as np

#: Fibonacci hashing's multiplier (2**64 over the golden ratio, odd)
cdef uint64_t MULTIPLIER = 0x9E3779B97F4A7C15ULL
#: the table's first size (slots, a power of 2); it doubles whenever it is half full
cdef int FIRST_BITS = 10


cdef int32_t* _empty_table(int bits) noexcept nogil:
    """A table of ``2**bits`` slots, all empty (-1); NULL if out of memory."""
    cdef Py_ssize_t size = <Py_ssize_t>1 << bits, i
    cdef int32_t* table = <int32_t*>malloc(size * sizeof(int32_t))
    if table != NULL:
        for i in range(size):
            table[i] = -1
    return table


cdef inline void _place(int32_t* table, int bits, const int64_t* distinct, int32_t code) noexcept nogil:
    """Put ``code`` (the index of a value not in the table) in its slot."""
    cdef uint64_t mask = (<uint64_t>1 << bits) - 1
    cdef uint64_t slot = (<uint64_t>distinct[code] * MULTIPLIER) >> (64 - bits)
    while table[slot] >= 0:
        slot = (slot + 1) & mask
    table[slot] = code


def first_occurrence_codes(const int64_t[::1] values):
    """``(distinct, codes)``: the distinct values in order of first
    occurrence, and per value its index in ``distinct`` (``np.intp``). The
    table grows with the distinct values, not with the column: a long
    column of few values stays in cache."""
    cdef Py_ssize_t n = values.shape[0]
    if n >= (<Py_ssize_t>1 << 30):
        raise ValueError("a column of 2**30 values or more: use np.unique")
    distinct_array = np.empty(n, dtype=np.int64)
    codes_array = np.empty(n, dtype=np.intp)
    cdef int64_t[::1] distinct = distinct_array
    cdef Py_ssize_t[::1] codes = codes_array
    cdef int bits = FIRST_BITS
    cdef int32_t* table = _empty_table(bits)
    cdef int32_t* grown
    cdef uint64_t mask
    cdef Py_ssize_t i
    cdef int32_t found, count = 0, code
    cdef uint64_t slot
    cdef int64_t value
    cdef bint failed = table == NULL
    with nogil:
        mask = (<uint64_t>1 << bits) - 1
        for i in range(n):
            if failed:
                break
            value = values[i]
            slot = (<uint64_t>value * MULTIPLIER) >> (64 - bits)
            while True:
                found = table[slot]
                if found < 0:
                    table[slot] = count
                    distinct[count] = value
                    codes[i] = count
                    count += 1
                    break
                if distinct[found] == value:
                    codes[i] = found
                    break
                slot = (slot + 1) & mask
            if 2 * count > (<Py_ssize_t>1 << bits):  # half full: twice the slots
                grown = _empty_table(bits + 1)
                if grown == NULL:
                    failed = True
                    break
                free(table)
                table = grown
                bits += 1
                mask = (<uint64_t>1 << bits) - 1
                for code in range(count):
                    _place(table, bits, &distinct[0], code)
    free(table)
    if failed:
        raise MemoryError("no memory for the table of distinct values")
    return distinct_array[:count].copy(), codes_array


def unique_with_codes(const int64_t[::1] values):
    """What ``np.unique(values, return_inverse=True)`` gives (the distinct
    values sorted), from one hash pass and a sort of the distinct values
    only: several times faster when values repeat, as a report's do."""
    distinct, codes = first_occurrence_codes(values)
    order = np.argsort(distinct)
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order), dtype=np.intp)
    return distinct[order], rank[codes]
