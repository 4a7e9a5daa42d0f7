"""Vectorised filters: which FILTER shapes compare a whole column at once.

``?x op number`` (also written ``number op ?x``) and ``?x = <iri>`` /
``?x != <iri>`` can be answered with one NumPy comparison over the column of
``?x``: numbers through the dictionary's numeric side array, IRIs by ID.
``?x = ?y`` and ``?x != ?y`` compare two columns by ID where no row holds a
literal (an IRI or blank node equals only itself; a literal may equal
another spelling of its value, so literals take the general path).
This module only recognises the shape; the executor checks that the column's
terms allow it (all numbers, or all bound) and falls back to evaluating the
expression otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.rdf import IRI, Literal
from engine.sparql import algebra as A

#: comparison operators a column can be tested with
COMPARISONS = frozenset(("=", "!=", "<", ">", "<=", ">="))
#: the operator that gives the same test with its operands swapped
_FLIP = {"=": "=", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


@dataclass(frozen=True, slots=True)
class ColumnComparison:
    """``?variable op constant``; ``constant`` is a literal (compared as a
    number) or, for ``=`` and ``!=`` only, an IRI (compared by ID)."""

    variable: str
    op: str
    constant: Literal | IRI


def column_comparison(expr: A.Expr) -> ColumnComparison | None:
    """The comparison ``expr`` is, with the variable on the left; None when
    the expression has another shape."""
    if not isinstance(expr, A.BinaryExpr) or expr.op not in COMPARISONS:
        return None
    left, right = expr.left, expr.right
    if isinstance(left, A.TermExpr) and isinstance(right, A.VarExpr):
        left, right = right, left
        op = _FLIP[expr.op]
    else:
        op = expr.op
    if not isinstance(left, A.VarExpr) or not isinstance(right, A.TermExpr):
        return None
    constant = right.term
    if isinstance(constant, Literal) or (isinstance(constant, IRI) and op in ("=", "!=")):
        return ColumnComparison(left.var.name, op, constant)
    return None


@dataclass(frozen=True, slots=True)
class TermIdentity:
    """``?left = ?right`` (``equal``) or ``?left != ?right``."""

    left: str
    right: str
    equal: bool


def term_identity(expr: A.Expr) -> TermIdentity | None:
    """The two-variable (in)equality ``expr`` is; None for any other shape."""
    if (isinstance(expr, A.BinaryExpr) and expr.op in ("=", "!=")
            and isinstance(expr.left, A.VarExpr) and isinstance(expr.right, A.VarExpr)):
        return TermIdentity(expr.left.var.name, expr.right.var.name, expr.op == "=")
    return None
