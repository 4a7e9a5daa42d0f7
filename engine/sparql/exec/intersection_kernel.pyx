# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Per row, the intersection of two sorted candidate lists, compiled: the
inner step of :func:`engine.sparql.exec.intersection.intersect_closing`.

Why compiled: done with NumPy, each row's shorter list had to be expanded
into one array of (key, value) probes, both sides packed into sorted int64
keys and every probe binary-searched over all of the longer side; a profile of
LSBench L6 at 10M stored triples put 36% of the query there, most of it in
the copies and sorts that only serve the vectorised search. Here each row
walks its shorter list and gallops (exponential, then binary search) in the
longer one from where the last value was found, reading the lists in place:
the work is the sum over rows of the shorter list times the log of the gap,
as a worst-case-optimal join's intersection step should be.

Built by ``pip install`` (setup.py, Cython and gcc); see docs/operations.md.
"""

from libc.stdint cimport INT64_MIN, int64_t

import numpy as np


cdef inline Py_ssize_t gallop(const int64_t* values, Py_ssize_t lo, Py_ssize_t hi, int64_t target) noexcept nogil:
    """The first index in ``values[lo:hi]`` (sorted) whose value is at least
    ``target`` (``hi`` when none): steps of 1, 2, 4, ... from ``lo``, then a
    binary search within the last step."""
    cdef Py_ssize_t step = 1, bound = lo, mid
    while bound < hi and values[bound] < target:
        lo = bound + 1
        bound = lo + step
        step <<= 1
    if bound > hi:
        bound = hi
    while lo < bound:
        mid = lo + ((bound - lo) >> 1)
        if values[mid] < target:
            lo = mid + 1
        else:
            bound = mid
    return lo


def keyed_ranges(const int64_t[::1] keys, Py_ssize_t first, Py_ssize_t last, int64_t high,
                 const int64_t[::1] vertices):
    """``(lo, hi)``: per vertex (ascending), the rows of ``keys[first:last]``
    (sorted) equal to ``high | vertex``: the vertex's list in a store's
    PSO/POS order (:meth:`engine.store.neighbour_lists.KeyedLists.kernel_layout`),
    found without copying it. Each search gallops on from the last one's end;
    a vertex that is not a stored ID (0 or below) has an empty range."""
    cdef Py_ssize_t n = vertices.shape[0], i, at = first
    if first < 0 or last > keys.shape[0] or first > last:
        raise IndexError("the predicate's rows lie outside the key column")
    lo_array = np.empty(n, dtype=np.int64)
    hi_array = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] lo = lo_array
    cdef int64_t[::1] hi = hi_array
    cdef int64_t vertex, previous = INT64_MIN
    cdef const int64_t* column = &keys[0] if keys.shape[0] else NULL
    for i in range(n):
        vertex = vertices[i]
        if vertex < previous:
            raise ValueError("the vertices must be ascending")
        previous = vertex
        if vertex <= 0 or column == NULL:
            lo[i] = hi[i] = at
            continue
        with nogil:
            at = gallop(column, at, last, high | vertex)
            lo[i] = at
            at = gallop(column, at, last, (high | vertex) + 1)
            hi[i] = at
    return lo_array, hi_array


def intersect_lists(const int64_t[::1] first_lo, const int64_t[::1] first_hi,
                    const int64_t[::1] first_values, const int64_t[::1] first_key,
                    const int64_t[::1] second_lo, const int64_t[::1] second_hi,
                    const int64_t[::1] second_values, const int64_t[::1] second_key):
    """``(rows, values)``: for every row ``i``, each value found in both
    ``first_values[first_lo[k]:first_hi[k]]`` with ``k = first_key[i]`` and
    the same slice of the second side for ``second_key[i]``. Every list must
    be sorted and free of repeats (a graph's neighbour list is a set); the
    result is grouped by row in ascending order, values ascending within a
    row."""
    cdef Py_ssize_t n = first_key.shape[0]
    if second_key.shape[0] != n:
        raise ValueError("both sides need a key for every row")
    if first_hi.shape[0] != first_lo.shape[0] or second_hi.shape[0] != second_lo.shape[0]:
        raise ValueError("every list needs a start and an end")
    cdef Py_ssize_t n_first = first_lo.shape[0], n_second = second_lo.shape[0]
    cdef Py_ssize_t i, capacity = 0, a, a_end, b, b_end, t, s_end, out = 0
    cdef int64_t ka, kb, v
    cdef const int64_t* walked
    cdef const int64_t* probed
    for i in range(n):
        ka, kb = first_key[i], second_key[i]
        if ka < 0 or ka >= n_first or kb < 0 or kb >= n_second:
            raise IndexError(f"row {i} names a list that does not exist")
        a, a_end, b, b_end = first_lo[ka], first_hi[ka], second_lo[kb], second_hi[kb]
        if a < 0 or a_end > first_values.shape[0] or b < 0 or b_end > second_values.shape[0]:
            raise IndexError(f"row {i} names a list outside its values")
        capacity += min(max(a_end - a, 0), max(b_end - b, 0))
    rows_array = np.empty(capacity, dtype=np.int64)
    values_array = np.empty(capacity, dtype=np.int64)
    cdef int64_t[::1] rows = rows_array
    cdef int64_t[::1] values = values_array
    with nogil:
        for i in range(n):
            a, a_end = first_lo[first_key[i]], first_hi[first_key[i]]
            b, b_end = second_lo[second_key[i]], second_hi[second_key[i]]
            if a >= a_end or b >= b_end:
                continue
            if a_end - a <= b_end - b:
                walked, probed = &first_values[0], &second_values[0]
                t, s_end = b, b_end
            else:
                walked, probed = &second_values[0], &first_values[0]
                t, s_end = a, a_end
                a, a_end = b, b_end
            while a < a_end and t < s_end:
                v = walked[a]
                t = gallop(probed, t, s_end, v)
                if t < s_end and probed[t] == v:
                    rows[out] = i
                    values[out] = v
                    out += 1
                    t += 1
                a += 1
    return rows_array[:out], values_array[:out]
