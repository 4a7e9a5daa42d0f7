# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The edges of a few vertices in a compact graph's CSR arrays, compiled.

Why: a window's join reaches into the stored graph from the handful of
vertices the window bound (a CityBench sensor's observation, a user of an
LSBench post), and a one-shot lookup from one or two constants. Reading
them through NumPy took a dozen calls (the vertices' pair ranges, their
expansion, the predicate filter, the neighbour ranges, their expansion, the
gathers and casts), each paying NumPy's fixed cost for a few rows. This
kernel reads the same arrays (:mod:`engine.store.csr`, int32 or int64 as
the store was written, mapped or in memory) in one call: per vertex, its
pairs (a binary search for the pair of the row's predicate, as a vertex's
pairs are sorted by predicate), then each pair's neighbours, kept when they
equal the neighbour the row asks for. Same edges, in the same order, as
:meth:`~engine.store.compact_graph.Adjacency.edges`.
"""

from libc.stdint cimport int32_t, int64_t

from engine.store.sorted_search cimport lower_bound

import numpy as np

ctypedef fused vertex_offset_t:
    int32_t
    int64_t

ctypedef fused pair_offset_t:
    int32_t
    int64_t

ctypedef fused id_t:
    int32_t
    int64_t


def edges(const vertex_offset_t[::1] vertex_offsets, const id_t[::1] pair_predicates,
          const pair_offset_t[::1] pair_offsets, const id_t[::1] neighbours,
          const int64_t[::1] local, const int64_t[::1] predicates, const int64_t[::1] check,
          Py_ssize_t budget):
    """``(rows, predicates, neighbours)`` of the edges of each row's vertex.

    ``local``: per row, the vertex's ID in the arrays of a graph of one
    shard, where a vertex's index is its ID (not positive: no edges, as no
    term has such an ID; past the arrays: a vertex added after they were
    built, no edges). ``predicates``: the predicate each row's edges must have (None:
    any). ``check``: the neighbour each row's edges must reach (None: any).
    Returns the count, having allocated nothing, when the rows' pair ranges
    hold more than ``budget`` edges (negative: no bound)."""
    cdef Py_ssize_t n = local.shape[0], vertices = vertex_offsets.shape[0] - 1
    cdef Py_ssize_t i, pair, j, first, last, total = 0, count = 0
    cdef int64_t vertex, predicate
    cdef bint by_predicate = predicates is not None, checked = check is not None
    ranges_array = np.empty(2 * n, dtype=np.intp)
    cdef Py_ssize_t[::1] ranges = ranges_array
    with nogil:
        for i in range(n):
            first = last = 0
            vertex = local[i]
            if 0 < vertex < vertices:
                first = vertex_offsets[vertex]
                last = vertex_offsets[vertex + 1]
                if by_predicate:
                    predicate = predicates[i]
                    first = lower_bound(&pair_predicates[0], first, last, predicate)
                    last = first + 1 if first < last and pair_predicates[first] == predicate else first
            ranges[2 * i] = first
            ranges[2 * i + 1] = last
            if last > first:
                total += pair_offsets[last] - pair_offsets[first]
    if budget >= 0 and total > budget:
        return total
    rows_array = np.empty(total, dtype=np.int64)
    predicate_array = np.empty(total, dtype=np.int64)
    neighbour_array = np.empty(total, dtype=np.int64)
    cdef int64_t[::1] rows = rows_array, found_predicates = predicate_array, found = neighbour_array
    with nogil:
        for i in range(n):
            for pair in range(ranges[2 * i], ranges[2 * i + 1]):
                for j in range(pair_offsets[pair], pair_offsets[pair + 1]):
                    if checked and neighbours[j] != check[i]:
                        continue
                    rows[count] = i
                    found_predicates[count] = pair_predicates[pair]
                    found[count] = neighbours[j]
                    count += 1
    if count == total:
        return rows_array, predicate_array, neighbour_array
    return rows_array[:count], predicate_array[:count], neighbour_array[:count]
