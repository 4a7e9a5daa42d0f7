# cython: language_level=3
"""The term hash of :mod:`engine.store.term_hash` over one byte span, inline
for the kernels that hash (span_hash_kernel, spelling_lookup_kernel): 8-byte
little-endian words, the last one zero-padded, a multiply-rotate-multiply
per word and a xor-shift finish."""

from libc.stdint cimport int64_t, uint8_t, uint64_t

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


cdef inline uint64_t span_hash(const uint8_t* at, int64_t length, uint64_t seed) noexcept nogil:
    """The hash of the ``length`` bytes at ``at`` (the constants are XXH64's primes)."""
    cdef uint64_t K1 = 0x9E3779B185EBCA87ULL
    cdef uint64_t K2 = 0xC2B2AE3D27D4EB4FULL
    cdef uint64_t K3 = 0x165667B19E3779F9ULL
    cdef uint64_t h = seed ^ (<uint64_t>length * K1)
    cdef uint64_t k
    cdef int64_t pos = 0
    while pos < length:
        k = _rotl(_word(at + pos, length - pos) * K2, 31) * K1
        h = _rotl(h ^ k, 27) * K1 + K3
        pos += 8
    h ^= h >> 33
    h *= K2
    h ^= h >> 29
    h *= K3
    h ^= h >> 32
    return h
