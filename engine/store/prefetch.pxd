# cython: language_level=3
"""Asking for a row's memory before reading it, shared by the compiled passes
over rows scattered through large (memory-mapped) arrays:
engine/store/adjacency_kernel.pyx and engine/sparql/exec/intersection_kernel.pyx.
A pass prefetches the row AHEAD on while it reads this one, so the cache
misses of many rows overlap instead of adding up."""

cdef extern from *:
    """
    #define RIVULET_PREFETCH(address) __builtin_prefetch((const void *)(address), 0, 0)
    """
    void RIVULET_PREFETCH(const void *address) noexcept nogil

cdef enum:
    # rows between a row's prefetch and its read (enough misses in flight, not so many the lines fall out)
    AHEAD = 12
