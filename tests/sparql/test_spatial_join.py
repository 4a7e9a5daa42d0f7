"""A spatial FILTER over two unrelated sides goes through the R-tree
(engine/sparql/exec/spatial_join.py) and answers what comparing every pair
answers: on generated points and polygons (clusters at the antimeridian, by
a pole, on the equator), in each shape the planner recognises, and on
CityBench's sensors: a window of traffic readings joined with the sensor
repository's places within 1 km."""

from __future__ import annotations

import csv
import math
import random
from collections import Counter

import pytest

from engine.api import Store
from engine.rdf import IRI, WKT_LITERAL, Literal
from engine.sparql.exec.spatial_join import COUNTS
from engine.sparql.expr.geometry import EARTH_RADIUS_M
from engine.stream import StreamDefinition, StreamEngine
from tests.harness import citybench

EX = "http://example.org/"
PREFIXES = ("PREFIX geo: <http://www.opengis.net/ont/geosparql#> "
            "PREFIX geof: <http://www.opengis.net/def/function/geosparql/> "
            "PREFIX uom: <http://www.opengis.net/def/uom/OGC/1.0/> "
            f"PREFIX ex: <{EX}> ")
#: where the generated points gather: (longitude, latitude, spread in degrees)
CLUSTERS = ((179.997, 10.0, 0.004), (-179.997, 10.0, 0.004), (0.0, 89.99, 0.03), (30.0, 0.0, 0.2),
            (10.2, 56.15, 0.2), (-70.0, -45.0, 0.3))
READINGS, PLACES_MADE = 200, 60


def chord_metres(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """The great-circle distance another way than the engine: from the chord
    between the two points as unit vectors."""
    def unit(lon, lat):
        lon, lat = math.radians(lon), math.radians(lat)
        return math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat)

    chord = math.dist(unit(lon1, lat1), unit(lon2, lat2))
    return 2 * EARTH_RADIUS_M * math.asin(min(chord / 2, 1.0))


def point(lon: float, lat: float) -> Literal:
    return Literal(f"POINT({lon!r} {lat!r})", WKT_LITERAL)


def generated_store(rng: random.Random) -> tuple[Store, dict[str, tuple[float, float]], dict]:
    """Places (``ex:shape``: points, every tenth a square), then readings
    (``ex:at``), every tenth exactly at a place's point."""
    readings, places, triples = {}, {}, []
    for n in range(PLACES_MADE):
        lon0, lat0, spread = rng.choice(CLUSTERS)
        lon = max(-180.0, min(180.0, lon0 + rng.uniform(-spread, spread)))
        lat = max(-90.0, min(90.0, lat0 + rng.uniform(-spread, spread)))
        if n % 10:
            places[f"p{n}"] = (lon, lat)
            shape = point(lon, lat)
        else:
            side = rng.uniform(0.01, 0.05)
            lon, lat = min(lon, 180 - side), min(lat, 90 - side)  # inside longitude/latitude ranges
            shape = Literal(f"POLYGON(({lon} {lat}, {lon + side} {lat}, {lon + side} {lat + side}, "
                            f"{lon} {lat + side}, {lon} {lat}))", WKT_LITERAL)
        triples.append((IRI(f"{EX}p{n}"), IRI(EX + "shape"), shape))
    triples.append((IRI(EX + "broken"), IRI(EX + "shape"), Literal("POINT(1", WKT_LITERAL)))
    for n in range(READINGS):
        if n % 10 == 0:
            lon, lat = rng.choice(list(places.values()))
        else:
            lon0, lat0, spread = rng.choice(CLUSTERS)
            lon = max(-180.0, min(180.0, lon0 + rng.uniform(-spread, spread)))
            lat = max(-90.0, min(90.0, lat0 + rng.uniform(-spread, spread)))
        readings[f"r{n}"] = (lon, lat)
        triples.append((IRI(f"{EX}r{n}"), IRI(EX + "at"), point(lon, lat)))
    store = Store()
    store.add(triples)
    return store, readings, places


def answer(store: Store, where: str) -> Counter:
    result = store.query(PREFIXES + f"SELECT ?r ?p WHERE {{ {where} }}")
    return Counter((r.value, p.value) for r, p in result.rows())


#: FILTERs the planner recognises, each with ?a (a reading) and ?b (a place)
CONDITIONS = [
    "geof:distance(?a, ?b, uom:metre) < 1000",
    "2.5 >= geof:distance(?b, ?a, uom:kilometre)",
    "geof:sfWithin(?a, geof:buffer(?b, 1500, uom:metre))",
    "geof:distance(?a, ?b, uom:degree) <= 0.01",
    "geof:sfIntersects(?a, ?b) && ?r != ex:r0",
    "geof:distance(?a, ?b, uom:metre) < 800 && geof:distance(?a, ?b, uom:metre) > 100",
]
#: the two sides as one BGP, and as two groups (a Join)
PATTERNS = ["?r ex:at ?a . ?p ex:shape ?b .", "{ ?p ex:shape ?b } { ?r ex:at ?a }"]


@pytest.fixture(scope="module")
def generated():
    return generated_store(random.Random(2929))


@pytest.mark.parametrize("condition", CONDITIONS)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_indexed_join_answers_what_every_pair_answers(generated, pattern, condition):
    store = generated[0]
    before = (COUNTS.joins, COUNTS.candidate_pairs, COUNTS.all_pairs)
    indexed = answer(store, f"{pattern} FILTER({condition})")
    joins, candidates, pairs = (now - then for now, then in zip(
        (COUNTS.joins, COUNTS.candidate_pairs, COUNTS.all_pairs), before))
    assert joins == 1 and pairs == READINGS * (PLACES_MADE + 1) and candidates < pairs / 4
    # IF(true, c, false) is c, in a shape the planner does not recognise: every pair compared
    pairwise = answer(store, f"{pattern} FILTER(IF(true, {condition}, false))")
    assert COUNTS.joins == before[0] + 1
    assert indexed == pairwise and sum(indexed.values()) > 0


def test_the_pairwise_answer_is_the_great_circle_one(generated):
    store, readings, places = generated
    found = answer(store, "?r ex:at ?a . ?p ex:shape ?b FILTER(geof:distance(?a, ?b, uom:metre) < 1000)")
    expected = {(EX + r, EX + p) for r, (x1, y1) in readings.items() for p, (x2, y2) in places.items()
                if chord_metres(x1, y1, x2, y2) < 1000}
    found_points = {pair for pair in found if pair[1][len(EX):] in places}
    assert found_points == expected
    # across the antimeridian and at the pole, neighbours far apart in longitude are found
    assert any(abs(readings[r[len(EX):]][0] - places[p[len(EX):]][0]) > 300 for r, p in expected)
    assert any(readings[r[len(EX):]][1] > 89.9 for r, _ in expected)


def test_sides_that_share_a_variable_are_joined_as_before():
    store = Store()
    store.add([(IRI(EX + "a"), IRI(EX + "at"), point(1.0, 1.0)),
               (IRI(EX + "a"), IRI(EX + "near"), point(1.0, 1.0))])
    before = COUNTS.joins
    found = answer(store, "?r ex:at ?a . ?r ex:near ?b . BIND(?r AS ?p) "
                          "FILTER(geof:distance(?a, ?b, uom:metre) < 1)")
    assert sum(found.values()) == 1 and COUNTS.joins == before


# ---------------------------------------------------------------- CityBench

PLACES = "http://example.org/places"
TRAFFIC = citybench.TRAFFIC
REPOSITORY_FILE = citybench.ROOT / "dataset" / "SensorRepository.n3"
META_FILE = citybench.ROOT / "dataset" / "MetaData" / "trafficMetaData.csv"
NEAR = "geof:distance(?at, ?where, uom:metre) < 1000"


def traffic_sensors() -> list[tuple[str, float, float]]:
    """(report ID, longitude, latitude) of each of Aarhus's traffic sensors."""
    with META_FILE.open(newline="") as f:
        return [(row["REPORT_ID"], float(row["POINT_1_LNG"]), float(row["POINT_1_LAT"]))
                for row in csv.DictReader(f)]


def readings(rng: random.Random, until_ms: int) -> list[tuple[int, list]]:
    """A traffic reading every 20-80 ms, by a sensor drawn at random, at its place."""
    sensors = traffic_sensors()
    with (citybench.ROOT / "streams" / "AarhusTrafficData158505.stream").open(newline="") as f:
        counts = [row[6] for row in csv.reader(f)][1:]
    items, ts, n = [], 0, 0
    while ts < until_ms:
        report, lon, lat = rng.choice(sensors)
        reading = IRI(f"{TRAFFIC}-reading-{n}")
        items.append((ts, [(reading, IRI(citybench.SSN + "observedBy"), IRI(f"{EX}sensor/{report}")),
                           (reading, IRI(citybench.SAO + "hasValue"), Literal(counts[n % len(counts)],
                                                                              citybench.XSD + "integer")),
                           (reading, IRI(EX + "at"), point(lon, lat))]))
        ts += rng.randrange(20, 80)
        n += 1
    return items


def registration(name: str, condition: str) -> str:
    return (f"REGISTER QUERY {name} AS {PREFIXES} SELECT ?reading ?place "
            f"FROM STREAM <{TRAFFIC}> [RANGE 2s STEP 1s] FROM <{PLACES}> "
            f"WHERE {{ ?reading ex:at ?at . ?place geo:asWKT ?where FILTER({condition}) }}")


@pytest.mark.skipif(not (REPOSITORY_FILE.exists() and META_FILE.exists()),
                    reason="CityBench's sensor repository is not in ../shared/datasets")
def test_citybench_readings_within_a_kilometre_of_a_stored_place():
    store = Store()
    store.load(REPOSITORY_FILE, format="turtle", graph=citybench.REPOSITORY)
    # the repository's features of interest as GeoSPARQL points
    store.update(PREFIXES + "PREFIX ct: <http://www.insight-centre.org/citytraffic#> "
                 f"INSERT {{ GRAPH <{PLACES}> {{ ?f geo:asWKT ?w }} }} "
                 f"WHERE {{ GRAPH <{citybench.REPOSITORY}> "
                 "{ ?f ct:hasStartLatitude ?lat ; ct:hasStartLongitude ?lon } "
                 'BIND(STRDT(CONCAT("POINT(", STR(?lon), " ", STR(?lat), ")"), geo:wktLiteral) AS ?w) }')
    places = store.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{PLACES}> {{ ?f ?p ?w }} }}")
    assert int(next(places.rows())[0].lexical) > 800
    engine = StreamEngine(store, incremental="never")
    try:
        engine.declare_stream(StreamDefinition("traffic", IRI(TRAFFIC)))
        indexed = engine.register(registration("near", NEAR)).subscribe()
        pairwise = engine.register(registration("pairwise", f"IF(true, {NEAR}, false)")).subscribe()
        before = (COUNTS.joins, COUNTS.candidate_pairs, COUNTS.all_pairs)
        items = readings(random.Random(7), 6_000)
        for item in items:
            engine.ingest("traffic", [item])
        engine.heartbeat("traffic", 6_000)
        near, every = indexed.drain(), pairwise.drain()
    finally:
        engine.close()
    assert [e.end_ms for e in near] == [e.end_ms for e in every] == list(range(1_000, 6_001, 1_000))
    for a, b in zip(near, every):
        assert a.error is None and b.error is None
        assert Counter(a.rows) == Counter(b.rows)
    assert sum(len(e.rows) for e in near) > 100
    joins, candidates, pairs = (now - then for now, then in zip(
        (COUNTS.joins, COUNTS.candidate_pairs, COUNTS.all_pairs), before))
    assert joins == len(near) and candidates < pairs / 20
    # every answer is a reading within 1 km of its place, on the sphere
    at = {reading: triples[2][2] for _, triples in items for reading in [triples[0][0]]}
    where = dict(store.query(f"SELECT ?f ?w WHERE {{ GRAPH <{PLACES}> {{ ?f ?p ?w }} }}").rows())
    for event in near:
        for reading, place in event.rows:
            (x1, y1), (x2, y2) = (lon_lat(at[reading]), lon_lat(where[place]))
            assert chord_metres(x1, y1, x2, y2) < 1000


def lon_lat(literal: Literal) -> tuple[float, float]:
    x, y = literal.lexical.strip()[len("POINT("):-1].split()
    return float(x), float(y)
