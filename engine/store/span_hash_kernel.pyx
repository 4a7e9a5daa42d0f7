# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The term hash of :mod:`engine.store.term_hash` over many byte spans, compiled.

Why compiled: every ingested batch hashes each term occurrence twice (two
seeds) to look it up in the compact dictionary, and the NumPy form of the
hash makes one pass over all spans per 8-byte word, each pass a dozen array
operations plus a sort of the spans by length; a profile of HTTP ingest
(1M stored, one query) put 14.5% of the server's samples there. Here each
span is one loop over its words, and the GIL is released meanwhile.

The function is the same as :func:`engine.store.term_hash.term_hash` (the
one-string form, in Python): 8-byte little-endian words, the last one
zero-padded, a multiply-rotate-multiply per word and a xor-shift finish.
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t

import numpy as np

cdef uint64_t K1 = 0x9E3779B185EBCA87ULL
cdef uint64_t K2 = 0xC2B2AE3D27D4EB4FULL
cdef uint64_t K3 = 0x165667B19E3779F9ULL


cdef inline uint64_t _rotl(uint64_t x, int r) noexcept nogil:
    return (x << r) | (x >> (64 - r))


cdef inline uint64_t _word(const uint8_t* at, int64_t available) noexcept nogil:
    """Up to 8 bytes from ``at`` as a little-endian word (missing bytes are 0);
    a whole word is a fixed 8-byte loop, which gcc turns into one load."""
    cdef uint64_t word = 0
    cdef int b
    if available >= 8:
        for b in range(8):
            word |= (<uint64_t>at[b]) << (8 * b)
        return word
    for b in range(available):
        word |= (<uint64_t>at[b]) << (8 * b)
    return word


def hash_spans(const uint8_t[::1] data, const int64_t[::1] starts, const int64_t[::1] lengths,
               uint64_t seed):
    """Hash of each span ``data[starts[i]:starts[i] + lengths[i]]`` (the caller
    checks that every span lies inside ``data``), as uint64."""
    cdef Py_ssize_t n = starts.shape[0]
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] hashes = out
    cdef Py_ssize_t i
    cdef int64_t length, pos
    cdef const uint8_t* at
    cdef uint64_t h, k
    with nogil:
        for i in range(n):
            length = lengths[i]
            h = seed ^ (<uint64_t>length * K1)
            if length:
                at = &data[starts[i]]
                pos = 0
                while pos < length:
                    k = _rotl(_word(at + pos, length - pos) * K2, 31) * K1
                    h = _rotl(h ^ k, 27) * K1 + K3
                    pos += 8
            h ^= h >> 33
            h *= K2
            h ^= h >> 29
            h *= K3
            h ^= h >> 32
            hashes[i] = h
    return out
