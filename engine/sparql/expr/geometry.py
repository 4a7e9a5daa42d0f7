"""Geometries of ``geo:wktLiteral`` terms, and distances on the WGS 84 sphere.

A WKT literal is ``[<CRS IRI> ]WKT``. Without a CRS IRI it is in CRS84
(longitude, latitude in degrees); ``<.../EPSG/0/4326>`` is the same datum
with latitude first, so its axes are swapped on reading: every geometry is
held as longitude/latitude (x = longitude), whatever CRS it was written in,
and two literals in either CRS compare correctly. Other CRSs are an
expression error (a distance in metres needs to know the CRS).

Parsing is cached by the literal (one term: one ID), so a FILTER that pairs
a few stored places with many readings parses each literal once, and a
continuous query's stored places are not parsed again every window.

Distances in a linear unit are on the sphere of WGS 84's mean radius
(:data:`EARTH_RADIUS_M`): between two points, the great-circle (haversine)
distance; between other geometries, the great-circle distance of the two
points nearest to each other in longitude/latitude degrees (exact for points,
a close approximation for small shapes far from the poles and the
antimeridian).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import shapely
from shapely.errors import ShapelyError

from engine.rdf import CRS84, EPSG_4326, UOM, WKT_LITERAL, Literal, Term
from engine.sparql.expr.context import ExprError

#: WGS 84's mean Earth radius (IUGG), the sphere of great-circle distances
EARTH_RADIUS_M = 6_371_008.8
#: metres in one degree of a great circle
METRES_PER_DEGREE = EARTH_RADIUS_M * math.pi / 180
#: the linear units offered, in metres
LINEAR_UNITS = {UOM + "metre": 1.0, UOM + "kilometre": 1000.0}
#: the angular units offered, in degrees (a planar distance in longitude/latitude degrees)
ANGULAR_UNITS = {UOM + "degree": 1.0, UOM + "radian": 180 / math.pi}
#: the CRS IRIs read; the value says whether the axes are latitude first
CRS_AXES_SWAPPED = {CRS84: False, "https://www.opengis.net/def/crs/OGC/1.3/CRS84": False, EPSG_4326: True}
#: literals whose geometry is kept parsed
PARSED_KEPT = 16384


@dataclass(frozen=True, slots=True)
class Geometry:
    """A geometry in longitude/latitude degrees and the CRS it was written in;
    whether it is empty, and a point's coordinates, read once (a distance
    between two points is then plain arithmetic)."""

    shape: shapely.Geometry
    crs: str
    empty: bool
    point: tuple[float, float] | None


def _geometry(shape: shapely.Geometry, crs: str) -> Geometry:
    empty = bool(shapely.is_empty(shape))
    point = (shape.x, shape.y) if not empty and shape.geom_type == "Point" else None
    return Geometry(shape, crs, empty, point)


def geometry_of(term: Term) -> Geometry:
    """The geometry of a ``geo:wktLiteral``; ExprError for any other term, a
    malformed WKT or an unsupported CRS."""
    if term.__class__ is not Literal or term.datatype != WKT_LITERAL:  # type: ignore[union-attr]
        raise ExprError(f"expected a geo:wktLiteral, got {term!r}")
    found = parse_wkt(term.lexical)  # type: ignore[union-attr]
    if isinstance(found, str):
        raise ExprError(found)
    return found


@lru_cache(maxsize=PARSED_KEPT)
def parse_wkt(lexical: str) -> Geometry | str:
    """The geometry of a WKT literal's lexical form, or why it has none (a
    problem is cached as well, so a bad literal is not parsed on every row)."""
    text = lexical.strip()
    crs = CRS84
    if text.startswith("<"):
        end = text.find(">")
        if end < 0:
            return f"WKT literal with an unclosed CRS IRI: {lexical[:60]!r}"
        crs, text = text[1:end], text[end + 1:].strip()
    swapped = CRS_AXES_SWAPPED.get(crs)
    if swapped is None:
        return f"unsupported CRS <{crs}> (supported: CRS84, EPSG:4326)"
    try:
        shape = shapely.from_wkt(text)
    except (ShapelyError, ValueError) as error:
        return f"malformed WKT {text[:60]!r}: {str(error).splitlines()[0]}"
    if shape is None:
        return f"malformed WKT {text[:60]!r}"
    if swapped:
        shape = shapely.transform(shape, lambda xy: xy[:, ::-1])
    return _geometry(shape, CRS84 if not swapped else EPSG_4326)


def wkt_literal(shape: shapely.Geometry, crs: str) -> Literal:
    """A ``geo:wktLiteral`` of a longitude/latitude geometry, written in ``crs``
    (no CRS IRI for CRS84, the default)."""
    if CRS_AXES_SWAPPED.get(crs):
        shape = shapely.transform(shape, lambda xy: xy[:, ::-1])
        return Literal(f"<{crs}> {shapely.to_wkt(shape, rounding_precision=-1)}", WKT_LITERAL)
    return Literal(shapely.to_wkt(shape, rounding_precision=-1), WKT_LITERAL)


def great_circle_m(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Great-circle (haversine) distance in metres between points given in degrees."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dl = math.radians(lon2 - lon1)
    h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(min(max(h, 0.0), 1.0)))


def distance_in(unit: str, a: Geometry, b: Geometry) -> float:
    """The distance of two geometries in ``unit`` (a uom: IRI); ExprError for
    an unknown unit or an empty geometry."""
    if a.empty or b.empty:
        raise ExprError("geof:distance of an empty geometry")
    metres = LINEAR_UNITS.get(unit)
    if metres is not None:
        if a.point is not None and b.point is not None:
            return great_circle_m(*a.point, *b.point) / metres
        near_a, near_b = shapely.get_point(shapely.shortest_line(a.shape, b.shape), [0, 1])
        return great_circle_m(near_a.x, near_a.y, near_b.x, near_b.y) / metres
    degrees = ANGULAR_UNITS.get(unit)
    if degrees is not None:
        return float(shapely.distance(a.shape, b.shape)) / degrees
    raise ExprError(f"unsupported unit of measure <{unit}> (supported: {', '.join(units())})")


def buffered(unit: str, geometry: Geometry, radius: float) -> shapely.Geometry:
    """The geometry grown by ``radius`` in ``unit``. In a linear unit it is
    drawn in metres on a local equirectangular plane around the geometry's
    centroid (accurate for radii of up to some hundred kilometres away from
    the poles); in an angular unit, in longitude/latitude degrees."""
    shape = geometry.shape
    metres = LINEAR_UNITS.get(unit)
    if metres is not None:
        if geometry.empty:
            return shape
        centre = shape.centroid
        lon0, lat0 = centre.x, centre.y
        scale_x = METRES_PER_DEGREE * max(math.cos(math.radians(lat0)), 1e-9)

        def to_plane(xy: np.ndarray) -> np.ndarray:
            return np.column_stack([(xy[:, 0] - lon0) * scale_x, (xy[:, 1] - lat0) * METRES_PER_DEGREE])

        def to_degrees(xy: np.ndarray) -> np.ndarray:
            return np.column_stack([xy[:, 0] / scale_x + lon0, xy[:, 1] / METRES_PER_DEGREE + lat0])

        plane = shapely.transform(shape, to_plane)
        return shapely.transform(shapely.buffer(plane, radius * metres), to_degrees)
    degrees = ANGULAR_UNITS.get(unit)
    if degrees is not None:
        return shapely.buffer(shape, radius * degrees)
    raise ExprError(f"unsupported unit of measure <{unit}> (supported: {', '.join(units())})")


def units() -> list[str]:
    """The uom: units offered, by local name."""
    return [iri[len(UOM):] for iri in (*LINEAR_UNITS, *ANGULAR_UNITS)]
