"""GROUP BY and aggregates over ID columns.

Groups are found with one ``np.unique`` over the key columns. COUNT, and
SUM/AVG/MIN/MAX of a numeric variable, are computed for all groups at once
(``np.bincount``, one ``lexsort``) from the dictionary's numeric side array;
the other aggregates go through :func:`compute_aggregate` per group on
decoded terms, decoding only the variables the aggregates read.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.rdf import XSD_INTEGER, Literal
from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.evaluation import decoded_rows, encoded_values
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.solutions import Solutions
from engine.sparql.expr import ExprError, expression_variables
from engine.sparql.expr.aggregates import canonical_number, compute_aggregate
from engine.sparql.expr.operators import arithmetic
from engine.sparql.expr.xsd import DOUBLE, INTEGER, integer_literal, number_literal, numeric
from engine.store.compact_dictionary import SHORT_COLUMN
from engine.store.distinct_ids import unique_inverse


def group_by(node: A.GroupBy, cx: ExecutionContext) -> Solutions:
    """The GROUP BY operator: one solution per group, binding the visible
    keys and the aggregates' ``.aggN`` variables."""
    solutions = cx.run(node.pattern)
    key_names: list[str] = []
    key_columns: list[np.ndarray] = []
    for i, (expr, var) in enumerate(node.keys):
        key_names.append(var.name if var is not None else f".key{i}")
        if isinstance(expr, A.VarExpr):
            key_columns.append(solutions.column(expr.var.name))
        else:
            key_columns.append(encoded_values(expr, solutions, cx))
    visible = [k for k in key_names if not k.startswith(".key")]
    if key_names and not solutions.length:
        return Solutions.empty([*visible, *(v.name for v, _ in node.aggregates)])
    first, group_of = group_ids(key_columns, solutions.length)
    n_groups = len(first)
    out = {k: c[first] for k, c in zip(key_names, key_columns, strict=True) if not k.startswith(".key")}
    members: list[list[dict]] | None = None
    for var, agg in node.aggregates:
        counts = fast_count(agg, solutions, group_of, n_groups)
        if counts is not None:
            out[var.name] = count_literals(counts, cx.terms.encode_column)
            continue
        numbers = fast_numeric(agg, solutions, group_of, n_groups, cx.terms)
        if numbers is not None:
            out[var.name] = cx.terms.encode_column(numbers)
            continue
        if members is None:
            members = _group_members(node, solutions, group_of, n_groups, cx)
        values = []
        for group_rows in members:
            cx.ctx.new_row()
            try:
                values.append(compute_aggregate(agg, group_rows, cx.ctx))
            except ExprError:
                values.append(None)
        out[var.name] = cx.terms.encode_column(values)
    return Solutions(out, n_groups)


def _group_members(
    node: A.GroupBy, solutions: Solutions, group_of: np.ndarray, n_groups: int, cx: ExecutionContext
) -> list[list[dict]]:
    """Decoded rows per group, with only the variables the aggregates read."""
    needed: set[str] | None = set()
    for _, agg in node.aggregates:
        names = expression_variables(agg.expr) if agg.expr is not None else set(solutions.columns)
        needed = None if (names is None or needed is None) else needed | names
    rows = decoded_rows(solutions, cx.terms, None if needed is None else sorted(needed))
    members: list[list[dict]] = [[] for _ in range(n_groups)]
    for row, g in zip(rows, group_of.tolist(), strict=True):
        members[g].append(row)
    return members


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


def fast_count(
    agg: A.Aggregate, solutions: Solutions, group_of: np.ndarray, n_groups: int
) -> np.ndarray | None:
    """Counts per group for COUNT(*) and COUNT([DISTINCT] ?var); None otherwise."""
    if agg.name != "COUNT":
        return None
    if agg.expr is None:
        return None if agg.distinct else np.bincount(group_of, minlength=n_groups)
    if not isinstance(agg.expr, A.VarExpr):
        return None
    column = solutions.column(agg.expr.var.name)
    bound = column != 0
    if not agg.distinct:
        return np.bincount(group_of[bound], minlength=n_groups)
    pairs = np.unique(np.stack([group_of[bound], column[bound]], axis=1), axis=0)
    return np.bincount(pairs[:, 0], minlength=n_groups) if len(pairs) else np.zeros(n_groups, np.int64)


def count_literals(counts: np.ndarray, encode_column: Callable) -> np.ndarray:
    """IDs of the xsd:integer literals for a column of counts (one literal per
    distinct count; a short column, such as the one count of a query without
    GROUP BY, a literal per row: sorting it would cost more)."""
    if len(counts) <= SHORT_COLUMN:
        return encode_column([Literal(str(c), XSD_INTEGER) for c in counts.tolist()])
    distinct_counts, inverse = np.unique(counts, return_inverse=True)
    ids = encode_column([Literal(str(c), XSD_INTEGER) for c in distinct_counts.tolist()])
    return ids[inverse.reshape(-1)]


#: integer sums are exact in float64 below this magnitude
_EXACT_FLOAT_INTEGERS = 2.0**53


def fast_numeric(
    agg: A.Aggregate, solutions: Solutions, group_of: np.ndarray, n_groups: int, terms: QueryTerms
) -> list | None:
    """SUM, AVG, MIN or MAX of ``?var`` for all groups at once, when every bound
    value is a valid number; None when the general path is needed (DISTINCT,
    an expression argument, a non-number, or a sum that float64 could round).

    Values come from the dictionary's numeric side array; the result type
    follows SPARQL's promotion, found from the distinct terms only."""
    if agg.name not in ("SUM", "AVG", "MIN", "MAX") or agg.distinct or not isinstance(agg.expr, A.VarExpr):
        return None
    column = solutions.column(agg.expr.var.name)
    bound = column != 0
    ids, groups = column[bound], group_of[bound]
    values = terms.numbers(ids)
    if np.isnan(values).any():
        return None
    distinct_ids, inverse = unique_inverse(ids)
    ranks_of_distinct = []
    for term in terms.decode_column(distinct_ids):
        parsed = numeric(term)
        if parsed is None:
            return None
        ranks_of_distinct.append(parsed[0])
    ranks = np.array(ranks_of_distinct, dtype=np.int64)[inverse.reshape(-1)] if len(ids) else ids
    counts = np.bincount(groups, minlength=n_groups)
    if agg.name in ("MIN", "MAX"):
        return _extremes(agg.name, ids, values, groups, counts, n_groups, terms)
    top_rank = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(top_rank, groups, ranks)
    if ((top_rank != INTEGER) & (top_rank != DOUBLE) & (counts > 0)).any():
        return None  # decimal / float sums need exact or single-precision arithmetic
    if np.abs(values).sum() >= _EXACT_FLOAT_INTEGERS and (top_rank == INTEGER).any():
        return None
    sums = np.bincount(groups, weights=values, minlength=n_groups)
    out: list = []
    for total, count, rank in zip(sums.tolist(), counts.tolist(), top_rank.tolist(), strict=True):
        if count == 0:
            out.append(integer_literal(0))
        elif rank == INTEGER:
            exact = integer_literal(int(total))
            out.append(exact if agg.name == "SUM" else arithmetic("/", exact, integer_literal(count)))
        else:
            out.append(number_literal(total if agg.name == "SUM" else total / count, DOUBLE))
    return out


def _extremes(name: str, ids, values, groups, counts, n_groups: int, terms) -> list:
    """The smallest (largest) value per group, in canonical form as the
    general path gives it; unbound for a group with no value."""
    order = np.lexsort((values if name == "MIN" else -values, groups))
    starts = np.searchsorted(groups[order], np.arange(n_groups))
    chosen = [int(ids[order[start]]) if counts[g] else 0 for g, start in enumerate(starts.tolist())]
    return [None if term is None else canonical_number(term)
            for term in terms.decode_column(np.array(chosen, dtype=np.int64))]
