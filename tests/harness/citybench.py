"""CityBench (../shared/datasets/citybench) for the tests: its C-SPARQL queries
whose windows have different STEPs, and data in its shape.

CityBench's queries join sensor observations of several streams with its
sensor repository (``FROM <.../SensorRepository.rdf>``). This repository has
no driver that annotates CityBench's CSV streams as its Java annotators do,
so the observations are generated in their shape (an observation is typed,
names the property it observes, its value and the stream that observed it;
a user location's value is a node with a latitude and a longitude), with
values read from the real CSV files, and a small sensor repository holds the
properties and features the queries join with.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from benchmarks.citybench_data import CT, SAO, SES, SSN, XSD
from engine.rdf import IRI, Literal

ROOT = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "citybench"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
#: the stored graph the queries name with FROM
REPOSITORY = "http://127.0.0.1:9000/WebGlCity/SensorRepository.rdf"
PARKING = SES + "AarhusParkingDataKALKVAERKSVEJ"
LOCATION = SES + "UserLocationService"
TRAFFIC = SES + "AarhusTrafficData158505"
STREAMS = (PARKING, LOCATION, TRAFFIC)
#: the queries that read a [RANGE 20s STEP 10s] window beside a [RANGE 3000ms STEP 1500ms] one
TWO_STEP_QUERIES = ("location_parking_1", "traffic_parking_1")

_WINDOW = re.compile(r"from\s+stream\s+<([^>]+)>\s*\[\s*range\s+(\d+)\s*(ms|s)\s+step\s+(\d+)\s*(ms|s)\s*\]",
                     re.IGNORECASE)


def available() -> bool:
    return all((ROOT / "csparql_query" / f"{name}.txt").exists() for name in TWO_STEP_QUERIES) and all(
        (ROOT / "streams" / f"{stream.rsplit('#', 1)[1]}.stream").exists() for stream in STREAMS)


def query_text(name: str) -> str:
    return (ROOT / "csparql_query" / f"{name}.txt").read_text()


def registration(name: str) -> str:
    """The query as CityBench wrote it, registered under its file's name."""
    return f"REGISTER QUERY {name} AS {query_text(name)}"


def windows(name: str) -> list[tuple[str, int, int]]:
    """``(stream IRI, RANGE ms, STEP ms)`` of each window, in the query's order."""
    def ms(amount: str, unit: str) -> int:
        return int(amount) * (1000 if unit.lower() == "s" else 1)

    return [(stream, ms(r, ru), ms(s, su)) for stream, r, ru, s, su in _WINDOW.findall(query_text(name))]


def select_where(name: str) -> str:
    """The query as a plain SELECT over one graph (its stream and FROM clauses dropped)."""
    text = query_text(name)
    select = re.match(r"\s*(select[^\n]*)", text, re.IGNORECASE).group(1)
    where = re.search(r"\bwhere\b", text, re.IGNORECASE).start()
    return f"{select} {text[where:]}"


def _iri(value: str) -> IRI:
    return IRI(value)


def sensor_repository() -> list[tuple]:
    """The part of the sensor repository the queries join with: two parking
    vacancy properties with their features, two congestion properties, two
    road features with a start latitude and longitude."""
    triples = []
    for k in (1, 2):
        parking, road = _iri(f"{SES}parkingproperty-{k}"), _iri(f"{SES}road-{k}")
        triples += [(parking, _iri(RDF_TYPE), _iri(CT + "ParkingVacancy")),
                    (parking, _iri(SSN + "isPropertyOf"), _iri(f"{SES}parking-foi-{k}")),
                    (_iri(f"{SES}congestionproperty-{k}"), _iri(RDF_TYPE), _iri(CT + "CongestionLevel")),
                    (road, _iri(CT + "hasStartLatitude"), Literal(f"56.1{k}", XSD + "double")),
                    (road, _iri(CT + "hasStartLongitude"), Literal(f"10.2{k}", XSD + "double"))]
    return triples


def _csv_values(stream: str, column: int, count: int) -> list[str]:
    """The first ``count`` values of a column of a stream's CSV (after its header)."""
    lines = (ROOT / "streams" / f"{stream.rsplit('#', 1)[1]}.stream").read_text().splitlines()
    return [re.split(r"[,|]", line)[column] for line in lines[1:count + 1]]


def _observation(stream: str, number: int, prop: str, value) -> list[tuple]:
    ob = _iri(f"{stream}-observation-{number}")
    return [(ob, _iri(RDF_TYPE), _iri(SSN + "Observation")), (ob, _iri(SSN + "observedProperty"), _iri(prop)),
            (ob, _iri(SAO + "hasValue"), value), (ob, _iri(SSN + "observedBy"), _iri(stream))]


def observations(rng: random.Random, until_ms: int) -> list[tuple[str, list]]:
    """Posts ``(stream IRI, items)`` in time order up to ``until_ms``, then a
    heartbeat there on every stream: a parking observation every 2-6 s, a
    user location and a traffic observation every 0.3-1.2 s each."""
    vehicles = _csv_values(PARKING, 0, 200)
    speeds = _csv_values(TRAFFIC, 2, 400)
    places = list(zip(_csv_values(LOCATION, 1, 280), _csv_values(LOCATION, 2, 280), strict=True))
    timeline = []
    for stream, gap in ((PARKING, (2_000, 6_000)), (LOCATION, (300, 1_200)), (TRAFFIC, (300, 1_200))):
        ts, number = rng.randrange(*gap), 0
        while ts < until_ms:
            if stream == PARKING:
                triples = _observation(stream, number, f"{SES}parkingproperty-{rng.randint(1, 2)}",
                                       Literal(vehicles[number % len(vehicles)], XSD + "integer"))
            elif stream == TRAFFIC:
                triples = _observation(stream, number, f"{SES}congestionproperty-{rng.randint(1, 2)}",
                                       Literal(speeds[number % len(speeds)], XSD + "integer"))
            else:
                value = _iri(f"{stream}-location-{number}")
                latitude, longitude = places[number % len(places)]
                triples = _observation(stream, number, f"{SES}location-property", value) + [
                    (value, _iri(CT + "hasLatitude"), Literal(latitude, XSD + "double")),
                    (value, _iri(CT + "hasLongtitude"), Literal(longitude, XSD + "double"))]
            timeline.append((ts, stream, triples))
            ts += rng.randrange(*gap)
            number += 1
    timeline.sort(key=lambda entry: entry[0])
    posts = [(stream, [(ts, triples)]) for ts, stream, triples in timeline]
    return posts + [(stream, [(until_ms, [])]) for stream in STREAMS]
