# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""One spelling looked up in a compact dictionary's arrays, compiled.

Why compiled: every query constant a request brings (a user's IRI in a
varied query) is looked up once: hash the spelling, binary-search the sorted
hashes, compare the stored spelling. In Python the hash is a loop over
8-byte words with big-integer arithmetic, and the search and the comparison
are NumPy calls on one value: about 25 us per constant, a tenth of a small
query's time on the server. Here it is one call.

The hash is :func:`engine.store.term_hash.term_hash` (``span_hash.pxd``).
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcmp

from engine.store.sorted_search cimport lower_bound
from engine.store.span_hash cimport span_hash


def hash_position(const int64_t[::1] hashes, const uint8_t[::1] spelling, uint64_t seed) -> int:
    """The position of the spelling's hash in the sorted ``hashes``, or -1."""
    cdef int64_t length = spelling.shape[0]
    cdef int64_t wanted = <int64_t>span_hash(&spelling[0] if length else NULL, length, seed)
    cdef Py_ssize_t n = hashes.shape[0]
    if not n:
        return -1
    cdef Py_ssize_t low = lower_bound(&hashes[0], 0, n, wanted)
    if low < n and hashes[low] == wanted:
        return low
    return -1


def spelled_as(const int64_t[::1] offsets, const uint8_t[::1] blob, int64_t term_id,
               const uint8_t[::1] spelling) -> bool:
    """Is ``blob[offsets[term_id - 1]:offsets[term_id]]`` the bytes of ``spelling``?"""
    if term_id < 1 or term_id >= offsets.shape[0]:
        return False
    cdef int64_t start = offsets[term_id - 1]
    cdef int64_t length = offsets[term_id] - start
    if length != spelling.shape[0] or start < 0 or start + length > blob.shape[0]:
        return False
    return length == 0 or memcmp(&blob[start], &spelling[0], length) == 0
