"""Grouping equal result rows (engine/stream/id_rows.py, what report policies
count windows' answers with): on generated rows of every width, with and
without repeats, and with row hashes forced to collide, each row's group and
each group's first row are those a dictionary of the rows in arrival order
gives; the distinct IDs a kept result holds are NumPy's."""

import numpy as np
import pytest

from engine.store import distinct_ids
from engine.stream import id_rows
from engine.stream.id_rows import IdMultiset, group_rows


def _rows(rng: np.random.Generator) -> np.ndarray:
    n = int(rng.choice([0, 1, 2, 50, 3000]))
    width = int(rng.integers(0, 4))
    values = int(rng.choice([2, 5, 1000]))  # few values: many repeated rows
    rows = rng.integers(-3, values, (n, width)).astype(np.int64)
    return rows if rng.random() < 0.5 else np.asfortranarray(rows)  # columns of a stacked answer


def _expected(rows: np.ndarray) -> tuple[list[int], list[int]]:
    seen: dict[tuple, int] = {}
    first, group = [], []
    for i, row in enumerate(map(tuple, rows.tolist())):
        if row not in seen:
            seen[row] = len(first)
            first.append(i)
        group.append(seen[row])
    if not rows.shape[1]:  # rows of no columns: one group if any row
        return first[:1], [0] * len(rows)
    return first, group


@pytest.mark.parametrize("seed", range(40))
def test_groups_are_the_rows_in_order_of_first_occurrence(seed: int) -> None:
    rows = _rows(np.random.default_rng(seed))
    first, group = group_rows(rows)
    assert (first.tolist(), group.tolist()) == _expected(rows)


@pytest.mark.parametrize("seed", range(40, 52))
def test_rows_whose_hashes_collide_are_still_told_apart(seed: int, monkeypatch) -> None:
    """Every row hashed alike (or into four values): the rows are compared
    whole, and different rows stay in different groups."""
    rng = np.random.default_rng(seed)
    rows = _rows(rng)
    spread = int(rng.choice([1, 4]))
    def colliding(columns):
        return (sum(c.astype(np.int64) for c in columns) % spread).astype(np.int64)

    monkeypatch.setattr(distinct_ids, "row_hashes", colliding)
    monkeypatch.setattr(id_rows, "row_hashes", colliding)
    first, group = group_rows(rows)
    assert (first.tolist(), group.tolist()) == _expected(rows)


@pytest.mark.parametrize("seed", range(52, 64))
def test_a_kept_result_holds_its_distinct_positive_ids(seed: int) -> None:
    rows = _rows(np.random.default_rng(seed))
    kept = IdMultiset.of(rows)
    assert np.array_equal(kept.term_ids, np.unique(rows[rows > 0]))
    assert int(kept.counts.sum()) == len(rows) or not rows.shape[1]
