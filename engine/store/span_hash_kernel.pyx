# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The term hash of :mod:`engine.store.term_hash` over many byte spans, compiled.

Why compiled: every ingested batch hashes each term occurrence twice (two
seeds) to look it up in the compact dictionary, and the NumPy form of the
hash makes one pass over all spans per 8-byte word, each pass a dozen array
operations plus a sort of the spans by length; a profile of HTTP ingest
(1M stored, one query) put 14.5% of the server's samples there. Here each
span is one loop over its words, and the GIL is released meanwhile.

The function (``span_hash.pxd``) is the same as
:func:`engine.store.term_hash.term_hash` (the one-string form, in Python).
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t

import numpy as np

from engine.store.span_hash cimport span_hash


def hash_spans(const uint8_t[::1] data, const int64_t[::1] starts, const int64_t[::1] lengths,
               uint64_t seed):
    """Hash of each span ``data[starts[i]:starts[i] + lengths[i]]`` (the caller
    checks that every span lies inside ``data``), as uint64."""
    cdef Py_ssize_t n = starts.shape[0]
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] hashes = out
    cdef Py_ssize_t i
    cdef int64_t length
    with nogil:
        for i in range(n):
            length = lengths[i]
            hashes[i] = span_hash(&data[starts[i]] if length else NULL, length, seed)
    return out
