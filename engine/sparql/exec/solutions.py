"""Solutions: columns of term IDs, one per variable; 0 means unbound.

All relational steps of the executor (join, left join, minus, union,
distinct) work on whole columns with NumPy. Rows that carry unbound values in
join variables (they come from OPTIONAL) cannot use the sort-based join and
go through a slower compatibility check; those are rare and small.
"""

from __future__ import annotations

import numpy as np

from engine.store import EMPTY, check_rows, expand_ranges


class Solutions:
    """A multiset of solutions: ``columns`` maps variable name to an int64 array."""

    __slots__ = ("columns", "length")

    def __init__(self, columns: dict[str, np.ndarray], length: int) -> None:
        self.columns = columns
        self.length = length

    @classmethod
    def unit(cls) -> Solutions:
        """One solution that binds nothing (the identity of join)."""
        return cls({}, 1)

    @classmethod
    def empty(cls, variables: list[str] | tuple[str, ...] = ()) -> Solutions:
        return cls({v: EMPTY for v in variables}, 0)

    @property
    def variables(self) -> list[str]:
        return list(self.columns)

    def __len__(self) -> int:
        return self.length

    def take(self, rows: np.ndarray) -> Solutions:
        return Solutions({v: c[rows] for v, c in self.columns.items()}, len(rows))

    def mask(self, keep: np.ndarray) -> Solutions:
        return Solutions({v: c[keep] for v, c in self.columns.items()}, int(np.count_nonzero(keep)))

    def column(self, var: str) -> np.ndarray:
        """The column of ``var``; all-unbound when these solutions do not bind it."""
        col = self.columns.get(var)
        return col if col is not None else np.zeros(self.length, dtype=np.int64)

    def with_column(self, var: str, values: np.ndarray) -> Solutions:
        columns = dict(self.columns)
        columns[var] = values
        return Solutions(columns, self.length)

    def project(self, variables: list[str] | tuple[str, ...]) -> Solutions:
        return Solutions({v: self.column(v) for v in variables}, self.length)


def concat(parts: list[Solutions]) -> Solutions:
    """Bag union; a variable missing from a part is unbound in its rows."""
    parts = [p for p in parts if p.length] or parts[:1]
    if not parts:
        return Solutions.empty()
    if len(parts) == 1:
        return parts[0]
    names: dict[str, None] = {}
    for p in parts:
        names.update(dict.fromkeys(p.columns))
    columns = {v: np.concatenate([p.column(v) for p in parts]) for v in names}
    return Solutions(columns, sum(p.length for p in parts))


def cross(left: Solutions, right: Solutions) -> Solutions:
    check_rows(left.length * right.length)
    if left.length == 1 and right.length == 1 and left.columns.keys().isdisjoint(right.columns):
        # one row each (a user's name beside their age): the columns side by side
        return Solutions({**left.columns, **right.columns}, 1)
    lidx = np.repeat(np.arange(left.length, dtype=np.int64), right.length)
    ridx = np.tile(np.arange(right.length, dtype=np.int64), left.length)
    return merge(left, right, lidx, ridx)


def merge(left: Solutions, right: Solutions, lidx: np.ndarray, ridx: np.ndarray) -> Solutions:
    """The solutions of merged row pairs; a shared variable takes the bound side."""
    columns = {v: c[lidx] for v, c in left.columns.items()}
    for v, c in right.columns.items():
        rc = c[ridx]
        if v in columns:
            lc = columns[v]
            columns[v] = np.where(lc != 0, lc, rc)
        else:
            columns[v] = rc
    return Solutions(columns, len(lidx))


def _factorize(left_cols: list[np.ndarray], right_cols: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """One int64 key per row for several join columns, equal keys <=> equal rows."""
    if len(left_cols) == 1:
        return left_cols[0], right_cols[0]
    n_left = len(left_cols[0])
    stacked = np.stack([np.concatenate([l, r]) for l, r in zip(left_cols, right_cols, strict=True)], axis=1)
    _, inverse = np.unique(stacked, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    return inverse[:n_left], inverse[n_left:]


def _equi_pairs(lkey: np.ndarray, rkey: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(rkey, kind="stable")
    sorted_keys = rkey[order]
    lo = np.searchsorted(sorted_keys, lkey, side="left")
    hi = np.searchsorted(sorted_keys, lkey, side="right")
    lidx, pos = expand_ranges(lo, hi)
    return lidx, order[pos]


def join_pairs(left: Solutions, right: Solutions) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs of compatible rows (SPARQL join semantics: equal wherever
    both sides are bound).

    Rows are grouped by which shared variables they bind (a bit mask; OPTIONAL
    leaves some unbound). For each pair of groups the variables bound on both
    sides are joined with one sort-based equi-join, and a pair of groups with
    none in common is a cross product: at most 2^k x 2^k vectorised joins for
    k shared variables, never a loop over rows."""
    shared = [v for v in left.columns if v in right.columns]
    if not shared:
        check_rows(left.length * right.length)
        lidx = np.repeat(np.arange(left.length, dtype=np.int64), right.length)
        ridx = np.tile(np.arange(right.length, dtype=np.int64), left.length)
        return lidx, ridx
    lcols = [left.columns[v] for v in shared]
    rcols = [right.columns[v] for v in shared]
    lmask = _bound_mask(lcols)
    rmask = _bound_mask(rcols)
    full = (1 << len(shared)) - 1
    if (lmask == full).all() and (rmask == full).all():
        return _equi_pairs(*_factorize(lcols, rcols))
    parts_l: list[np.ndarray] = []
    parts_r: list[np.ndarray] = []
    for lm in np.unique(lmask).tolist():
        lrows = np.flatnonzero(lmask == lm)
        for rm in np.unique(rmask).tolist():
            rrows = np.flatnonzero(rmask == rm)
            common = [i for i in range(len(shared)) if (lm & rm) >> i & 1]
            if common:
                lkey, rkey = _factorize([lcols[i][lrows] for i in common], [rcols[i][rrows] for i in common])
                a, b = _equi_pairs(lkey, rkey)
            else:
                check_rows(len(lrows) * len(rrows))
                a = np.repeat(np.arange(len(lrows), dtype=np.int64), len(rrows))
                b = np.tile(np.arange(len(rrows), dtype=np.int64), len(lrows))
            parts_l.append(lrows[a])
            parts_r.append(rrows[b])
    return np.concatenate(parts_l), np.concatenate(parts_r)


def _bound_mask(columns: list[np.ndarray]) -> np.ndarray:
    """Per row, bit i set when the i-th column is bound."""
    mask = np.zeros(len(columns[0]), dtype=np.int64)
    for i, column in enumerate(columns):
        mask |= (column != 0).astype(np.int64) << i
    return mask


def join(left: Solutions, right: Solutions) -> Solutions:
    if not left.length or not right.length:
        return Solutions.empty(list(dict.fromkeys([*left.columns, *right.columns])))
    lidx, ridx = join_pairs(left, right)
    return merge(left, right, lidx, ridx)


def left_outer(left: Solutions, joined: Solutions, lidx: np.ndarray) -> Solutions:
    """``joined`` plus the left rows that no pair in ``lidx`` came from."""
    matched = np.zeros(left.length, dtype=bool)
    matched[lidx] = True
    rest = left.mask(~matched)
    return concat([joined, rest]) if joined.length else _widen(rest, joined)


def _widen(solutions: Solutions, like: Solutions) -> Solutions:
    """``solutions`` with an all-unbound column for each variable only ``like`` has."""
    columns = dict(solutions.columns)
    for v in like.columns:
        columns.setdefault(v, np.zeros(solutions.length, dtype=np.int64))
    return Solutions(columns, solutions.length)


def minus(left: Solutions, right: Solutions) -> Solutions:
    """Rows of ``left`` with no compatible ``right`` row sharing a bound variable."""
    shared = [v for v in left.columns if v in right.columns]
    if not shared or not left.length or not right.length:
        return left
    lidx, ridx = join_pairs(left, right)
    overlap = np.zeros(len(lidx), dtype=bool)
    for v in shared:
        overlap |= (left.columns[v][lidx] != 0) & (right.columns[v][ridx] != 0)
    drop = np.zeros(left.length, dtype=bool)
    drop[lidx[overlap]] = True
    return left.mask(~drop)


def distinct(solutions: Solutions) -> Solutions:
    """Keep the first occurrence of every distinct row, in order."""
    if solutions.length <= 1:
        return solutions
    if not solutions.columns:
        return Solutions({}, 1)
    stacked = np.stack(list(solutions.columns.values()), axis=1)
    _, first = np.unique(stacked, axis=0, return_index=True)
    return solutions.take(np.sort(first))
