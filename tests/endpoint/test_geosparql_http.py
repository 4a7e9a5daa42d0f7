"""GeoSPARQL over a real server: a spatial query answers as Oxigraph's and
Fuseki's users expect, an unknown geof: function is a 400 naming it (with
its line and column) and changes nothing, also in an update and a
registration."""

from __future__ import annotations

import httpx

from engine.api import Store
from engine.rdf import IRI, WKT_LITERAL, Literal

EX = "http://example.org/"
PREFIXES = ("PREFIX geo: <http://www.opengis.net/ont/geosparql#>\n"
            "PREFIX geof: <http://www.opengis.net/def/function/geosparql/>\n"
            "PREFIX uom: <http://www.opengis.net/def/uom/OGC/1.0/>\n")
#: Aarhus: the cathedral, the old town hall (425 m away) and Moesgaard (6.5 km)
PLACES = {"cathedral": (10.2107, 56.1567), "town-hall": (10.2039, 56.1572), "moesgaard": (10.2256, 56.0882)}


def store() -> Store:
    store = Store()
    store.add([(IRI(EX + name), IRI("http://www.opengis.net/ont/geosparql#asWKT"),
                Literal(f"POINT({lon} {lat})", WKT_LITERAL)) for name, (lon, lat) in PLACES.items()])
    return store


def test_places_within_a_kilometre(serve):
    url = serve(store())
    query = PREFIXES + (f"SELECT ?near WHERE {{ <{EX}cathedral> geo:asWKT ?here . ?near geo:asWKT ?there "
                        "FILTER(?near != <http://example.org/cathedral> && "
                        "geof:distance(?here, ?there, uom:metre) < 1000) }")
    answer = httpx.get(f"{url}/sparql", params={"query": query},
                       headers={"Accept": "application/sparql-results+json"})
    assert answer.status_code == 200, answer.text
    assert [b["near"]["value"] for b in answer.json()["results"]["bindings"]] == [EX + "town-hall"]


def test_an_unknown_geof_function_is_a_400_naming_it(serve):
    url = serve(store())
    query = PREFIXES + ("SELECT * WHERE { ?a geo:asWKT ?x . ?b geo:asWKT ?y\n"
                        "  FILTER(geof:sfWithinn(?x, ?y)) }")
    answer = httpx.post(f"{url}/sparql", data={"query": query})
    assert answer.status_code == 400
    assert "geof:sfWithinn" in answer.text and "line 5, column 10" in answer.text, answer.text
    update = PREFIXES + (f"INSERT {{ <{EX}a> <{EX}near> ?b }} WHERE {{ ?b geo:asWKT ?y "
                         "FILTER(geof:nearby(?y)) }")
    answer = httpx.post(f"{url}/sparql", data={"update": update})
    assert answer.status_code == 400 and "geof:nearby" in answer.text
    count = httpx.get(f"{url}/sparql", params={"query": "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"},
                      headers={"Accept": "application/sparql-results+json"})
    assert count.json()["results"]["bindings"][0]["n"]["value"] == "3"  # the update changed nothing
    assert httpx.put(f"{url}/streams/s", json={"iri": f"{EX}s"}).status_code == 201
    registration = PREFIXES + (f"REGISTER QUERY q AS SELECT ?b FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                               "WHERE { ?b geo:asWKT ?y FILTER(geof:ehInside(?y, ?y)) }")
    answer = httpx.post(f"{url}/queries", content=registration,
                        headers={"Content-Type": "application/sparql-query"})
    assert answer.status_code == 400 and "geof:ehInside" in answer.text
    assert httpx.get(f"{url}/queries").json()["queries"] == []
