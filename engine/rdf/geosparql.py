"""GeoSPARQL's vocabulary: the names the parser checks and the functions implement.

Kept with the RDF terms because two stages that may not import each other
need them: the SPARQL parser rejects a ``geof:`` function it does not know
(an unknown GeoSPARQL function is a 400, never a silently false FILTER), and
the expression library implements exactly the functions listed here.
"""

from __future__ import annotations

#: the GeoSPARQL ontology (``geo:wktLiteral``, ``geo:asWKT``, ...)
GEO = "http://www.opengis.net/ont/geosparql#"
#: the GeoSPARQL functions (``geof:sfWithin``, ``geof:distance``, ...)
GEOF = "http://www.opengis.net/def/function/geosparql/"
#: the datatype of a Well-Known-Text geometry, optionally prefixed by ``<CRS IRI>``
WKT_LITERAL = GEO + "wktLiteral"
#: OGC's units of measure, the third argument of geof:distance and geof:buffer
UOM = "http://www.opengis.net/def/uom/OGC/1.0/"
#: longitude then latitude on WGS 84: the CRS of a WKT literal without a CRS IRI
CRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
#: WGS 84 as EPSG defines it: latitude first, then longitude
EPSG_4326 = "http://www.opengis.net/def/crs/EPSG/0/4326"

#: the geof: functions implemented, by local name: (least, most) arguments
GEOF_ARITY: dict[str, tuple[int, int]] = {
    **{name: (2, 2) for name in (
        "sfEquals", "sfDisjoint", "sfIntersects", "sfTouches",
        "sfCrosses", "sfWithin", "sfContains", "sfOverlaps",
        "intersection", "union", "difference", "symDifference",
    )},
    **{name: (1, 1) for name in ("envelope", "convexHull", "boundary", "getSRID")},
    "distance": (3, 3),
    "buffer": (3, 3),
}


def geof_problem(iri: str, arguments: int) -> str | None:
    """Why a call of ``iri`` with ``arguments`` arguments cannot run, when
    ``iri`` is in the geof: namespace; None when it can (or is not geof:)."""
    if not iri.startswith(GEOF):
        return None
    name = iri[len(GEOF):]
    arity = GEOF_ARITY.get(name)
    if arity is None:
        return (f"unknown GeoSPARQL function <{iri}> (geof:{name}); "
                f"supported: {', '.join('geof:' + n for n in sorted(GEOF_ARITY))}")
    least, most = arity
    if not least <= arguments <= most:
        return f"geof:{name} takes {least} argument{'s' if least != 1 else ''}, not {arguments}"
    return None
