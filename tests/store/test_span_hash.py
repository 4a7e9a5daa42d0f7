"""The compiled span hash (engine/store/span_hash_kernel.pyx) is the term hash:
on generated spellings (any Unicode, every length around the 8-byte word
boundary, spans anywhere in a buffer) it gives :func:`term_hash`'s value for
both seeds, and it refuses spans outside the data."""

import numpy as np
import pytest

from engine.store.term_hash import CHECK_SEED, SEED, hash_spans, hash_strings, term_hash


def _spellings(rng: np.random.Generator, count: int) -> list[str]:
    alphabets = [(0x20, 0x7F), (0x80, 0x800), (0x800, 0xD800), (0x10000, 0x10FFFF)]
    out = []
    for _ in range(count):
        low, high = alphabets[int(rng.integers(len(alphabets)))]
        out.append("".join(chr(c) for c in rng.integers(low, high, int(rng.integers(0, 34)))))
    return out


@pytest.mark.parametrize("seed", [SEED, CHECK_SEED, 0])
def test_spans_hash_as_the_one_string_form(seed: int) -> None:
    rng = np.random.default_rng(seed & 0xFFFF)
    spellings = _spellings(rng, 2000) + ["x" * n for n in range(25)]
    rng.shuffle(spellings)
    encoded = [s.encode("utf-8") for s in spellings]
    # the spans lie in a buffer with junk between them, as terms lie in a body
    gaps = rng.integers(0, 5, len(encoded))
    buffer, starts = bytearray(), []
    for gap, raw in zip(gaps, encoded, strict=True):
        buffer += bytes(rng.integers(0, 256, int(gap), dtype=np.uint8))
        starts.append(len(buffer))
        buffer += raw
    data = np.frombuffer(bytes(buffer), dtype=np.uint8)
    lengths = np.array([len(raw) for raw in encoded], dtype=np.int64)
    got = hash_spans(data, np.array(starts, dtype=np.int64), lengths, seed)
    assert got.dtype == np.int64
    assert got.tolist() == [term_hash(s, seed) for s in spellings]
    joined = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    assert hash_strings(joined, offsets, seed).tolist() == got.tolist()


def test_a_span_outside_the_data_is_refused() -> None:
    data = np.frombuffer(b"<http://a>", dtype=np.uint8)
    with pytest.raises(ValueError, match="outside"):
        hash_spans(data, np.array([5], dtype=np.int64), np.array([6], dtype=np.int64))
    with pytest.raises(ValueError, match="outside"):
        hash_spans(data, np.array([-1], dtype=np.int64), np.array([1], dtype=np.int64))
    assert hash_spans(data, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).shape == (0,)
