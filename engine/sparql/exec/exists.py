"""EXISTS and NOT EXISTS: run the inner pattern with the solution's bindings substituted.

SPARQL 1.1 section 18.6 defines ``exists(P)`` for a solution ``mu`` as
"``substitute(P, mu)`` has a solution"; the expression evaluator calls
:func:`exists` through ``EvalContext.exists``, once per solution.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from engine.rdf import IRI, BNode, Literal, Term, Variable
from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.solutions import Solutions, join


def exists(cx: ExecutionContext, pattern: A.Pattern, row: Mapping[Variable, Term]) -> bool:
    """True when the pattern, with the row's bindings substituted, has a
    solution compatible with the row."""
    saved_ctx_exists = cx.ctx.exists
    try:
        bound = Solutions({v.name: np.array([cx.terms.encode(t)], dtype=np.int64) for v, t in row.items()}, 1)
        result = cx.run(substitute(pattern, row))
        if not result.length:
            return False
        return join(bound, result).length > 0 if bound.columns else True
    finally:
        cx.ctx.exists = saved_ctx_exists


def substitute(node, row: Mapping[Variable, Term]):
    """A copy of an algebra subtree with the row's variables replaced by terms."""
    if isinstance(node, Variable):
        return row.get(node, node)
    if isinstance(node, A.VarExpr):
        term = row.get(node.var)
        return A.TermExpr(term) if term is not None else node
    if isinstance(node, (IRI, BNode, Literal, str, int, bool, float)) or node is None:
        return node
    if isinstance(node, tuple):
        return tuple(substitute(x, row) for x in node)
    if isinstance(node, A.Values):
        return node
    if isinstance(node, A.Extend):
        return A.Extend(substitute(node.pattern, row), node.var, substitute(node.expr, row))
    if isinstance(node, A.Project):
        inner = {v: t for v, t in row.items() if v in node.vars}
        return A.Project(substitute(node.pattern, inner), node.vars)
    if isinstance(node, A.Graph):
        return A.Graph(substitute(node.name, row), substitute(node.pattern, row))
    if not dataclasses.is_dataclass(node):
        return node
    return node.__class__(*(substitute(getattr(node, f.name), row) for f in dataclasses.fields(node)))
