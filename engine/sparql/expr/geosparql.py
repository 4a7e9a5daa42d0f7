"""The GeoSPARQL functions (``geof:``) over ``geo:wktLiteral`` geometries.

The simple-features relations, ``geof:distance`` and ``geof:buffer`` (with
OGC units of measure), and the set operations, computed by shapely (GEOS).
Each takes evaluated arguments and raises :class:`ExprError` for a term that
is not a WKT literal, malformed WKT, an unsupported CRS or unit: a FILTER
drops the row, BIND leaves the variable unbound, as SPARQL wants of any
expression error. Which functions exist is :data:`engine.rdf.GEOF_ARITY`:
the parser rejects any other ``geof:`` IRI, and :data:`GEOSPARQL` holds
exactly those (a test checks the two agree).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import shapely
from shapely.errors import ShapelyError

from engine.rdf import GEOF, IRI, XSD, Literal, Term
from engine.sparql.expr.context import ExprError
from engine.sparql.expr.geometry import buffered, distance_in, geometry_of, wkt_literal
from engine.sparql.expr.operators import number_of
from engine.sparql.expr.xsd import DOUBLE, bool_literal, number_literal

#: buffers kept computed (by their arguments)
BUFFERS_KEPT = 4096
#: the simple-features relations, by geof: local name
RELATIONS: dict[str, Callable[[shapely.Geometry, shapely.Geometry], bool]] = {
    "sfEquals": shapely.equals,
    "sfDisjoint": shapely.disjoint,
    "sfIntersects": shapely.intersects,
    "sfTouches": shapely.touches,
    "sfCrosses": shapely.crosses,
    "sfWithin": shapely.within,
    "sfContains": shapely.contains,
    "sfOverlaps": shapely.overlaps,
}

#: the set operations: a new geometry in the first argument's CRS
_SET_OPERATIONS: dict[str, Callable[[shapely.Geometry, shapely.Geometry], shapely.Geometry]] = {
    "intersection": shapely.intersection,
    "union": shapely.union,
    "difference": shapely.difference,
    "symDifference": shapely.symmetric_difference,
}

_SHAPES: dict[str, Callable[[shapely.Geometry], shapely.Geometry]] = {
    "envelope": shapely.envelope,
    "convexHull": shapely.convex_hull,
    "boundary": shapely.boundary,
}


def _relation(test: Callable[[shapely.Geometry, shapely.Geometry], bool]) -> Callable[[Term, Term], Term]:
    def relation(a: Term, b: Term) -> Term:
        return bool_literal(bool(test(geometry_of(a).shape, geometry_of(b).shape)))

    return relation


def _set_operation(operation: Callable) -> Callable[[Term, Term], Term]:
    def apply(a: Term, b: Term) -> Term:
        first = geometry_of(a)
        return wkt_literal(operation(first.shape, geometry_of(b).shape), first.crs)

    return apply


def _shape(operation: Callable) -> Callable[[Term], Term]:
    def apply(a: Term) -> Term:
        geometry = geometry_of(a)
        return wkt_literal(operation(geometry.shape), geometry.crs)

    return apply


def unit_of(term: Term) -> str:
    """The IRI of a unit-of-measure argument."""
    if term.__class__ is not IRI:
        raise ExprError(f"expected a unit of measure IRI (uom:metre, ...), got {term!r}")
    return term.value  # type: ignore[union-attr]


def _distance(a: Term, b: Term, unit: Term) -> Term:
    return number_literal(distance_in(unit_of(unit), geometry_of(a), geometry_of(b)), DOUBLE)


@lru_cache(maxsize=BUFFERS_KEPT)
def _buffer(a: Term, radius: Term, unit: Term) -> Term:
    """Kept for the next call: ``sfWithin(?x, geof:buffer(?place, ...))`` asks
    for the same buffer with every ``?x``."""
    geometry = geometry_of(a)
    grown = buffered(unit_of(unit), geometry, float(number_of(radius)[1]))
    return wkt_literal(grown, geometry.crs)


def _srid(a: Term) -> Term:
    return Literal(geometry_of(a).crs, XSD + "anyURI")


def _guarded(function: Callable[..., Term]) -> Callable[..., Term]:
    """``function`` with a GEOS failure (a self-intersecting polygon in a set
    operation, say) raised as the expression error it is."""
    def guarded(*args: Term) -> Term:
        try:
            return function(*args)
        except ShapelyError as error:
            raise ExprError(f"geometry error: {str(error).splitlines()[0]}") from None

    return guarded


#: every geof: function, by IRI: evaluated arguments in, a term out
GEOSPARQL: dict[str, Callable[..., Term]] = {
    GEOF + name: _guarded(function) for name, function in {
        **{name: _relation(test) for name, test in RELATIONS.items()},
        **{name: _set_operation(op) for name, op in _SET_OPERATIONS.items()},
        **{name: _shape(op) for name, op in _SHAPES.items()},
        "distance": _distance,
        "buffer": _buffer,
        "getSRID": _srid,
    }.items()
}
