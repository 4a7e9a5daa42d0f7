"""The 64-bit hash that names a term in a loaded store.

A loaded store numbers its terms in the order of this hash of their canonical
N-Triples spelling, so the sorted hash array is both the lookup index (hash
the term, binary-search) and the encoder the load uses (no join of the
triples against the dictionary). The load hashes tens of millions of term
occurrences, so the hash is designed to vectorise: it consumes a string in
8-byte little-endian words (the last one zero-padded), and NumPy processes
word ``i`` of every string of a batch in one step. :func:`term_hash` is the
same function for one string, used to look up query constants.

Each word goes through a multiply-rotate-multiply (the constants are the
64-bit primes of XXH64) and the state is finished by a xor-shift avalanche.
Zero is reserved for "no term", and the load checks that no two different
terms share a hash (a second seed tells them apart).
"""

from __future__ import annotations

import numpy as np

from engine.store import span_hash_kernel

SEED = 0x27D4EB2F165667C5
CHECK_SEED = 0x85EBCA77C2B2AE63
_K1 = 0x9E3779B185EBCA87
_K2 = 0xC2B2AE3D27D4EB4F
_K3 = 0x165667B19E3779F9
_MASK = (1 << 64) - 1
def hash_strings(data: np.ndarray, offsets: np.ndarray, seed: int = SEED) -> np.ndarray:
    """Hash of each string ``data[offsets[i]:offsets[i+1]]`` (UTF-8 bytes), as int64."""
    return hash_spans(data, offsets[:-1].astype(np.int64), np.diff(offsets).astype(np.int64), seed)


def hash_spans(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, seed: int = SEED) -> np.ndarray:
    """Hash of each string ``data[starts[i]:starts[i] + lengths[i]]``, as int64:
    the strings may lie anywhere in ``data`` (terms inside a request body).
    Compiled (:mod:`engine.store.span_hash_kernel`): the same function as
    :func:`term_hash`, one loop per span."""
    data = np.ascontiguousarray(data, dtype=np.uint8)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    if len(starts) != len(lengths):
        raise ValueError("hash_spans: starts and lengths differ in length")
    if len(starts) and (int(starts.min()) < 0 or int(lengths.min()) < 0
                        or int((starts + lengths).max()) > len(data)):
        raise ValueError("hash_spans: a span lies outside the data")
    return span_hash_kernel.hash_spans(data, starts, lengths, seed & _MASK).view(np.int64)


def _rotl_int(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def term_hash(nt: str, seed: int = SEED) -> int:
    """:func:`hash_strings` of one N-Triples spelling, as a signed int64."""
    data = nt.encode("utf-8")
    n = len(data)
    h = (seed ^ (n * _K1)) & _MASK
    for i in range(0, n, 8):
        word = int.from_bytes(data[i : i + 8], "little")
        k = (_rotl_int((word * _K2) & _MASK, 31) * _K1) & _MASK
        h = (_rotl_int(h ^ k, 27) * _K1 + _K3) & _MASK
    h ^= h >> 33
    h = (h * _K2) & _MASK
    h ^= h >> 29
    h = (h * _K3) & _MASK
    h ^= h >> 32
    return h - (1 << 64) if h >= (1 << 63) else h
