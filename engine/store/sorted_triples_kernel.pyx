# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Sets of ID triples sorted by (predicate, subject, object), compiled: their
union in one linear merge, and membership of a sorted batch in one pass.

Why compiled: a stored graph that absorbs stream batches
(engine/store/layered_graph.py) checks every batch against its base and
each delta, then merges the deltas into the base once they hold a quarter
of it. Through the graph's general reads, each check built sort orders and
hash sets for every new or merged layer, and each merge sorted base and
deltas together again: with the checks about 20% of the server's samples
under HTTP ingest (1M stored, one query). All these sets are sorted already,
so a merge is one pass and a check a binary search that only moves forward;
NumPy has neither, and either in Python is a step per triple.
"""

from libc.stdint cimport int64_t

import numpy as np


cdef inline int _compare(int64_t ap, int64_t as_, int64_t ao,
                         int64_t bp, int64_t bs, int64_t bo) noexcept nogil:
    if ap != bp:
        return -1 if ap < bp else 1
    if as_ != bs:
        return -1 if as_ < bs else 1
    if ao != bo:
        return -1 if ao < bo else 1
    return 0


def merge_sorted(const int64_t[::1] a_s, const int64_t[::1] a_p, const int64_t[::1] a_o,
                 const int64_t[::1] b_s, const int64_t[::1] b_p, const int64_t[::1] b_o):
    """``(s, p, o)``: the triples of ``a`` and ``b`` (each sorted by p, s, o
    without repeats), sorted the same way, a triple both hold written once."""
    cdef Py_ssize_t na = a_s.shape[0], nb = b_s.shape[0]
    s_out = np.empty(na + nb, dtype=np.int64)
    p_out = np.empty(na + nb, dtype=np.int64)
    o_out = np.empty(na + nb, dtype=np.int64)
    cdef int64_t[::1] s = s_out, p = p_out, o = o_out
    cdef Py_ssize_t i = 0, j = 0, k = 0
    cdef int c
    with nogil:
        while i < na and j < nb:
            c = _compare(a_p[i], a_s[i], a_o[i], b_p[j], b_s[j], b_o[j])
            if c <= 0:
                s[k], p[k], o[k] = a_s[i], a_p[i], a_o[i]
                i += 1
                if c == 0:
                    j += 1
            else:
                s[k], p[k], o[k] = b_s[j], b_p[j], b_o[j]
                j += 1
            k += 1
        while i < na:
            s[k], p[k], o[k] = a_s[i], a_p[i], a_o[i]
            i += 1
            k += 1
        while j < nb:
            s[k], p[k], o[k] = b_s[j], b_p[j], b_o[j]
            j += 1
            k += 1
    return s_out[:k], p_out[:k], o_out[:k]


def contains_sorted(const int64_t[::1] s, const int64_t[::1] p, const int64_t[::1] o,
                    const int64_t[::1] q_s, const int64_t[::1] q_p, const int64_t[::1] q_o):
    """Mask: is each probe triple ``q`` in the set ``(s, p, o)``? Both are
    sorted by (p, s, o); the probes may repeat. Each probe's binary search
    starts where the previous one ended."""
    cdef Py_ssize_t n = s.shape[0], m = q_s.shape[0]
    found_out = np.zeros(m, dtype=bool)
    cdef unsigned char[::1] found = found_out.view(np.uint8)
    cdef Py_ssize_t i, lo = 0, hi, mid, step
    with nogil:
        for i in range(m):
            # gallop from lo to bracket the first row >= the probe, then bisect
            step = 1
            hi = lo
            while hi < n and _compare(p[hi], s[hi], o[hi], q_p[i], q_s[i], q_o[i]) < 0:
                lo = hi + 1
                hi = lo + step
                step *= 2
            if hi > n:
                hi = n
            while lo < hi:
                mid = (lo + hi) >> 1
                if _compare(p[mid], s[mid], o[mid], q_p[i], q_s[i], q_o[i]) < 0:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < n and _compare(p[lo], s[lo], o[lo], q_p[i], q_s[i], q_o[i]) == 0:
                found[i] = 1
    return found_out
