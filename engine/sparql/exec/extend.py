"""BIND and SELECT expressions: a new column computed from the others.

Expressions are evaluated once per distinct input (through
:mod:`engine.sparql.exec.evaluation`), except row-scoped ones (BNODE, RAND,
...): a chain of Extends holding one is evaluated row by row, all its
expressions of one solution together, because ``BNODE("x")`` must give the
same blank node in every expression of the same solution.
"""

from __future__ import annotations

import numpy as np

from engine.rdf import Term
from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.evaluation import decoded_rows, encoded_values
from engine.sparql.exec.solutions import Solutions
from engine.sparql.expr import ExprError, evaluate, expression_variables


def extend(node: A.Extend, cx: ExecutionContext) -> Solutions:
    """The chain of Extends that ends in ``node``, over the pattern below it."""
    chain: list[A.Extend] = []
    inner: A.Pattern = node
    while isinstance(inner, A.Extend):
        chain.append(inner)
        inner = inner.pattern
    chain.reverse()
    solutions = cx.run(inner)
    if not solutions.length:
        for ext in chain:
            solutions = solutions.with_column(ext.var.name, np.zeros(0, dtype=np.int64))
        return solutions
    if all(expression_variables(ext.expr) is not None for ext in chain):
        return _by_distinct_inputs(chain, solutions, cx)
    return _row_by_row(chain, solutions, cx)


def _by_distinct_inputs(chain: list[A.Extend], solutions: Solutions, cx: ExecutionContext) -> Solutions:
    """Nothing row-scoped: one expression at a time, once per distinct input."""
    for ext in chain:
        if isinstance(ext.expr, A.VarExpr):
            values = solutions.column(ext.expr.var.name).copy()
        else:
            values = encoded_values(ext.expr, solutions, cx)
        solutions = solutions.with_column(ext.var.name, values)
    return solutions


def _row_by_row(chain: list[A.Extend], solutions: Solutions, cx: ExecutionContext) -> Solutions:
    """Every expression of the chain on each solution in turn, each seeing
    the values the ones before it bound."""
    outputs: list[list[Term | None]] = [[] for _ in chain]
    ctx = cx.ctx
    for row in decoded_rows(solutions, cx.terms):
        ctx.new_row()
        for ext, out in zip(chain, outputs, strict=True):
            try:
                value = evaluate(ext.expr, row, ctx)
                row[ext.var] = value
            except ExprError:
                value = None
            out.append(value)
    for ext, out in zip(chain, outputs, strict=True):
        solutions = solutions.with_column(ext.var.name, cx.terms.encode_column(out))
    return solutions
