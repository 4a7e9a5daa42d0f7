"""The compiled distinct-values pass (engine/store/distinct_ids_kernel.pyx)
gives what ``np.unique`` gives (in order of first occurrence, or sorted), on generated
columns: empty, one value, few values repeated many times, all distinct
(the table doubles many times), negative and extreme 64-bit values, and
values whose hashes collide (multiples of a large power of two)."""

import numpy as np
import pytest
from engine.store.distinct_ids_kernel import first_occurrence_codes, unique_with_codes

from engine.store.distinct_ids import distinct_sorted, first_occurrences, unique_index_inverse, unique_inverse


def _column(rng: np.random.Generator) -> np.ndarray:
    n = int(rng.choice([0, 1, 2, 7, 1023, 1024, 1025, 5000, 70_000]))
    kind = rng.integers(0, 4)
    if kind == 0:  # few values, many repeats
        return rng.integers(-3, 4, n).astype(np.int64)
    if kind == 1:  # mostly distinct
        return rng.integers(-(2**62), 2**62, n).astype(np.int64)
    if kind == 2:  # the extremes and 0
        return rng.choice(np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1, 1]), n)
    return rng.integers(0, max(n // 3, 1), n).astype(np.int64) << 40  # the same low bits


@pytest.mark.parametrize("seed", range(40))
def test_codes_are_positions_among_distinct_values_in_first_occurrence_order(seed: int) -> None:
    values = _column(np.random.default_rng(seed))
    distinct, codes = first_occurrence_codes(values)
    assert codes.dtype == np.intp and distinct.dtype == np.int64
    assert np.array_equal(distinct[codes], values)
    expected, first = np.unique(values, return_index=True)
    assert len(distinct) == len(expected)
    assert np.array_equal(distinct, values[np.sort(first)])


@pytest.mark.parametrize("seed", range(40, 60))
def test_unique_with_codes_is_numpys_unique(seed: int) -> None:
    values = _column(np.random.default_rng(seed))
    distinct, codes = unique_with_codes(values)
    expected, inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(distinct, expected) and np.array_equal(codes, inverse)


@pytest.mark.parametrize("seed", range(60, 72))
def test_unique_inverse_is_numpys_unique_whatever_the_column(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = _column(rng)
    dtype = rng.choice([np.int64, np.int32, np.uint64, np.float64])
    values = values.astype(dtype)[:: int(rng.integers(1, 3))]  # some not contiguous
    distinct, inverse = unique_inverse(values)
    expected, expected_inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(distinct, expected) and np.array_equal(inverse, expected_inverse)


@pytest.mark.parametrize("seed", range(72, 90))
def test_first_occurrences_and_distinct_sorted_are_numpys(seed: int) -> None:
    """Positions of first occurrences in order, each value's group, and the
    sorted distinct values, whatever the column (other dtypes go to NumPy)."""
    rng = np.random.default_rng(seed)
    values = _column(rng)
    dtype = rng.choice([np.int64, np.int64, np.int32, np.float64])
    values = values.astype(dtype)[:: int(rng.integers(1, 3))]
    first, codes = first_occurrences(values)
    distinct, index = np.unique(values, return_index=True)
    assert np.array_equal(first, np.sort(index))
    assert np.array_equal(values[first][codes], values)
    assert np.array_equal(distinct_sorted(values), distinct)


@pytest.mark.parametrize("seed", range(90, 106))
def test_unique_index_inverse_is_numpys_unique(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = _column(rng)
    dtype = rng.choice([np.int64, np.int64, np.int32])
    values = values.astype(dtype)[:: int(rng.integers(1, 3))]
    found = unique_index_inverse(values)
    expected = np.unique(values, return_index=True, return_inverse=True)
    assert all(np.array_equal(a, b) for a, b in zip(found, expected, strict=True))
