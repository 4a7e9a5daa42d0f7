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

SEED = 0x27D4EB2F165667C5
CHECK_SEED = 0x85EBCA77C2B2AE63
_K1 = 0x9E3779B185EBCA87
_K2 = 0xC2B2AE3D27D4EB4F
_K3 = 0x165667B19E3779F9
_MASK = (1 << 64) - 1
_TAIL = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [_MASK], dtype=np.uint64)
_U = np.uint64


def _rotl(x, r: int):
    return (x << _U(r)) | (x >> _U(64 - r))


def hash_strings(data: np.ndarray, offsets: np.ndarray, seed: int = SEED) -> np.ndarray:
    """Hash of each string ``data[offsets[i]:offsets[i+1]]`` (UTF-8 bytes), as int64."""
    return hash_spans(data, offsets[:-1].astype(np.int64), np.diff(offsets).astype(np.int64), seed)


def hash_spans(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, seed: int = SEED) -> np.ndarray:
    """Hash of each string ``data[starts[i]:starts[i] + lengths[i]]``, as int64:
    the strings may lie anywhere in ``data`` (terms inside a request body)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    # longest first, so the strings that still have a word ``step`` are a prefix
    order = np.argsort(-lengths, kind="stable")
    starts = np.asarray(starts, dtype=np.int64)[order]
    lengths = lengths[order]
    words_left = -np.sort(-((lengths + 7) // 8))
    padded = np.zeros(len(data) + 8, dtype=np.uint8)
    padded[: len(data)] = data
    # every byte offset read as a little-endian uint64 (unaligned, no copy)
    words = np.ndarray((len(data) + 1,), dtype="<u8", buffer=padded.data, strides=(1,))
    with np.errstate(over="ignore"):
        h = _U(seed) ^ (lengths.astype(np.uint64) * _U(_K1))
        step = 0
        active = int(np.count_nonzero(words_left))
        while active:
            word = words[starts[:active] + 8 * step]
            word &= _TAIL[np.minimum(lengths[:active] - 8 * step, 8)]
            k = _rotl(word * _U(_K2), 31) * _U(_K1)
            h[:active] = _rotl(h[:active] ^ k, 27) * _U(_K1) + _U(_K3)
            step += 1
            active = int(np.count_nonzero(words_left[:active] > step))
        out = np.empty_like(h)
        out[order] = h
        h = out
        h ^= h >> _U(33)
        h *= _U(_K2)
        h ^= h >> _U(29)
        h *= _U(_K3)
        h ^= h >> _U(32)
    return h.view(np.int64)


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
