"""Solutions: join, optional, minus and distinct over ID columns."""

import numpy as np

from engine.sparql.exec.solutions import (
    Solutions,
    concat,
    cross,
    distinct,
    join,
    join_pairs,
    left_outer,
    merge,
    minus,
)


def solutions_of(**columns):
    cols = {k: np.array(v, dtype=np.int64) for k, v in columns.items()}
    return Solutions(cols, len(next(iter(cols.values()))) if cols else 1)


def rows(t: Solutions):
    names = sorted(t.columns)
    return sorted(tuple(int(t.columns[n][i]) for n in names) for i in range(t.length))


def test_join_on_shared_variable():
    result = join(solutions_of(x=[1, 2, 2], y=[5, 6, 7]), solutions_of(x=[2, 3], z=[8, 9]))
    assert rows(result) == [(2, 6, 8), (2, 7, 8)]


def test_join_on_two_variables():
    result = join(solutions_of(x=[1, 1, 2], y=[5, 6, 5]), solutions_of(x=[1, 2], y=[6, 6]))
    assert rows(result) == [(1, 6)]


def test_join_without_shared_variable_is_a_cross_product():
    assert join(solutions_of(x=[1, 2]), solutions_of(y=[3, 4, 5])).length == 6


def test_cross_products_of_every_size_pair_every_left_row_with_every_right_one():
    """Including one row each (taken by putting the columns side by side) and
    a shared variable, whose bound side wins."""
    for left_rows in (0, 1, 3):
        for right_rows in (0, 1, 2):
            left = solutions_of(x=list(range(1, left_rows + 1)), s=[7, 0, 7][:left_rows])
            for right in (solutions_of(y=list(range(10, 10 + right_rows))),
                          solutions_of(y=list(range(10, 10 + right_rows)), s=[5, 0][:right_rows]),
                          solutions_of(y=list(range(10, 10 + right_rows)), s=[0, 5][:right_rows])):
                result = cross(left, right)
                want = sorted((x, s_left or s_right, y)
                              for x, s_left in zip(left.columns["x"].tolist(), left.columns["s"].tolist())
                              for y, s_right in zip(right.columns["y"].tolist(),
                                                    right.column("s").tolist()))
                got = sorted(zip(result.columns["x"].tolist(), result.column("s").tolist(),
                                 result.columns["y"].tolist()))
                assert (result.length, got) == (left_rows * right_rows, want)


def test_unbound_is_compatible_with_anything():
    left = solutions_of(x=[1, 0], y=[7, 8])
    right = solutions_of(x=[1, 2])
    assert rows(join(left, right)) == [(1, 7), (1, 8), (2, 8)]


def test_left_outer_keeps_unmatched_rows():
    left = solutions_of(x=[1, 2])
    right = solutions_of(x=[1], y=[9])
    lidx, ridx = join_pairs(left, right)
    joined = merge(left, right, lidx, ridx)
    assert rows(left_outer(left, joined, lidx)) == [(1, 9), (2, 0)]


def test_minus_needs_a_shared_bound_variable():
    left = solutions_of(x=[1, 2, 3])
    assert rows(minus(left, solutions_of(x=[2]))) == [(1,), (3,)]
    assert rows(minus(left, solutions_of(y=[2]))) == [(1,), (2,), (3,)]


def test_distinct_keeps_first_occurrences_in_order():
    result = distinct(solutions_of(x=[3, 1, 3, 2, 1]))
    assert result.columns["x"].tolist() == [3, 1, 2]


def test_concat_fills_missing_columns_with_unbound():
    result = concat([solutions_of(x=[1]), solutions_of(y=[2])])
    assert rows(result) == [(0, 2), (1, 0)]


def test_join_pairs_match_a_brute_force_check_with_unbound_values():
    rng = np.random.default_rng(7)
    for _ in range(50):
        left = solutions_of(x=rng.integers(0, 4, 12), y=rng.integers(0, 3, 12), a=rng.integers(1, 9, 12))
        right = solutions_of(x=rng.integers(0, 4, 9), y=rng.integers(0, 3, 9), b=rng.integers(1, 9, 9))
        lidx, ridx = join_pairs(left, right)
        got = sorted(zip(lidx.tolist(), ridx.tolist()))
        expected = sorted(
            (i, j)
            for i in range(left.length)
            for j in range(right.length)
            if all(_agree(left.columns[v][i], right.columns[v][j]) for v in ("x", "y"))
        )
        assert got == expected


def _agree(a: int, b: int) -> bool:
    return a == 0 or b == 0 or a == b
