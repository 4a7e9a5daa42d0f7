# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""A short column of bound values looked up in one sort order of a graph, compiled.

Why: a continuous query's window is a few small stream batches, and a
one-shot lookup binds one or two constants. Matching one pattern there took
about 25 NumPy calls (the packed key, two binary searches, the ranges'
expansion, the gathers, the checks), each paying NumPy's fixed cost of a
microsecond or more for a handful of rows: tens of microseconds a pattern
and batch, most of a CityBench window. This kernel does the same for a
probe column of a few values in one call: per value, its packed key, the
key's range in the order (binary search), and the range's rows, kept when
their carried timestamp is in ``[start, end)`` (a time slice of a batch) and
when their third column equals the value asked for it (a fully bound
pattern). Same matches, in the same order, as the NumPy path of
:meth:`~engine.store.memory_graph.MemoryGraph.match_where`.
"""

from libc.stdint cimport int64_t

from engine.store.sorted_search cimport lower_bound, upper_bound

import numpy as np


def probe(const int64_t[::1] key, const int64_t[::1] first, const int64_t[::1] second,
          const int64_t[::1] third, const int64_t[::1] carried, int64_t start, int64_t end,
          const int64_t[::1] high, const int64_t[::1] low, const int64_t[::1] check,
          bint third_sorted, Py_ssize_t budget):
    """``(rows, first, second, third)`` of the order's rows matching each probe row.

    Probe row ``i`` asks for the key ``high[i] << 32 | low[i]`` (``high[i]``
    alone when ``low`` is None); a value that is not positive (a query-local
    ID) matches nothing. ``carried``: the order's timestamps, kept when in
    ``[start, end)`` (None: every row). ``check``: the third column each
    probe row wants (None: any); ``third_sorted``, whether the third column
    is sorted within a key (then it is binary-searched). Returns the count,
    having allocated nothing, when the ranges hold more than ``budget`` rows
    (a negative budget: no bound)."""
    cdef Py_ssize_t n = high.shape[0], m = key.shape[0], i, j, lo, hi, total = 0, count = 0
    cdef int64_t value, want
    cdef bint two_part = low is not None, timed = carried is not None, checked = check is not None
    ranges_array = np.empty(2 * n, dtype=np.intp)
    cdef Py_ssize_t[::1] ranges = ranges_array
    with nogil:
        for i in range(n):
            lo = hi = 0
            if two_part:
                if high[i] > 0 and low[i] > 0:
                    value = (high[i] << 32) | low[i]
                    lo = lower_bound(&key[0], 0, m, value)
                    hi = upper_bound(&key[0], lo, m, value)
            elif high[i] > 0:
                value = high[i]
                lo = lower_bound(&key[0], 0, m, value)
                hi = upper_bound(&key[0], lo, m, value)
            if checked and third_sorted and hi > lo:
                want = check[i]
                lo = lower_bound(&third[0], lo, hi, want)
                hi = upper_bound(&third[0], lo, hi, want)
            ranges[2 * i] = lo
            ranges[2 * i + 1] = hi
            total += hi - lo
    if budget >= 0 and total > budget:
        return total
    rows_array = np.empty(total, dtype=np.int64)
    first_array = np.empty(total, dtype=np.int64)
    second_array = np.empty(total, dtype=np.int64)
    third_array = np.empty(total, dtype=np.int64)
    cdef int64_t[::1] rows = rows_array, a = first_array, b = second_array, c = third_array
    with nogil:
        for i in range(n):
            for j in range(ranges[2 * i], ranges[2 * i + 1]):
                if timed and (carried[j] < start or carried[j] >= end):
                    continue
                if checked and third[j] != check[i]:
                    continue
                rows[count] = i
                a[count] = first[j]
                b[count] = second[j]
                c[count] = third[j]
                count += 1
    if count == total:
        return rows_array, first_array, second_array, third_array
    return rows_array[:count], first_array[:count], second_array[:count], third_array[:count]
