# cython: language_level=3
"""Binary searches of a sorted run of IDs, shared by the compiled lookups
(engine/store/key_probe_kernel.pyx, engine/store/adjacency_kernel.pyx,
engine/sparql/exec/intersection_kernel.pyx,
engine/store/spelling_lookup_kernel.pyx, which searches term hashes):
inline, so each kernel compiles its own copy for its column types."""

from libc.stdint cimport int32_t, int64_t

ctypedef fused sorted_id_t:
    int32_t
    int64_t


cdef inline Py_ssize_t lower_bound(const sorted_id_t* values, Py_ssize_t lo, Py_ssize_t hi,
                                   int64_t value) noexcept nogil:
    """The first position in ``values[lo:hi]`` (sorted) whose value is not below ``value``."""
    cdef Py_ssize_t middle
    while lo < hi:
        middle = (lo + hi) >> 1
        if values[middle] < value:
            lo = middle + 1
        else:
            hi = middle
    return lo


cdef inline Py_ssize_t upper_bound(const sorted_id_t* values, Py_ssize_t lo, Py_ssize_t hi,
                                   int64_t value) noexcept nogil:
    """The first position in ``values[lo:hi]`` (sorted) whose value is above ``value``."""
    cdef Py_ssize_t middle
    while lo < hi:
        middle = (lo + hi) >> 1
        if values[middle] <= value:
            lo = middle + 1
        else:
            hi = middle
    return lo
