"""Spatial filters: which FILTER conjuncts only pair geometries near each other.

A FILTER over two sides that share no variable would otherwise compare every
pair of their rows. These conjuncts are true only for two geometries whose
bounding boxes, grown by a reach, overlap:

* ``geof:sfIntersects|sfWithin|sfContains|sfEquals|sfTouches|sfCrosses|sfOverlaps(?a, ?b)``
  (reach 0: the boxes themselves meet);
* ``geof:distance(?a, ?b, unit) < d`` (or ``<=``, or ``d > ...``, ``d >= ...``);
* ``geof:sfWithin|sfIntersects(?a, geof:buffer(?b, d, unit))`` and
  ``geof:sfContains|sfIntersects(geof:buffer(?b, d, unit), ?a)``.

This module only recognises the shape; the executor
(:mod:`engine.sparql.exec.spatial_join`) pairs candidates through an
R-tree and still evaluates the whole condition on each candidate pair, so
the answer is the pairwise one.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.rdf import GEOF, IRI, Literal
from engine.sparql import algebra as A

#: the relations that hold only between geometries whose boxes meet
_MEETING = frozenset(GEOF + name for name in (
    "sfIntersects", "sfWithin", "sfContains", "sfEquals", "sfTouches", "sfCrosses", "sfOverlaps"))
#: relations of a geometry to a buffer, with the buffer as the (second, first) argument
_INSIDE_BUFFER = frozenset((GEOF + "sfWithin", GEOF + "sfIntersects"))
_AROUND = frozenset((GEOF + "sfContains", GEOF + "sfIntersects"))
_DISTANCE, _BUFFER = GEOF + "distance", GEOF + "buffer"
#: ``distance op d`` operators that bound the distance from above, with ``d`` on the right / left
_BELOW = frozenset(("<", "<="))
_ABOVE = frozenset((">", ">="))


@dataclass(frozen=True, slots=True)
class SpatialPredicate:
    """Geometries ``?left`` and ``?right`` can satisfy the conjunct only when
    their boxes, grown by ``reach`` in ``unit`` (a uom: IRI), meet; ``reach``
    None: the boxes themselves must meet."""

    left: str
    right: str
    reach: Literal | None = None
    unit: str | None = None


def conjuncts(expr: A.Expr) -> list[A.Expr]:
    """The operands of a top-level ``&&`` chain (the expression itself otherwise)."""
    if isinstance(expr, A.BinaryExpr) and expr.op == "&&":
        return conjuncts(expr.left) + conjuncts(expr.right)
    return [expr]


def spatial_predicates(condition: A.Expr) -> list[SpatialPredicate]:
    """The conjuncts of ``condition`` that pair nearby geometries only."""
    found = (_spatial(expr) for expr in conjuncts(condition))
    return [predicate for predicate in found if predicate is not None]


def _spatial(expr: A.Expr) -> SpatialPredicate | None:
    if isinstance(expr, A.FunctionExpr) and len(expr.args) == 2:
        first, second = expr.args
        pair = _variables(first, second)
        if pair is not None and expr.iri in _MEETING:
            return SpatialPredicate(*pair)
        if expr.iri in _INSIDE_BUFFER and isinstance(first, A.VarExpr):
            return _buffered(first, second)
        if expr.iri in _AROUND and isinstance(second, A.VarExpr):
            return _buffered(second, first)
        return None
    if isinstance(expr, A.BinaryExpr):
        if expr.op in _BELOW:
            return _within_distance(expr.left, expr.right)
        if expr.op in _ABOVE:
            return _within_distance(expr.right, expr.left)
    return None


def _variables(first: A.Expr, second: A.Expr) -> tuple[str, str] | None:
    if isinstance(first, A.VarExpr) and isinstance(second, A.VarExpr) and first.var != second.var:
        return first.var.name, second.var.name
    return None


def _within_distance(measured: A.Expr, bound: A.Expr) -> SpatialPredicate | None:
    """``geof:distance(?a, ?b, <unit>) < d``."""
    if not (isinstance(measured, A.FunctionExpr) and measured.iri == _DISTANCE and len(measured.args) == 3):
        return None
    a, b, unit = measured.args
    pair = _variables(a, b)
    if pair is None or not _constant(unit, IRI) or not _constant(bound, Literal):
        return None
    return SpatialPredicate(*pair, reach=bound.term, unit=unit.term.value)  # type: ignore[union-attr]


def _buffered(geometry: A.VarExpr, buffer: A.Expr) -> SpatialPredicate | None:
    """``?a`` against ``geof:buffer(?b, d, <unit>)``."""
    if not (isinstance(buffer, A.FunctionExpr) and buffer.iri == _BUFFER and len(buffer.args) == 3):
        return None
    centre, radius, unit = buffer.args
    pair = _variables(geometry, centre)
    if pair is None or not _constant(unit, IRI) or not _constant(radius, Literal):
        return None
    return SpatialPredicate(*pair, reach=radius.term, unit=unit.term.value)  # type: ignore[union-attr]


def _constant(expr: A.Expr, kind: type) -> bool:
    return isinstance(expr, A.TermExpr) and isinstance(expr.term, kind)
