"""SPARQLWrapper 2.0 against a real server holding the demo dataset, used as
its documentation shows: every result format it asks for, updates, HTTP Basic
credentials, and a registration sent the way it sends queries.

SPARQLWrapper sends the format three times over (``format``, ``output``,
``results``), twice each for TSV, JSON-LD and RDF/XML (the name and the media
type), besides an ``Accept`` header; a failure message shows the requests."""

from __future__ import annotations

import csv
import io
from xml.dom.minidom import Document

import pytest
import rdflib
from rdflib.compare import isomorphic
from SPARQLWrapper import (
    CSV,
    JSON,
    JSONLD,
    N3,
    POST,
    RDFXML,
    TSV,
    TURTLE,
    XML,
    SPARQLWrapper,
)
from SPARQLWrapper.SPARQLExceptions import QueryBadFormed, Unauthorized

from tests.clients.demo_queries import (
    EX,
    INTO_RHINE,
    INTO_RHINE_TRIPLES,
    ISAR,
    LONGEST,
    RDFS_LABEL,
    TOP3,
    XSD_INT,
)

#: SPARQLWrapper parses JSON-LD and RDF/XML into rdflib's ConjunctiveGraph, which rdflib deprecates
pytestmark = pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")





def expected_graph() -> rdflib.Graph:
    return rdflib.Graph().parse(data=INTO_RHINE_TRIPLES, format="nt")


def wrapper(endpoint: str, query: str, return_format: str) -> SPARQLWrapper:
    sparql = SPARQLWrapper(endpoint)
    sparql.setQuery(query)
    sparql.setReturnFormat(return_format)
    return sparql


@pytest.fixture
def server(recorded):
    return recorded()


def test_select_as_json(server):
    result = wrapper(server.sparql, LONGEST, JSON).queryAndConvert()
    rows = [(b["river"]["value"], b["km"]["value"]) for b in result["results"]["bindings"]]
    assert rows == TOP3, server.show()
    assert result["results"]["bindings"][0]["km"]["datatype"] == XSD_INT


def test_select_as_xml(server):
    document = wrapper(server.sparql, LONGEST, XML).queryAndConvert()
    assert isinstance(document, Document), server.show()
    uris = [node.firstChild.data for node in document.getElementsByTagName("uri")]
    assert uris == [river for river, _ in TOP3]


@pytest.mark.parametrize("return_format", [CSV, TSV])
def test_select_as_csv_and_tsv(server, return_format):
    query = wrapper(server.sparql, LONGEST, return_format).query()
    body = query.convert()
    assert query.response.status == 200, server.show()
    if return_format == CSV:
        table = list(csv.reader(io.StringIO(body.decode())))
        assert table == [["river", "km"], *[list(row) for row in TOP3]]
    else:  # TSV writes RDF terms as Turtle does
        table = [line.split("\t") for line in body.decode().splitlines()]
        assert table[0] == ["?river", "?km"]
        assert [(river, rdflib.util.from_n3(km).toPython()) for river, km in table[1:]] == [
            (f"<{river}>", int(km)) for river, km in TOP3]


@pytest.mark.parametrize("return_format", [JSON, XML])
def test_ask(server, return_format):
    sparql = wrapper(server.sparql, f"ASK {{ <{EX}Inn> <{EX}flowsInto> <{EX}Danube> }}", return_format)
    result = sparql.queryAndConvert()
    if return_format == JSON:
        assert result["boolean"] is True, server.show()
    else:
        assert result.getElementsByTagName("boolean")[0].firstChild.data == "true", server.show()


@pytest.mark.parametrize("return_format", [TURTLE, N3])
def test_construct_as_turtle_and_n3(server, return_format):
    query = wrapper(server.sparql, INTO_RHINE, return_format).query()
    assert query.response.status == 200, server.show()
    # Turtle, which is N3 too: labelled either way
    assert query.info()["content-type"].split(";")[0] in ("text/turtle", "text/n3"), server.show()
    turtle = query.convert().decode()
    assert isomorphic(rdflib.Graph().parse(data=turtle, format="turtle"), expected_graph())
    # written with the query's own prefixes, not invented ones
    assert "@prefix ex: <http://example.org/rivers/> ." in turtle and "ns1:" not in turtle, turtle


@pytest.mark.parametrize("return_format", [JSONLD, RDFXML])
def test_construct_as_jsonld_and_rdfxml(server, return_format):
    # SPARQLWrapper parses both into an rdflib graph
    graph = wrapper(server.sparql, INTO_RHINE, return_format).queryAndConvert()
    assert isomorphic(graph, expected_graph()), server.show()


def test_construct_as_ntriples(server):
    # SPARQLWrapper has no N-Triples format: a user asks for it by Accept alone
    sparql = wrapper(server.sparql, INTO_RHINE, N3)
    sparql.setOnlyConneg(True)
    sparql.addCustomHttpHeader("Accept", "application/n-triples")
    query = sparql.query()
    assert query.info()["content-type"].startswith("application/n-triples"), server.show()
    graph = rdflib.Graph().parse(data=query.convert(), format="nt")
    assert isomorphic(graph, expected_graph())


@pytest.mark.parametrize("return_format", [TURTLE, N3, JSONLD, RDFXML, "nt"])
def test_describe(server, return_format):
    sparql = wrapper(server.sparql, f"DESCRIBE <{EX}Inn>", N3 if return_format == "nt" else return_format)
    if return_format == "nt":  # by Accept alone, as for CONSTRUCT
        sparql.setOnlyConneg(True)
        sparql.addCustomHttpHeader("Accept", "application/n-triples")
    query = sparql.query()
    assert query.response.status == 200, server.show()
    result = query.convert()
    syntax = "nt" if return_format == "nt" else "turtle"
    graph = result if isinstance(result, rdflib.Graph) else rdflib.Graph().parse(data=result, format=syntax)
    assert (rdflib.URIRef(f"{EX}Inn"), rdflib.URIRef(f"{EX}flowsInto"), rdflib.URIRef(f"{EX}Danube")) in graph
    assert (rdflib.URIRef(f"{EX}Inn"), rdflib.URIRef(RDFS_LABEL), rdflib.Literal("Inn", lang="en")) in graph


def update_wrapper(endpoint: str, text: str) -> SPARQLWrapper:
    sparql = SPARQLWrapper(endpoint)
    sparql.setMethod(POST)
    sparql.setQuery(text)
    return sparql


def isar_flows_into_danube(endpoint: str) -> bool:
    ask = wrapper(endpoint, f"ASK {{ <{EX}Isar> <{EX}flowsInto> <{EX}Danube> }}", JSON)
    return ask.queryAndConvert()["boolean"]




def test_an_update_by_post(server):
    result = update_wrapper(server.sparql, ISAR).query()
    assert result.response.status in (200, 204), server.show()
    assert isar_flows_into_danube(server.sparql)


def test_set_credentials_with_the_update_token_as_password(recorded):
    server = recorded(update_token="s3cret")
    refused = update_wrapper(server.sparql, ISAR)
    with pytest.raises(Unauthorized):
        refused.query()
    sparql = update_wrapper(server.sparql, ISAR)
    sparql.setCredentials("anyone", "s3cret")  # HTTP Basic, the default
    assert sparql.query().response.status in (200, 204), server.show()
    assert server.recorder.requests[-1].header("authorization").startswith("Basic ")
    assert isar_flows_into_danube(server.sparql)


def test_a_registration_sent_as_a_query_is_told_where_to_go(server):
    # SPARQLWrapper sends what it does not know as a query (query=..., by GET)
    sparql = wrapper(server.sparql, f"""REGISTER QUERY counter AS
SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}gauges> [RANGE 10s STEP 5s] WHERE {{ ?s ?p ?o }}""", JSON)
    with pytest.raises(QueryBadFormed) as refused:
        sparql.query()
    message = str(refused.value)
    assert "update" in message and "/queries" in message, message
    assert server.recorder.requests[-1].status == 400
