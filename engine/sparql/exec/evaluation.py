"""Expressions over solutions: the bridge between ID columns and :mod:`engine.sparql.expr`.

Expressions are evaluated on decoded terms, one solution at a time, by
:func:`engine.sparql.expr.evaluate`. This module keeps that affordable: the
columns an expression reads are decoded once per operator, the expression
runs once per distinct combination of their values (a FILTER over a million
rows with ten thousand distinct names evaluates ten thousand times), and the
comparisons the planner recognises (:mod:`engine.sparql.plan.vector_filter`)
skip evaluation altogether with one NumPy comparison over the column.
"""

from __future__ import annotations

import numpy as np

from engine.rdf import KIND_LITERAL, Literal, Term, Variable
from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.solutions import Solutions
from engine.sparql.expr import ExprError, effective_boolean_value, evaluate, expression_variables
from engine.sparql.plan import ColumnComparison, TermIdentity, column_comparison, term_identity
from engine.store import checkpoint
from engine.store.distinct_ids import unique_inverse

#: the NumPy test of each comparison operator
_COMPARE = {
    "=": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    ">": np.greater,
    "<=": np.less_equal,
    ">=": np.greater_equal,
}


def decoded_rows(
    solutions: Solutions, terms: QueryTerms, variables: list[str] | None = None
) -> list[dict[Variable, Term]]:
    """The solutions as per-row mappings (only ``variables`` if given); unbound
    variables are left out of a row."""
    names = solutions.variables if variables is None else [v for v in variables if v in solutions.columns]
    decoded = [(Variable(v), terms.decode_column(solutions.columns[v])) for v in names]
    rows = []
    for i in range(solutions.length):
        row = {}
        for var, values in decoded:
            term = values[i]
            if term is not None:
                row[var] = term
        rows.append(row)
    return rows


def distinct_inputs(
    expr: A.Expr, solutions: Solutions, terms: QueryTerms
) -> tuple[list[dict[Variable, Term]], np.ndarray] | None:
    """``(rows, inverse)``: one decoded row per distinct combination of the
    values ``expr`` reads, and for each solution the index of its
    combination; None when the expression must see every row (EXISTS,
    RAND, BNODE, ...)."""
    needed = expression_variables(expr)
    if needed is None:
        return None
    names = sorted(v for v in needed if v in solutions.columns)
    if not names:
        return [{}], np.zeros(solutions.length, dtype=np.int64)
    if len(names) == 1:
        distinct, inverse = unique_inverse(solutions.columns[names[0]])
        distinct = distinct.reshape(-1, 1)
    else:
        stacked = np.stack([solutions.columns[n] for n in names], axis=1)
        distinct, inverse = np.unique(stacked, axis=0, return_inverse=True)
    combinations = Solutions({n: distinct[:, i] for i, n in enumerate(names)}, len(distinct))
    return decoded_rows(combinations, terms), inverse.reshape(-1)


def evaluations(
    expr: A.Expr, solutions: Solutions, cx: ExecutionContext
) -> tuple[list[Term | None], np.ndarray]:
    """Values of ``expr`` (None for an error) and, per solution, the index
    of its value."""
    inputs = distinct_inputs(expr, solutions, cx.terms)
    if inputs is None:
        rows, inverse = decoded_rows(solutions, cx.terms), np.arange(solutions.length)
    else:
        rows, inverse = inputs
    ctx = cx.ctx
    out: list[Term | None] = []
    for n, row in enumerate(rows):
        if n & 4095 == 4095:  # a FILTER over millions of rows stops within its time limit
            checkpoint()
        ctx.new_row()
        try:
            out.append(evaluate(expr, row, ctx))
        except ExprError:
            out.append(None)
    return out, inverse


def encoded_values(expr: A.Expr, solutions: Solutions, cx: ExecutionContext) -> np.ndarray:
    """The IDs of ``expr``'s value on every solution (0 where it is an error)."""
    values, inverse = evaluations(expr, solutions, cx)
    return cx.terms.encode_column(values)[inverse]


def truth_mask(expr: A.Expr, solutions: Solutions, cx: ExecutionContext) -> np.ndarray:
    """Solutions where ``expr`` is true (an error counts as not true, as FILTER
    wants). ``&&`` / ``||`` split, so each side can take the vectorised
    path and the second side is only evaluated on the rows still open:
    ``A && B`` is true exactly where both are, ``A || B`` where either is,
    whatever errors the other side raises."""
    if isinstance(expr, A.BinaryExpr) and expr.op in ("&&", "||"):
        first = truth_mask(expr.left, solutions, cx)
        open_rows = first if expr.op == "&&" else ~first
        if not open_rows.any():
            return first
        result = first.copy()
        result[open_rows] = truth_mask(expr.right, solutions.mask(open_rows), cx)
        return result
    comparison = column_comparison(expr)
    if comparison is not None:
        fast = _compared_column(comparison, solutions, cx.terms)
        if fast is not None:
            return fast
    identity = term_identity(expr)
    if identity is not None:
        fast = _identical_columns(identity, solutions, cx.terms)
        if fast is not None:
            return fast
    values, inverse = evaluations(expr, solutions, cx)
    truth = np.zeros(len(values), dtype=bool)
    for i, value in enumerate(values):
        if value is not None:
            try:
                truth[i] = effective_boolean_value(value)
            except ExprError:
                pass
    return truth[inverse]


def _identical_columns(identity: TermIdentity, solutions: Solutions, terms: QueryTerms) -> np.ndarray | None:
    """``?a = ?b`` / ``?a != ?b`` by ID, when both columns are bound and hold
    no literal in any row; None when the general path is needed."""
    left, right = solutions.columns.get(identity.left), solutions.columns.get(identity.right)
    if left is None or right is None or (left == 0).any() or (right == 0).any():
        return None
    if (terms.kinds(left) >= KIND_LITERAL).any() or (terms.kinds(right) >= KIND_LITERAL).any():
        return None
    return left == right if identity.equal else left != right


def _compared_column(
    comparison: ColumnComparison, solutions: Solutions, terms: QueryTerms
) -> np.ndarray | None:
    """The comparison over the whole column at once, when the column's terms
    allow it (all numbers for a numeric constant, all bound for an IRI);
    None when the general path is needed."""
    column = solutions.columns.get(comparison.variable)
    if column is None:
        return None
    test = _COMPARE[comparison.op]
    if isinstance(comparison.constant, Literal):
        number = terms.numbers(np.array([terms.encode(comparison.constant)]))[0]
        if np.isnan(number):
            return None
        values = terms.numbers(column)
        if np.isnan(values).any():
            return None
        return test(values, number)
    if (column == 0).any():
        return None
    return test(column, terms.encode(comparison.constant))
