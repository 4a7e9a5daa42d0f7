"""GROUP BY and aggregates over ID columns.

Groups are found with one ``np.unique`` over the key columns. COUNT in its
common forms is computed for all groups at once with ``np.bincount``; the
other aggregates go through :func:`compute_aggregate` per group on decoded
terms, decoding only the variables the aggregates read.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.sparql import algebra as A
from engine.sparql.table import Table
from engine.terms import XSD_INTEGER, Literal


def group_ids(key_columns: list[np.ndarray], length: int) -> tuple[np.ndarray, np.ndarray]:
    """``(first row of each group, group number of each row)``."""
    if not key_columns:
        return np.zeros(1, dtype=np.int64), np.zeros(length, dtype=np.int64)
    if len(key_columns) == 1:
        _, first, group_of = np.unique(key_columns[0], return_index=True, return_inverse=True)
    else:
        stacked = np.stack(key_columns, axis=1)
        _, first, group_of = np.unique(stacked, axis=0, return_index=True, return_inverse=True)
    return first, group_of.reshape(-1)


def fast_count(agg: A.Aggregate, table: Table, group_of: np.ndarray, n_groups: int) -> np.ndarray | None:
    """Counts per group for COUNT(*) and COUNT([DISTINCT] ?var); None otherwise."""
    if agg.name != "COUNT":
        return None
    if agg.expr is None:
        return None if agg.distinct else np.bincount(group_of, minlength=n_groups)
    if not isinstance(agg.expr, A.VarExpr):
        return None
    column = table.column(agg.expr.var.name)
    bound = column != 0
    if not agg.distinct:
        return np.bincount(group_of[bound], minlength=n_groups)
    pairs = np.unique(np.stack([group_of[bound], column[bound]], axis=1), axis=0)
    return np.bincount(pairs[:, 0], minlength=n_groups) if len(pairs) else np.zeros(n_groups, np.int64)


def count_literals(counts: np.ndarray, encode_column: Callable) -> np.ndarray:
    """IDs of the xsd:integer literals for a column of counts (one literal per distinct count)."""
    distinct_counts, inverse = np.unique(counts, return_inverse=True)
    ids = encode_column([Literal(str(c), XSD_INTEGER) for c in distinct_counts.tolist()])
    return ids[inverse.reshape(-1)]
