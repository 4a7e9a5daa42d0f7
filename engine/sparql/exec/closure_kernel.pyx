# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The node-by-node levels of a ``p*`` / ``p+`` search, compiled: the loop of
:meth:`engine.sparql.exec.path_closure.Closure._narrow_levels` in C.

Why compiled: a search over a deep, thin graph (a chain 100,000 links deep is
100,000 levels of one node) is one dictionary-free step per node, and in
Python each step costs about a microsecond of interpreter work (a profile of
``n0 next* ?b`` on main: 99% in that loop and the reader it calls). Here a
step is a binary search in the store's arrays. The inner path must be a
link or a sequence of links whose readers name their arrays
(:mod:`engine.store.neighbour_lists`); anything else stays in Python.

Built by ``pip install`` (setup.py, Cython and gcc); see docs/operations.md.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc, realloc

import numpy as np

cdef enum:
    KEYED = 0
    PAIRED = 1


cdef struct Hop:
    int kind
    # KEYED: a sorted key column and the neighbour beside each key
    const int64_t* keys
    const int64_t* third
    Py_ssize_t first
    Py_ssize_t last
    int64_t high
    # PAIRED: vertex -> its (predicate, list) pairs -> the list
    const int32_t* vo
    const int32_t* pp
    const int32_t* po
    const int32_t* nb
    Py_ssize_t vertices
    int32_t predicate


cdef struct Buf:
    int64_t* data
    Py_ssize_t n
    Py_ssize_t cap


cdef int buf_push(Buf* b, int64_t v) except -1 nogil:
    cdef int64_t* grown
    if b.n == b.cap:
        b.cap = b.cap * 2 if b.cap else 64
        grown = <int64_t*> realloc(b.data, b.cap * sizeof(int64_t))
        if grown == NULL:
            with gil:
                raise MemoryError()
        b.data = grown
    b.data[b.n] = v
    b.n += 1
    return 0


cdef int follow(const Hop* h, int64_t vertex, Buf* out) except -1 nogil:
    """Append ``vertex``'s list through one hop to ``out``."""
    cdef Py_ssize_t lo, hi, mid, at
    cdef int64_t key
    if vertex <= 0:
        return 0
    if h.kind == KEYED:
        key = h.high | vertex
        lo, hi = h.first, h.last
        while lo < hi:  # first key >= key
            mid = (lo + hi) >> 1
            if h.keys[mid] < key:
                lo = mid + 1
            else:
                hi = mid
        while lo < h.last and h.keys[lo] == key:
            buf_push(out, h.third[lo])
            lo += 1
        return 0
    if vertex >= h.vertices - 1:
        return 0
    lo, hi = h.vo[vertex], h.vo[vertex + 1]
    while lo < hi:  # first pair whose predicate >= the hop's
        mid = (lo + hi) >> 1
        if h.pp[mid] < h.predicate:
            lo = mid + 1
        else:
            hi = mid
    if lo < h.vo[vertex + 1] and h.pp[lo] == h.predicate:
        for at in range(h.po[lo], h.po[lo + 1]):
            buf_push(out, h.nb[at])
    return 0


cdef list _hop_arrays(tuple layout, Hop* h):
    """Fill ``h`` from a reader's :meth:`kernel_layout`; the arrays it points into."""
    cdef const int64_t[::1] k64, t64
    cdef const int32_t[::1] vo, pp, po, nb
    if layout[0] == KEYED:
        k64, t64 = layout[1], layout[2]
        h.kind = KEYED
        h.keys = &k64[0] if k64.shape[0] else NULL
        h.third = &t64[0] if t64.shape[0] else NULL
        h.first, h.last, h.high = layout[3], layout[4], layout[5]
        return [k64, t64]
    vo, pp, po, nb = layout[1], layout[2], layout[3], layout[4]
    h.kind = PAIRED
    h.vo = &vo[0] if vo.shape[0] else NULL
    h.vertices = vo.shape[0]
    h.pp = &pp[0] if pp.shape[0] else NULL
    h.po = &po[0] if po.shape[0] else NULL
    h.nb = &nb[0] if nb.shape[0] else NULL
    h.predicate = layout[5]
    return [vo, pp, po, nb]


def narrow_levels(tuple layouts, uint8_t[::1] marks, const int64_t[::1] frontier, int64_t target,
                  Py_ssize_t narrow, Py_ssize_t max_levels):
    """Levels of the search from ``frontier`` (at most ``narrow`` nodes), each
    node's ends through the hops of ``layouts`` in turn, marking in
    ``marks`` (one byte per term ID) what is new.

    Returns ``(reached, level_start, need)``: the nodes newly reached, level
    after level, of which ``reached[level_start:]`` is the last level (the
    frontier to go on from). It stops after a level that is empty or wider
    than ``narrow``, that reaches ``target`` (when positive), or after
    ``max_levels`` levels (the caller checks the row budget and time limit).
    ``need`` is 0, or an ID beyond ``marks``: the level that met it was not
    marked; grow the marks and go on from the last level (``frontier`` when
    nothing was reached)."""
    cdef Py_ssize_t n_hops = len(layouts), i, j, k, size = marks.shape[0], levels = 0
    cdef Py_ssize_t level_start = 0, start_of_last = 0
    cdef Hop* hops = <Hop*> malloc(n_hops * sizeof(Hop))
    cdef Buf reached = Buf(NULL, 0, 0), cur = Buf(NULL, 0, 0), nxt = Buf(NULL, 0, 0)
    cdef Buf ends = Buf(NULL, 0, 0), swap
    cdef int64_t need = 0, end, largest
    cdef const int64_t* front = &frontier[0] if frontier.shape[0] else NULL
    cdef Py_ssize_t front_n = frontier.shape[0]
    keep = []
    if hops == NULL:
        raise MemoryError()
    try:
        for i in range(n_hops):
            keep.append(_hop_arrays(layouts[i], &hops[i]))
        with nogil:
            while front_n:
                ends.n = 0
                for i in range(front_n):
                    cur.n = 0
                    buf_push(&cur, front[i])
                    for j in range(n_hops):
                        nxt.n = 0
                        for k in range(cur.n):
                            follow(&hops[j], cur.data[k], &nxt)
                        swap = cur
                        cur = nxt
                        nxt = swap
                    for k in range(cur.n):
                        buf_push(&ends, cur.data[k])
                largest = 0
                for k in range(ends.n):
                    if ends.data[k] > largest:
                        largest = ends.data[k]
                if largest >= size:
                    need = largest
                    break
                start_of_last = reached.n
                for k in range(ends.n):
                    end = ends.data[k]
                    if end > 0 and not marks[end]:
                        marks[end] = 1
                        buf_push(&reached, end)
                level_start = start_of_last
                levels += 1
                front = reached.data + level_start
                front_n = reached.n - level_start
                if front_n == 0 or front_n > narrow or levels >= max_levels:
                    break
                if 0 < target < size and marks[target]:
                    break
        found = np.empty(reached.n, dtype=np.int64)
        if reached.n:
            found[:] = <int64_t[:reached.n]> reached.data
        return found, level_start, need
    finally:
        free(hops)
        free(reached.data)
        free(cur.data)
        free(nxt.data)
        free(ends.data)
