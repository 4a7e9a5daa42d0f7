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

Either side's values may be int32 or int64 (fused types, one per side): a
compact graph's lists are read where they lie, in its mapped int32
``neighbours`` (:func:`paired_ranges` finds them), never widened to an int64
copy; the rows and values found are int64.

Built by ``pip install`` (setup.py, Cython and gcc); see docs/operations.md.
"""

from libc.stdint cimport INT64_MIN, int32_t, int64_t

from engine.store.prefetch cimport AHEAD, RIVULET_PREFETCH
from engine.store.sorted_search cimport lower_bound

import numpy as np


# one fused type per side of intersect_lists, so int32 and int64 values mix
ctypedef fused first_id_t:
    int32_t
    int64_t

ctypedef fused second_id_t:
    int32_t
    int64_t

# the walked and the probed list of one row (either side can be either)
ctypedef fused walked_id_t:
    int32_t
    int64_t

ctypedef fused probed_id_t:
    int32_t
    int64_t


cdef inline Py_ssize_t gallop(const probed_id_t* values, Py_ssize_t lo, Py_ssize_t hi,
                              int64_t target) noexcept nogil:
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


cdef inline Py_ssize_t walk(const walked_id_t* walked, Py_ssize_t a, Py_ssize_t a_end,
                            const probed_id_t* probed, Py_ssize_t t, Py_ssize_t t_end, int64_t row,
                            int64_t* rows, int64_t* values, Py_ssize_t out) noexcept nogil:
    """Each value of ``walked[a:a_end]`` found in ``probed[t:t_end]`` (both
    sorted, without repeats) written as ``(row, value)`` from ``out`` on;
    returns the new end."""
    cdef int64_t v
    while a < a_end and t < t_end:
        v = walked[a]
        t = gallop(probed, t, t_end, v)
        if t < t_end and probed[t] == v:
            rows[out] = row
            values[out] = v
            out += 1
            t += 1
        a += 1
    return out


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


def paired_ranges(const int32_t[::1] vertex_offsets, const int32_t[::1] pair_predicates,
                  const int32_t[::1] pair_offsets, int64_t predicate, const int64_t[::1] vertices):
    """``(lo, hi)``: per vertex, its list through ``predicate`` as the range
    ``neighbours[lo:hi]`` of a compact graph's adjacency of one shard
    (:meth:`engine.store.neighbour_lists.PairLists.kernel_layout`: a vertex's
    pairs ``vertex_offsets[v]:vertex_offsets[v + 1]``, sorted by predicate,
    each pair's list ``pair_offsets[j]:pair_offsets[j + 1]``), found without
    copying it. Empty (``lo == hi``) for a vertex without such a pair, one
    that is not a stored ID (0 or below) and one past the arrays (added after
    they were built). Read in passes, each prefetching the vertex AHEAD on,
    as the vertices lie scattered over the arrays."""
    cdef Py_ssize_t n = vertices.shape[0], n_vertices = vertex_offsets.shape[0] - 1
    cdef Py_ssize_t n_pairs = pair_predicates.shape[0], i, ahead, first, last
    cdef int64_t vertex
    if pair_offsets.shape[0] != n_pairs + 1:
        raise ValueError("every pair needs a start and an end")
    lo_array = np.zeros(n, dtype=np.int64)
    hi_array = np.zeros(n, dtype=np.int64)
    cdef int64_t[::1] lo = lo_array
    cdef int64_t[::1] hi = hi_array
    with nogil:
        # the vertices' pair ranges (lo, hi hold pair indices for now)
        for i in range(n):
            ahead = i + AHEAD
            if ahead < n and 0 < vertices[ahead] < n_vertices:
                RIVULET_PREFETCH(&vertex_offsets[vertices[ahead]])
            vertex = vertices[i]
            if 0 < vertex < n_vertices:
                first, last = vertex_offsets[vertex], vertex_offsets[vertex + 1]
                if first < 0 or last > n_pairs:
                    with gil:
                        raise IndexError(f"vertex {vertex} names pairs outside the pair arrays")
                lo[i], hi[i] = first, last
        # the pair of the predicate among them, then its list's range
        for i in range(n):
            ahead = i + AHEAD
            if ahead < n and lo[ahead] < hi[ahead]:
                RIVULET_PREFETCH(&pair_predicates[lo[ahead]])
            first, last = lo[i], hi[i]
            if first < last:
                first = lower_bound(&pair_predicates[0], first, last, predicate)
                if first < last and pair_predicates[first] == predicate:
                    lo[i], hi[i] = pair_offsets[first], pair_offsets[first + 1]
                    continue
            lo[i] = hi[i] = 0
    return lo_array, hi_array


def intersect_lists(const int64_t[::1] first_lo, const int64_t[::1] first_hi,
                    const first_id_t[::1] first_values, const int64_t[::1] first_key,
                    const int64_t[::1] second_lo, const int64_t[::1] second_hi,
                    const second_id_t[::1] second_values, const int64_t[::1] second_key):
    """``(rows, values)``: for every row ``i``, each value found in both
    ``first_values[first_lo[k]:first_hi[k]]`` with ``k = first_key[i]`` and
    the same slice of the second side for ``second_key[i]``. Every list must
    be sorted and free of repeats (a graph's neighbour list is a set); the
    result is grouped by row in ascending order, values ascending within a
    row. Each side's values are int32 or int64, read in place; the result is
    int64."""
    cdef Py_ssize_t n = first_key.shape[0]
    if second_key.shape[0] != n:
        raise ValueError("both sides need a key for every row")
    if first_hi.shape[0] != first_lo.shape[0] or second_hi.shape[0] != second_lo.shape[0]:
        raise ValueError("every list needs a start and an end")
    cdef Py_ssize_t n_first = first_lo.shape[0], n_second = second_lo.shape[0]
    cdef Py_ssize_t i, capacity = 0, a, a_end, b, b_end, out = 0
    cdef int64_t ka, kb
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
    if capacity == 0:
        return rows_array, values_array
    cdef const first_id_t* first_column = &first_values[0]
    cdef const second_id_t* second_column = &second_values[0]
    with nogil:
        for i in range(n):
            a, a_end = first_lo[first_key[i]], first_hi[first_key[i]]
            b, b_end = second_lo[second_key[i]], second_hi[second_key[i]]
            if a >= a_end or b >= b_end:
                continue
            if a_end - a <= b_end - b:
                out = walk(first_column, a, a_end, second_column, b, b_end, i, &rows[0], &values[0], out)
            else:
                out = walk(second_column, b, b_end, first_column, a, a_end, i, &rows[0], &values[0], out)
    return rows_array[:out], values_array[:out]
