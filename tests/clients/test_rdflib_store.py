"""rdflib's SPARQLStore and SPARQLUpdateStore against a real server, as an
rdflib user reaches a remote endpoint: a Graph over the store, named graphs
through ``Graph(store, identifier=...)`` and through a Dataset.

rdflib sends every query from a Dataset with ``default-graph-uri`` set to
its own name for the default graph, ``urn:x-rdflib:default``, and every
update with ``using-graph-uri`` likewise; a failure message shows the
requests."""

from __future__ import annotations

import pytest
from rdflib import Dataset, Graph, Literal, URIRef
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.plugins.stores.sparqlstore import SPARQLStore, SPARQLUpdateStore

EX = "http://example.org/rivers/"
NOTES = URIRef("http://example.org/notes")
RHINE, NOTE = URIRef(f"{EX}Rhine"), URIRef("http://example.org/note")
RHINE_NOTE = (RHINE, NOTE, Literal("busiest waterway"))


@pytest.fixture
def server(recorded):
    return recorded()


def update_store(server) -> SPARQLUpdateStore:
    return SPARQLUpdateStore(query_endpoint=server.sparql, update_endpoint=server.sparql)


def test_a_graph_over_sparqlstore_queries_the_default_graph(server):
    graph = Graph(SPARQLStore(server.sparql))
    rows = graph.query(f"""PREFIX ex: <{EX}>
        SELECT ?river WHERE {{ ?river ex:flowsInto ex:Rhine }} ORDER BY ?river""")
    assert [str(row.river) for row in rows] == [f"{EX}Main", f"{EX}Moselle"], server.show()
    assert (URIRef(f"{EX}Inn"), URIRef(f"{EX}flowsInto"), URIRef(f"{EX}Danube")) in graph
    assert len(list(graph.triples((URIRef(f"{EX}Elbe"), None, None)))) > 3


def test_an_update_through_the_update_store(server):
    store = update_store(server)
    store.update(f"INSERT DATA {{ <{EX}Isar> <{EX}flowsInto> <{EX}Danube> }}")
    # rdflib writes to the default graph through a Graph named by its name for it
    # (a Graph with no name has a blank node for one, which rdflib refuses to send)
    graph = Graph(store, identifier=DATASET_DEFAULT_GRAPH_ID)
    graph.add(RHINE_NOTE)
    assert (URIRef(f"{EX}Isar"), URIRef(f"{EX}flowsInto"), URIRef(f"{EX}Danube")) in graph, server.show()
    assert RHINE_NOTE in graph, server.show()


def test_a_named_graph_through_graph_with_an_identifier(server):
    notes = Graph(update_store(server), identifier=NOTES)
    notes.add(RHINE_NOTE)
    assert list(notes.triples((None, None, None))) == [RHINE_NOTE], server.show()
    assert len(notes) == 1
    # it went to the named graph, not to the default graph
    everything = Graph(SPARQLStore(server.sparql))
    assert RHINE_NOTE not in everything
    ask = everything.query(f"ASK {{ GRAPH <{NOTES}> {{ <{RHINE}> <{NOTE}> ?o }} }}")
    assert ask.askAnswer is True, server.show()
    notes.remove(RHINE_NOTE)
    assert len(notes) == 0, server.show()


def test_a_triple_added_through_a_dataset_is_counted_by_a_graph_query(server):
    dataset = Dataset(update_store(server))
    dataset.add((*RHINE_NOTE, NOTES))
    # get_graph: graph() would send CREATE GRAPH, refused for a graph that exists, as the standard says
    assert list(dataset.get_graph(NOTES).triples((None, None, None))) == [RHINE_NOTE], server.show()
    count = dataset.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{NOTES}> {{ ?s ?p ?o }} }}")
    assert [int(row.n) for row in count] == [1], server.show("/sparql")
    # and the dataset's default graph is the store's: the demo data is in it
    rivers = dataset.query(f"ASK {{ <{EX}Inn> <{EX}flowsInto> <{EX}Danube> }}")
    assert rivers.askAnswer is True, server.show("/sparql")
