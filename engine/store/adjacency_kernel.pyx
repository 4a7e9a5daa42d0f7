# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The edges of a column of vertices in a compact graph's CSR arrays, compiled.

Why: a window's join reaches into the stored graph from the vertices the
window bound (a CityBench sensor's observation, a user of an LSBench post,
the friends of a window's likers), and a one-shot lookup from one or two
constants. Reading them through NumPy took a dozen calls (the vertices'
pair ranges, their expansion, the predicate filter, the neighbour ranges,
their expansion, the gathers and casts), each paying NumPy's fixed cost
for a few rows and building an array of every edge for many. This kernel
reads the same arrays (:mod:`engine.store.csr`, int32 or int64 as the
store was written, mapped or in memory) in one call: per vertex, its pairs
(a binary search for the pair of the row's predicate, as a vertex's pairs
are sorted by predicate), then each pair's neighbours, or, when the row
asks for one neighbour, a binary search for it in the pair's sorted list.
Same edges, in the same order, as
:meth:`~engine.store.compact_graph.Adjacency.edges`.

Why in passes, each prefetching the rows ahead: thousands of vertices of
a window lie scattered over arrays of hundreds of megabytes at 100M stored
triples, so each step of each row (its offsets, its pairs, its pair's
offsets, its list) waits for memory. Read row after row, those waits add
up (about 100 ns each, four a row); with each step a pass over all rows
that asks for the lines of the row AHEAD rows on, they overlap.
"""

from libc.stdint cimport int32_t, int64_t

from engine.store.prefetch cimport AHEAD, RIVULET_PREFETCH
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
    """``(rows, vertices, predicates, neighbours)`` of the edges of each
    row's vertex (``vertices[k]`` is ``local[rows[k]]``, written in the same
    pass rather than gathered after it).

    ``local``: per row, the vertex's ID in the arrays of a graph of one
    shard, where a vertex's index is its ID (not positive: no edges, as no
    term has such an ID; past the arrays: a vertex added after they were
    built, no edges). ``predicates``: the predicate each row's edges must have (None:
    any). ``check``: the neighbour each row's edges must reach (None: any).
    Returns the count, having allocated nothing, when the rows' pair ranges
    hold more than ``budget`` edges (negative: no bound)."""
    cdef Py_ssize_t n = local.shape[0], vertices = vertex_offsets.shape[0] - 1
    cdef Py_ssize_t i, ahead, pair, j, first, last, end, total = 0, pairs = 0, count = 0
    cdef int64_t vertex, predicate, wanted
    cdef bint by_predicate = predicates is not None, checked = check is not None
    ranges_array = np.zeros(2 * n, dtype=np.intp)
    cdef Py_ssize_t[::1] ranges = ranges_array
    with nogil:
        # the vertices' pair ranges
        for i in range(n):
            ahead = i + AHEAD
            if ahead < n and 0 < local[ahead] < vertices:
                RIVULET_PREFETCH(&vertex_offsets[local[ahead]])
            vertex = local[i]
            if 0 < vertex < vertices:
                ranges[2 * i] = vertex_offsets[vertex]
                ranges[2 * i + 1] = vertex_offsets[vertex + 1]
        # the pair of the row's predicate among them
        if by_predicate:
            for i in range(n):
                ahead = i + AHEAD
                if ahead < n and ranges[2 * ahead] < ranges[2 * ahead + 1]:
                    RIVULET_PREFETCH(&pair_predicates[ranges[2 * ahead]])
                first, last = ranges[2 * i], ranges[2 * i + 1]
                if first < last:
                    predicate = predicates[i]
                    first = lower_bound(&pair_predicates[0], first, last, predicate)
                    ranges[2 * i] = first
                    ranges[2 * i + 1] = first + 1 if first < last and pair_predicates[first] == predicate \
                        else first
        # the edges the pairs hold
        for i in range(n):
            ahead = i + AHEAD
            if ahead < n and ranges[2 * ahead] < ranges[2 * ahead + 1]:
                RIVULET_PREFETCH(&pair_offsets[ranges[2 * ahead]])
            first, last = ranges[2 * i], ranges[2 * i + 1]
            if last > first:
                total += pair_offsets[last] - pair_offsets[first]
                pairs += last - first
    if budget >= 0 and total > budget:
        return total
    # a checked row finds its neighbour at most once per pair (a pair's list has no repeats)
    cdef Py_ssize_t capacity = pairs if checked and pairs < total else total
    rows_array = np.empty(capacity, dtype=np.int64)
    predicate_array = np.empty(capacity, dtype=np.int64)
    neighbour_array = np.empty(capacity, dtype=np.int64)
    vertex_array = np.empty(capacity, dtype=np.int64)
    cdef int64_t[::1] rows = rows_array, found_predicates = predicate_array, found = neighbour_array
    cdef int64_t[::1] found_vertices = vertex_array
    with nogil:
        for i in range(n):
            ahead = i + AHEAD
            if ahead < n and ranges[2 * ahead] < ranges[2 * ahead + 1]:
                # the list's first line, or (checked) the middle its search reads first
                first = pair_offsets[ranges[2 * ahead]]
                RIVULET_PREFETCH(&neighbours[(first + pair_offsets[ranges[2 * ahead] + 1]) // 2
                                             if checked else first])
            for pair in range(ranges[2 * i], ranges[2 * i + 1]):
                if checked:
                    # a pair's list is sorted: a binary search, not a pass over a hub's friends
                    wanted = check[i]
                    end = pair_offsets[pair + 1]
                    j = lower_bound(&neighbours[0], pair_offsets[pair], end, wanted)
                    if j < end and neighbours[j] == wanted:
                        rows[count] = i
                        found_vertices[count] = local[i]
                        found_predicates[count] = pair_predicates[pair]
                        found[count] = wanted
                        count += 1
                    continue
                vertex = local[i]
                for j in range(pair_offsets[pair], pair_offsets[pair + 1]):
                    rows[count] = i
                    found_vertices[count] = vertex
                    found_predicates[count] = pair_predicates[pair]
                    found[count] = neighbours[j]
                    count += 1
    if count == capacity:
        return rows_array, vertex_array, predicate_array, neighbour_array
    return rows_array[:count], vertex_array[:count], predicate_array[:count], neighbour_array[:count]
