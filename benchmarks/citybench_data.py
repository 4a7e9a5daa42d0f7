"""CityBench's data for the benchmarks: its static documents, its queries'
streams and windows, and its Aarhus CSV streams annotated as its Java
annotators do.

CityBench (Ali et al., ISWC 2015; ``../shared/datasets/citybench``) turns
each CSV row into one ``ssn:Observation`` per property the sensor
repository says the stream observes (``ssn:observes``), with
``ssn:observedProperty``, ``sao:hasValue`` and ``ssn:observedBy``
(``DataWrapper`` in CityBench's sources). The value by the property's type:
a parking garage's free places (``totalspaces - vehiclecount``); a traffic
sensor's vehicle count, average speed or measured time; a weather station's
temperature, humidity or wind speed; a pollution sensor's air quality index
(CityBench computes it in ``PollutionObservation``, whose formula is not in
this copy: the largest of the five readings stands for it); a user
location's value is a node with ``ct:hasLatitude`` and ``ct:hasLongitude``.
A stream whose CSV file is not in the dataset copy carries no items (only
heartbeats): CityBench itself would fail to open it.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path

from engine.rdf import IRI, Literal

CITYBENCH = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "citybench"
SES = "http://www.insight-centre.org/dataset/SampleEventService#"
SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
SAO = "http://purl.oclc.org/NET/sao/"
CT = "http://www.insight-centre.org/citytraffic#"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
#: the static documents, under the IRIs the queries read them with FROM
STATIC = {
    "SensorRepository.n3": "http://127.0.0.1:9000/WebGlCity/RDF/SensorRepository.rdf",
    "AarhusCulturalEvents.n3": "http://127.0.0.1:9000/WebGlCity/RDF/AarhusCulturalEvents.rdf",
    "AarhusLibraryEvents.n3": "http://127.0.0.1:9000/WebGlCity/RDF/AarhusLibraryEvents.rdf",
}
#: the CSV column that gives each observed property's value (by the property's type)
VALUE_COLUMNS = {"CongestionLevel": "vehicleCount", "VehicleCount": "vehicleCount",
                 "AvgSpeed": "avgSpeed", "EstimatedTime": "avgMeasuredTime",
                 "MeasureTime": "medianMeasuredTime",
                 "Temperature": "tempm", "Humidity": "hum", "WindSpeed": "wspdm"}
POLLUTANTS = ("ozone", "particullate_matter", "carbon_monoxide", "sulfure_dioxide", "nitrogen_dioxide")
#: the feature CityBench's location annotator gives every user location (a fixed one)
LOCATION_FOI = IRI("http://iot.ee.surrey.ac.uk/citypulse/datasets/aarhusculturalevents/"
                   "culturalEvents_aarhus#context_do63jk2t8c3bjkfb119ojgkhs7")

_WINDOW = re.compile(r"from\s+stream\s+<([^>]+)>\s*\[\s*range\s+(\d+)\s*(ms|s)\s+step\s+(\d+)\s*(ms|s)\s*\]",
                     re.IGNORECASE)
_FROM = re.compile(r"from\s+(?:stream\s+)?<[^>]+>(?:\s*\[[^\]]*\])?", re.IGNORECASE)


def citybench_store():
    """A store with CityBench's static documents under the IRIs the queries name."""
    from engine.api import Store

    store = Store()
    for document, graph in STATIC.items():
        store.load(CITYBENCH / "dataset" / document, format="turtle", graph=graph)
    return store


def query_streams(text: str) -> list[str]:
    """The stream IRIs a CityBench query reads, in order."""
    return [stream for stream, *_ in _WINDOW.findall(text)]


def query_windows(text: str) -> list[tuple[str, int, int]]:
    """``(stream IRI, RANGE ms, STEP ms)`` of each window of a query, in order."""
    def ms(amount: str, unit: str) -> int:
        return int(amount) * (1000 if unit.lower() == "s" else 1)

    return [(stream, ms(r, ru), ms(s, su)) for stream, r, ru, s, su in _WINDOW.findall(text)]


def query_graphs(text: str) -> list[str]:
    """The static graphs a query names with ``FROM <...>`` (not ``FROM STREAM``)."""
    return re.findall(r"from\s+<([^>]+)>", text, re.IGNORECASE)


def without_from(text: str) -> str:
    """The query with its ``FROM`` and ``FROM STREAM`` clauses dropped: plain
    SPARQL over whatever default graph the caller gives it."""
    return _FROM.sub(" ", text)


def local_name(stream: str) -> str:
    return stream.rsplit("#", 1)[1]


def stream_file(stream: str) -> Path:
    return CITYBENCH / "streams" / f"{local_name(stream)}.stream"


def _number(text: str) -> Literal:
    """A CSV reading as an xsd:integer when it is one, else an xsd:double."""
    return Literal(text, XSD + ("integer" if re.fullmatch(r"-?\d+", text) else "double"))


class CityFeed:
    """CityBench's streams annotated from their CSV rows, one row per stream
    every ``row_ms`` of application time (streams offset from each other)."""

    def __init__(self, store, streams: Sequence[str], row_ms: int) -> None:
        self.row_ms = row_ms
        self.next_ts = {s: 1 + 97 * i for i, s in enumerate(streams)}
        self.rows = {s: self._read(s) for s in streams}
        self.taken = dict.fromkeys(streams, 0)
        self.properties = {s: self._observed(store, s) for s in streams}

    @staticmethod
    def _read(stream: str) -> list[dict]:
        path = stream_file(stream)
        if not path.exists():
            return []
        if local_name(stream) == "UserLocationService":  # user|lat,lon lines, no header
            return [dict(zip(("user", "latitude", "longitude"), re.split(r"[|,]", line), strict=True))
                    for line in path.read_text().splitlines() if line]
        with path.open() as f:
            return list(csv.DictReader(f))

    @staticmethod
    def _observed(store, stream: str) -> list[tuple[IRI, str]]:
        result = store.query(f"SELECT ?p ?t WHERE {{ GRAPH <{STATIC['SensorRepository.n3']}> "
                             f"{{ <{stream}> <{SSN}observes> ?p . ?p a ?t }} }}")
        return [(p, t.value.rsplit("#", 1)[1]) for p, t in result.rows()]

    def missing(self) -> list[str]:
        """The streams whose CSV file is absent (they carry no items)."""
        return [s for s, rows in self.rows.items() if not rows]

    @staticmethod
    def _value(row: dict, kind: str) -> Literal:
        if kind == "ParkingVacancy":
            return Literal(str(int(row["totalspaces"]) - int(row["vehiclecount"])), XSD + "integer")
        if kind == "API":
            return Literal(str(max(int(row[p]) for p in POLLUTANTS)), XSD + "integer")
        return _number(row[VALUE_COLUMNS[kind]])

    def _observations(self, stream: str, number: int, row: dict) -> list[tuple]:
        name = local_name(stream)
        triples = []
        for k, (prop, kind) in enumerate(self.properties[stream]):
            ob = IRI(f"{SES}Observation-{name}-{number}-{k}")
            triples += [(ob, RDF_TYPE, IRI(SSN + "Observation")),
                        (ob, IRI(SSN + "observedProperty"), prop),
                        (ob, IRI(SSN + "observedBy"), IRI(stream))]
            if kind == "Location":
                place = IRI(f"{SES}Location-{name}-{number}")
                triples += [(ob, IRI(SAO + "hasValue"), place),
                            (ob, IRI(SSN + "featureOfInterest"), LOCATION_FOI),
                            (place, IRI(CT + "hasLatitude"), Literal(row["latitude"], XSD + "double")),
                            (place, IRI(CT + "hasLongitude"), Literal(row["longitude"], XSD + "double"))]
            else:
                triples.append((ob, IRI(SAO + "hasValue"), self._value(row, kind)))
        return triples

    def __call__(self, until: int) -> dict[str, list]:
        """Each stream's items ``(timestamp, triples)`` before ``until`` not yet given."""
        out: dict[str, list] = {}
        for stream, ts in self.next_ts.items():
            items = out.setdefault(stream, [])
            rows = self.rows[stream]
            while rows and ts < until:
                number = self.taken[stream]
                items.append((ts, self._observations(stream, number, rows[number % len(rows)])))
                self.taken[stream] += 1
                ts += self.row_ms
            self.next_ts[stream] = max(ts, until) if not rows else ts
        return out
