"""The compiled distinct-values pass (engine/store/distinct_ids_kernel.pyx)
gives what ``np.unique`` gives (in order of first occurrence, or sorted), on generated
columns: empty, one value, few values repeated many times, all distinct
(the table doubles many times), negative and extreme 64-bit values, and
values whose hashes collide (multiples of a large power of two)."""

import numpy as np
import pytest
from engine.store.distinct_ids_kernel import first_occurrence_codes, unique_with_codes

from engine.store import distinct_ids
from engine.store.distinct_ids import (
    distinct_counts,
    distinct_sorted,
    first_occurrences,
    row_groups,
    unique_index_inverse,
    unique_inverse,
)
from engine.store.window_graph import distinct_matches


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


def _dict_groups(columns: list[np.ndarray]) -> tuple[list[int], list[int]]:
    seen: dict[tuple, int] = {}
    first, group = [], []
    for i, row in enumerate(zip(*(c.tolist() for c in columns), strict=True)):
        if row not in seen:
            seen[row] = len(first)
            first.append(i)
        group.append(seen[row])
    return first, group


@pytest.mark.parametrize("seed", range(106, 130))
def test_row_groups_are_the_rows_in_order_of_first_occurrence(seed: int, monkeypatch) -> None:
    """Generated rows of 1-4 columns; with the row hash forced to collide,
    None (the caller sorts) unless the colliding rows are equal anyway;
    and a window's matches deduplicated either way keep each first one."""
    rng = np.random.default_rng(seed)
    n, width = int(rng.choice([1, 2, 40, 3000])), int(rng.integers(1, 5))
    columns = [rng.integers(0, int(rng.choice([2, 6, 10_000])), n).astype(np.int64) for _ in range(width)]
    assert tuple(x.tolist() for x in row_groups(columns)) == _dict_groups(columns)
    if width == 4:
        kept = distinct_matches(*columns)
        first, _ = _dict_groups(columns)
        assert [c.tolist() for c in kept] == [c[first].tolist() for c in columns]
    monkeypatch.setattr(distinct_ids, "row_hashes", lambda cs: np.zeros(len(cs[0]), dtype=np.int64))
    found = row_groups(columns)
    if width > 1:
        distinct = len(set(zip(*(c.tolist() for c in columns), strict=True)))
        assert (found is None) == (distinct > 1)
        if width == 4:
            kept = distinct_matches(*columns)
            assert sorted(zip(*(c.tolist() for c in kept), strict=True)) == \
                sorted(set(zip(*(c.tolist() for c in columns), strict=True)))


@pytest.mark.parametrize("seed", range(130, 146))
def test_distinct_counts_are_numpys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = _column(rng).astype(rng.choice([np.int64, np.int32]))
    distinct, counts = distinct_counts(values)
    expected, expected_counts = np.unique(values, return_counts=True)
    order = np.argsort(distinct)
    assert np.array_equal(distinct[order], expected) and np.array_equal(counts[order], expected_counts)
