"""Graph answers over HTTP in every syntax: streamed, written with the
query's own prefixes, and the same graph as the N-Triples answer."""

from __future__ import annotations

import httpx
import pyoxigraph
import pytest

from engine.api import Store
from engine.rdf import IRI, XSD_DOUBLE, XSD_INTEGER, Literal, from_oxigraph

EX = "http://example.org/rivers/"
PREFIXED = f"PREFIX ex: <{EX}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
ALL = PREFIXED + "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"

SYNTAXES = {
    "text/turtle": pyoxigraph.RdfFormat.TURTLE,
    "application/n-triples": pyoxigraph.RdfFormat.N_TRIPLES,
    "application/ld+json": pyoxigraph.RdfFormat.JSON_LD,
    "application/rdf+xml": pyoxigraph.RdfFormat.RDF_XML,
}


def graph_of(response: httpx.Response) -> set:
    media = response.headers["content-type"].split(";")[0]
    return {(from_oxigraph(s), from_oxigraph(p), from_oxigraph(o))
            for s, p, o, _ in pyoxigraph.parse(response.content, SYNTAXES[media])}


def get(url: str, query: str, accept: str) -> httpx.Response:
    response = httpx.get(url + "/sparql", params={"query": query}, headers={"Accept": accept}, timeout=60)
    assert response.status_code == 200, response.text
    return response


def test_construct_uses_the_query_prefixes_in_every_syntax(demo):
    expected = graph_of(get(demo, ALL, "application/n-triples"))
    assert len(expected) > 20
    turtle = get(demo, ALL, "text/turtle")
    assert f"@prefix ex: <{EX}> ." in turtle.text and "\nex:Danube " in turtle.text
    assert "ns1:" not in turtle.text and "ex:flowsInto" in turtle.text
    jsonld = get(demo, ALL, "application/ld+json")
    assert f'"ex": "{EX}"' in jsonld.text and '"@id": "ex:Danube"' in jsonld.text
    rdfxml = get(demo, ALL, "application/rdf+xml")
    assert f'xmlns:ex="{EX}"' in rdfxml.text and "<ex:flowsInto " in rdfxml.text
    for response in (turtle, jsonld, rdfxml):
        assert graph_of(response) == expected


def test_describe_uses_the_query_prefixes(demo):
    query = f"PREFIX ex: <{EX}>\nDESCRIBE ex:Rhine"
    turtle = get(demo, query, "text/turtle")
    assert f"@prefix ex: <{EX}> ." in turtle.text and "ex:Rhine " in turtle.text
    assert graph_of(turtle) == graph_of(get(demo, query, "application/n-triples"))


def test_a_query_without_prefixes_writes_full_iris(demo):
    query = f"CONSTRUCT {{ ?r <{EX}flowsInto> <{EX}Danube> }} WHERE {{ ?r <{EX}flowsInto> <{EX}Danube> }}"
    turtle = get(demo, query, "text/turtle")
    assert "@prefix" not in turtle.text and f"<{EX}Danube>" in turtle.text


def test_a_large_construct_is_streamed_in_every_syntax(serve):
    """Chunked, not built whole: more triples than several writer chunks."""
    store = Store()
    store.add([(IRI(f"{EX}r{i}"), IRI(f"{EX}n"), Literal(str(i), XSD_INTEGER)) for i in range(10_000)])
    url = serve(store)
    for accept in SYNTAXES:
        response = get(url, ALL, accept)
        assert response.headers.get("transfer-encoding") == "chunked"
        assert "content-length" not in response.headers
        assert len(graph_of(response)) == 10_000


def test_graph_store_get_uses_the_standard_prefixes(serve):
    store = Store()
    store.add([(IRI(f"{EX}Rhine"), IRI(f"{EX}lengthKm"), Literal("1230", XSD_INTEGER)),
               (IRI(f"{EX}Rhine"), IRI(f"{EX}length"), Literal("1230.5", XSD_DOUBLE))])
    url = serve(store)
    turtle = httpx.get(url + "/store?default", headers={"Accept": "text/turtle"})
    assert turtle.status_code == 200
    assert "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> ." in turtle.text
    assert '"1230.5"^^xsd:double' in turtle.text and " 1230 " in turtle.text
    ntriples = httpx.get(url + "/store?default", headers={"Accept": "application/n-triples"})
    assert graph_of(turtle) == graph_of(ntriples) and len(graph_of(turtle)) == 2


@pytest.mark.parametrize("predicate", [f"{EX}ends/", "http://www.w3.org/1999/02/22-rdf-syntax-ns#li"])
def test_rdf_xml_refuses_a_predicate_it_cannot_write_before_answering(serve, predicate):
    store = Store()
    store.add([(IRI(f"{EX}s"), IRI(predicate), Literal("x"))])
    url = serve(store)
    response = httpx.get(url + "/sparql", params={"query": ALL}, headers={"Accept": "application/rdf+xml"})
    assert response.status_code == 406 and predicate in response.text
    assert get(url, ALL, "text/turtle").status_code == 200
