"""Requests the way common SPARQL clients really send them (found by trying
SPARQLWrapper, rdflib, Jena and curl against the demo server): repeated
format parameters, N3, a registration sent as a query, ``Accept`` split
over lines, wildcards, and rdflib's name for the default graph."""

import httpx
import rdflib
from rdflib.plugins.stores.sparqlstore import SPARQLUpdateStore

from tests.endpoint.test_http_sparql import EX, LONGEST, RHINE_TRIBUTARIES, media

ASK = EX + "ASK { ex:Rhine a ex:River }"


def test_format_parameters_repeated_under_several_names_and_spellings(demo):
    """SPARQLWrapper sends ``format``, ``output`` and ``results``, each with
    a short name and a media type, so that some server understands it."""
    url = demo + "/sparql"
    tsv = [(name, value) for name in ("format", "output", "results")
           for value in ("tsv", "text/tab-separated-values")]
    answer = httpx.get(url, params=[("query", LONGEST), *tsv])
    assert answer.status_code == 200 and media(answer) == "text/tab-separated-values"
    for short, wanted in (("json-ld", "application/ld+json"), ("rdf+xml", "application/rdf+xml")):
        params = [("query", RHINE_TRIBUTARIES)] + [(n, v) for n in ("format", "output", "results")
                                                   for v in (short, wanted)]
        answer = httpx.get(url, params=params)
        assert answer.status_code == 200 and media(answer) == wanted, answer.text
    empty_too = httpx.get(url, params=[("query", LONGEST), ("format", "csv"), ("format", "")])
    assert media(empty_too) == "text/csv"


def test_format_parameters_that_disagree_are_refused(demo):
    answer = httpx.get(demo + "/sparql", params=[("query", LONGEST), ("format", "csv"), ("output", "json")])
    assert answer.status_code == 400
    assert "different formats" in answer.text and "'csv'" in answer.text and "'json'" in answer.text


def test_a_graph_asked_for_as_n3_is_written_as_turtle(demo):
    url = demo + "/sparql"
    as_nt = httpx.get(url, params={"query": RHINE_TRIBUTARIES, "format": "nt"})
    expected = rdflib.Graph().parse(data=as_nt.text, format="nt")
    assert len(expected) == 2
    by_name = httpx.get(url, params={"query": RHINE_TRIBUTARIES, "format": "n3"})
    for answer in (by_name, *(httpx.get(url, params={"query": RHINE_TRIBUTARIES}, headers={"Accept": t})
                              for t in ("text/n3", "text/rdf+n3"))):
        assert answer.status_code == 200 and media(answer) == "text/n3"
        assert rdflib.Graph().parse(data=answer.text, format="turtle").isomorphic(expected)


def test_a_registration_sent_as_a_query_says_how_to_send_it(demo):
    registration = ("REGISTER QUERY q AS SELECT ?s FROM STREAM <http://example.org/s> [RANGE 1s STEP 1s] "
                    "WHERE { ?s ?p ?o }")
    for answer in (httpx.get(demo + "/sparql", params={"query": registration}),
                   httpx.post(demo + "/sparql", data={"query": registration})):
        assert answer.status_code == 400
        assert "send it as an update" in answer.text and "/queries" in answer.text
    assert httpx.get(demo + "/queries").json()["queries"] == []


def test_accept_lines_are_combined_and_wildcards_pick_proper_types(demo):
    url = demo + "/sparql"
    split = httpx.get(url, params={"query": LONGEST},
                      headers=[("Accept", "text/bogus"), ("Accept", "text/csv")])
    assert split.status_code == 200 and media(split) == "text/csv"
    for query in (LONGEST, ASK):  # the same family of answer for both forms
        answer = httpx.get(url, params={"query": query}, headers={"Accept": "text/*"})
        assert media(answer) == "text/csv", query
    named_alias = httpx.get(url, params={"query": ASK}, headers={"Accept": "text/xml"})
    assert media(named_alias) == "application/sparql-results+xml"


def test_rdflib_dataset_counts_what_it_added_to_a_named_graph(demo):
    """rdflib's Dataset names its default graph ``urn:x-rdflib:default`` in
    ``default-graph-uri``; that means the service's dataset, as on Fuseki."""
    store = SPARQLUpdateStore(demo + "/sparql", demo + "/sparql", context_aware=True)
    dataset = rdflib.Dataset(store=store)
    graph_iri = rdflib.URIRef("http://example.org/added")
    triple = (rdflib.URIRef("http://x/s"), rdflib.URIRef("http://x/p"), rdflib.Literal("o"))
    graph = dataset.graph(graph_iri)  # rdflib sends CREATE GRAPH: once
    graph.add(triple)
    assert list(graph.triples((None, None, None))) == [triple]
    count = dataset.query("SELECT (COUNT(*) AS ?n) WHERE { GRAPH <http://example.org/added> { ?s ?p ?o } }")
    assert [int(row[0]) for row in count] == [1]
    mixed = httpx.get(demo + "/sparql", params=[("query", "ASK {}"),
                                                ("default-graph-uri", "urn:x-rdflib:default"),
                                                ("default-graph-uri", "http://example.org/added")])
    assert mixed.status_code == 400 and "urn:x-rdflib:default" in mixed.text
