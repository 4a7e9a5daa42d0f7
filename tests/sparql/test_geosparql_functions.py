"""GeoSPARQL's geof: functions over geo:wktLiteral points and polygons: the
simple-features relations, distance (great-circle metres over CRS84), buffer
and the set operations; a malformed literal, an unsupported CRS or unit is an
expression error (never a silent false), and an unknown geof: function is a
syntax error naming it."""

from __future__ import annotations

import math
import random

import pytest

from engine.api import Store
from engine.rdf import GEOF, GEOF_ARITY, IRI, WKT_LITERAL, XSD, Literal
from engine.sparql.expr.geometry import EARTH_RADIUS_M, parse_wkt
from engine.sparql.expr.geosparql import GEOSPARQL
from engine.sparql.syntax import SparqlSyntaxError

EX = "http://example.org/"
PREFIXES = ("PREFIX geo: <http://www.opengis.net/ont/geosparql#> "
            "PREFIX geof: <http://www.opengis.net/def/function/geosparql/> "
            "PREFIX uom: <http://www.opengis.net/def/uom/OGC/1.0/> ")
SQUARE = "POLYGON((0 0, 2 0, 2 2, 0 2, 0 0))"
#: name -> WKT: a unit square, its neighbours and points around it
SHAPES = {
    "square": SQUARE,
    "same": "POLYGON((2 2, 0 2, 0 0, 2 0, 2 2))",  # the square, from another vertex
    "inner": "POLYGON((0.5 0.5, 1 0.5, 1 1, 0.5 0.5))",
    "beside": "POLYGON((2 0, 3 0, 3 2, 2 2, 2 0))",  # shares an edge
    "across": "POLYGON((1 1, 3 1, 3 3, 1 3, 1 1))",  # overlaps a corner
    "far": "POLYGON((10 10, 11 10, 11 11, 10 10))",
    "centre": "POINT(1 1)",
    "corner": "POINT(2 2)",
    "line": "LINESTRING(-1 1, 3 1)",
}


def wkt(text: str) -> Literal:
    return Literal(text, WKT_LITERAL)


@pytest.fixture(scope="module")
def store() -> Store:
    store = Store()
    store.add([(IRI(EX + name), IRI(EX + "shape"), wkt(text)) for name, text in SHAPES.items()])
    return store


def related(store: Store, function: str) -> set[tuple[str, str]]:
    result = store.query(PREFIXES + f"SELECT ?a ?b WHERE {{ ?a <{EX}shape> ?x . ?b <{EX}shape> ?y "
                         f"FILTER(geof:{function}(?x, ?y)) }}")
    return {(a.value[len(EX):], b.value[len(EX):]) for a, b in result.rows()}


def test_simple_features_relations_between_points_and_polygons(store):
    within = related(store, "sfWithin")
    assert {("inner", "square"), ("centre", "square"), ("square", "same")} <= within
    assert ("corner", "square") not in within  # on the boundary: touches, not within
    assert ("far", "square") not in within
    assert {(b, a) for a, b in related(store, "sfContains")} == within
    assert ("beside", "square") in related(store, "sfTouches")
    assert ("corner", "square") in related(store, "sfTouches")
    assert ("across", "square") in related(store, "sfOverlaps")
    assert ("beside", "square") not in related(store, "sfOverlaps")
    assert ("line", "square") in related(store, "sfCrosses")
    assert ("same", "square") in related(store, "sfEquals") and ("inner", "square") not in related(
        store, "sfEquals")
    intersecting = related(store, "sfIntersects")
    assert ("far", "square") not in intersecting and ("corner", "square") in intersecting
    names = set(SHAPES)
    assert related(store, "sfDisjoint") == {(a, b) for a in names for b in names} - intersecting


def value(store: Store, expression: str):
    result = store.query(PREFIXES + f"SELECT ?v WHERE {{ BIND({expression} AS ?v) }}")
    (row,) = list(result.rows())
    return row[0]


def test_distance_over_crs84_is_great_circle_metres(store):
    # one degree of the equator, and Aarhus's old town hall to its cathedral
    degree = float(value(store, 'geof:distance("POINT(0 0)"^^geo:wktLiteral, '
                                '"POINT(1 0)"^^geo:wktLiteral, uom:metre)').lexical)
    assert degree == pytest.approx(EARTH_RADIUS_M * math.pi / 180, rel=1e-9)
    km = float(value(store, 'geof:distance("POINT(10.2039 56.1572)"^^geo:wktLiteral, '
                            '"POINT(10.2107 56.1567)"^^geo:wktLiteral, uom:kilometre)').lexical)
    assert km == pytest.approx(0.4254, abs=0.002)
    planar = value(store, f'geof:distance("{SQUARE}"^^geo:wktLiteral, "POINT(5 6)"^^geo:wktLiteral, '
                          'uom:degree)')
    assert planar.datatype == XSD + "double" and float(planar.lexical) == pytest.approx(5.0)
    # a polygon's distance is that of its nearest point
    to_square = float(value(store, f'geof:distance("{SQUARE}"^^geo:wktLiteral, '
                                   '"POINT(3 1)"^^geo:wktLiteral, uom:metre)').lexical)
    assert to_square == pytest.approx(EARTH_RADIUS_M * math.pi / 180 * math.cos(math.radians(1)), rel=1e-3)


def test_epsg_4326_literals_are_latitude_first(store):
    swapped = '"<http://www.opengis.net/def/crs/EPSG/0/4326> POINT(56.1572 10.2039)"^^geo:wktLiteral'
    plain = '"<http://www.opengis.net/def/crs/OGC/1.3/CRS84> POINT(10.2039 56.1572)"^^geo:wktLiteral'
    assert value(store, f"geof:sfEquals({swapped}, {plain})").lexical == "true"
    assert float(value(store, f"geof:distance({swapped}, {plain}, uom:metre)").lexical) == 0.0
    assert value(store, f"geof:getSRID({swapped})").lexical == "http://www.opengis.net/def/crs/EPSG/0/4326"


def destination(lon: float, lat: float, bearing: float, metres: float) -> tuple[float, float]:
    """The point ``metres`` away on the sphere along ``bearing`` (degrees)."""
    d, b = metres / EARTH_RADIUS_M, math.radians(bearing)
    p1, l1 = math.radians(lat), math.radians(lon)
    p2 = math.asin(math.sin(p1) * math.cos(d) + math.cos(p1) * math.sin(d) * math.cos(b))
    l2 = l1 + math.atan2(math.sin(b) * math.sin(d) * math.cos(p1), math.cos(d) - math.sin(p1) * math.sin(p2))
    return math.degrees(l2), math.degrees(p2)


def test_a_buffer_in_metres_holds_what_is_nearer_and_not_what_is_farther(store):
    zone = value(store, 'geof:buffer("POINT(10.2039 56.1572)"^^geo:wktLiteral, 1000, uom:metre)')
    assert zone.datatype == WKT_LITERAL and zone.lexical.startswith("POLYGON")
    for bearing in range(0, 360, 15):
        for metres, inside in ((985, "true"), (1015, "false")):
            lon, lat = destination(10.2039, 56.1572, bearing, metres)
            point = f'"POINT({lon} {lat})"^^geo:wktLiteral'
            assert value(store, f'geof:sfWithin({point}, "{zone.lexical}"^^geo:wktLiteral)').lexical == inside


def test_set_operations_keep_the_first_arguments_crs(store):
    across = SHAPES["across"]
    both = value(store, f'geof:intersection("{SQUARE}"^^geo:wktLiteral, "{across}"^^geo:wktLiteral)')
    assert value(store, f'geof:sfEquals("{both.lexical}"^^geo:wktLiteral, '
                        '"POLYGON((1 1, 2 1, 2 2, 1 2, 1 1))"^^geo:wktLiteral)').lexical == "true"
    hull = value(store, f'geof:envelope("{SHAPES["inner"]}"^^geo:wktLiteral)')
    assert value(store, f'geof:sfEquals("{hull.lexical}"^^geo:wktLiteral, '
                        '"POLYGON((0.5 0.5, 1 0.5, 1 1, 0.5 1, 0.5 0.5))"^^geo:wktLiteral)').lexical == "true"


BAD_ARGUMENTS = [
    '"POINT(1"^^geo:wktLiteral',  # malformed
    '"POLYGON((0 0, 1 0))"^^geo:wktLiteral',  # too few points for a ring
    '"POINT(1 1)"',  # not a WKT literal
    '"<http://www.opengis.net/def/crs/EPSG/0/3857> POINT(1 1)"^^geo:wktLiteral',  # unsupported CRS
    '"<http://www.opengis.net/def/crs/EPSG/0/4326 POINT(1 1)"^^geo:wktLiteral',  # unclosed CRS IRI
    "<http://example.org/not-a-literal>",
]


@pytest.mark.parametrize("argument", BAD_ARGUMENTS)
def test_a_bad_argument_is_an_error_not_false(store, argument):
    # an error leaves BIND unbound; false would make the negation true
    assert value(store, f"geof:sfWithin({argument}, \"{SQUARE}\"^^geo:wktLiteral)") is None
    square = f'"{SQUARE}"^^geo:wktLiteral'
    result = store.query(PREFIXES + f"ASK {{ FILTER(!geof:sfWithin({argument}, {square})) }}")
    assert result.boolean is False


def test_an_unsupported_unit_is_an_error(store):
    assert value(store, 'geof:distance("POINT(0 0)"^^geo:wktLiteral, "POINT(1 0)"^^geo:wktLiteral, '
                        "uom:furlong)") is None
    assert value(store, 'geof:buffer("POINT(0 0)"^^geo:wktLiteral, "far", uom:metre)') is None


@pytest.mark.parametrize("call, named", [
    ("geof:sfWithinn(?a, ?b)", "geof:sfWithinn"),
    ("geof:ehInside(?a, ?b)", "geof:ehInside"),
    ("<http://www.opengis.net/def/function/geosparql/nearby>(?a, ?b)", "geof:nearby"),
    ("geof:distance(?a, ?b)", "geof:distance takes 3 arguments, not 2"),
])
def test_an_unknown_geof_function_is_a_syntax_error_naming_it(store, call, named):
    text = PREFIXES + f"SELECT * WHERE {{ ?s ?p ?a . ?t ?q ?b FILTER({call}) }}"
    with pytest.raises(SparqlSyntaxError) as raised:
        store.query(text)
    assert named in raised.value.message
    assert raised.value.column == text.index(call.split("(")[0]) + 1


def test_the_parser_accepts_exactly_the_functions_implemented():
    assert set(GEOSPARQL) == {GEOF + name for name in GEOF_ARITY}


def mutations(rng: random.Random, text: str) -> str:
    """``text`` with a character dropped, doubled or replaced by WKT's punctuation."""
    at = rng.randrange(len(text))
    kind = rng.randrange(3)
    if kind == 0:
        return text[:at] + text[at + 1:]
    if kind == 1:
        return text[:at] + text[at] + text[at:]
    return text[:at] + rng.choice("(), .-0123456789EMPTYZ") + text[at + 1:]


def test_generated_malformed_literals_are_errors_exactly_where_the_wkt_does_not_parse():
    rng = random.Random(29)
    texts = sorted({mutations(rng, rng.choice(list(SHAPES.values()))) for _ in range(400)})
    store = Store()
    store.add([(IRI(f"{EX}g{i}"), IRI(EX + "shape"), wkt(text)) for i, text in enumerate(texts)])
    # true for every geometry (intersects itself or is empty), an error for every bad literal
    result = store.query(PREFIXES + f"SELECT ?s WHERE {{ ?s <{EX}shape> ?g "
                         "FILTER(geof:sfIntersects(?g, ?g) || !geof:sfIntersects(?g, ?g)) }")
    parsed = {row[0].value for row in result.rows()}
    expected = {f"{EX}g{i}" for i, text in enumerate(texts) if not isinstance(parse_wkt(text), str)}
    assert parsed == expected
    assert 0 < len(expected) < len(texts)  # the generator makes both kinds
