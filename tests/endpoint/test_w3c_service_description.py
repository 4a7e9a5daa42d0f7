"""The three W3C SPARQL 1.1 Service Description tests
(``service-description/manifest.ttl``), as a client would check them:
GET the endpoint without a query and read the RDF that comes back."""

import httpx
import pytest
import rdflib
from rdflib import RDF, BNode, Literal, Namespace, URIRef

SD = Namespace("http://www.w3.org/ns/sparql-service-description#")

#: the vocabulary of https://www.w3.org/TR/sparql11-service-description/ (section 3):
#: property -> (domain, range); a range of None means any IRI, "literal" a literal
PROPERTIES = {
    SD.endpoint: (SD.Service, None),
    SD.feature: (SD.Service, SD.Feature),
    SD.defaultEntailmentRegime: (SD.Service, SD.EntailmentRegime),
    SD.supportedEntailmentProfile: (SD.Service, SD.EntailmentProfile),
    SD.extensionFunction: (SD.Service, SD.Function),
    SD.extensionAggregate: (SD.Service, SD.Aggregate),
    SD.languageExtension: (SD.Service, SD.Language),
    SD.supportedLanguage: (SD.Service, SD.Language),
    SD.propertyFeature: (SD.Service, None),
    SD.defaultDataset: (SD.Service, SD.Dataset),
    SD.availableGraphs: (SD.Service, SD.GraphCollection),
    SD.resultFormat: (SD.Service, None),
    SD.inputFormat: (SD.Service, None),
    SD.defaultGraph: (SD.Dataset, SD.Graph),
    SD.namedGraph: (SD.GraphCollection, SD.NamedGraph),
    SD.name: (SD.NamedGraph, None),
    SD.graph: (SD.NamedGraph, SD.Graph),
}
#: instances the vocabulary defines, with their class
INSTANCES = {
    SD.SPARQL10Query: SD.Language, SD.SPARQL11Query: SD.Language, SD.SPARQL11Update: SD.Language,
    SD.DereferencesURIs: SD.Feature, SD.UnionDefaultGraph: SD.Feature, SD.RequiresDataset: SD.Feature,
    SD.EmptyGraphs: SD.Feature, SD.BasicFederatedQuery: SD.Feature,
}
CLASSES = {SD.Service, SD.Feature, SD.Language, SD.Function, SD.Aggregate, SD.EntailmentRegime,
           SD.EntailmentProfile, SD.GraphCollection, SD.Dataset, SD.NamedGraph, SD.Graph}
#: subclasses: a Dataset is a GraphCollection
SUPERCLASSES = {SD.Dataset: {SD.GraphCollection}}


def description(url: str, accept: str = "text/turtle") -> rdflib.Graph:
    response = httpx.get(url, headers={"Accept": accept})
    assert response.status_code == 200
    fmt = {"text/turtle": "turtle", "application/rdf+xml": "xml", "application/n-triples": "nt",
           "application/ld+json": "json-ld"}[response.headers["content-type"].split(";")[0]]
    return rdflib.Graph().parse(data=response.content, format=fmt)


def types_of(graph: rdflib.Graph, node) -> set:
    found = set(graph.objects(node, RDF.type)) | ({INSTANCES[node]} if node in INSTANCES else set())
    return found | {s for t in found for s in SUPERCLASSES.get(t, ())}


@pytest.mark.parametrize("accept", ["text/turtle", "application/rdf+xml", "application/n-triples",
                                    "application/ld+json"])
def test_returns_rdf(serve, accept):
    graph = description(serve() + "/sparql", accept)
    assert (None, RDF.type, SD.Service) in graph


def test_has_endpoint_triple(serve):
    url = serve() + "/sparql"
    graph = description(url)
    services = list(graph.subjects(SD.endpoint, URIRef(url)))
    assert len(services) == 1
    assert (services[0], RDF.type, SD.Service) in graph


def test_conforms_to_schema(serve):
    graph = description(serve() + "/sparql")
    for s, p, o in graph:
        if p == RDF.type and str(o).startswith(str(SD)):
            assert o in CLASSES, f"unknown class {o}"
        if not str(p).startswith(str(SD)):
            continue
        assert p in PROPERTIES, f"unknown property {p}"
        domain, range_ = PROPERTIES[p]
        assert domain in types_of(graph, s), f"{s} {p} needs the subject to be a {domain}"
        assert not isinstance(o, Literal), f"{p} takes a resource, got {o!r}"
        if range_ is not None:
            assert range_ in types_of(graph, o), f"{p} {o}: object should be a {range_}"
        else:
            assert isinstance(o, URIRef | BNode)
    service = next(graph.subjects(RDF.type, SD.Service))
    languages = set(graph.objects(service, SD.supportedLanguage))
    assert languages == {SD.SPARQL11Query, SD.SPARQL11Update}


def test_read_only_service_does_not_offer_update(serve):
    graph = description(serve(read_only=True) + "/sparql")
    assert set(graph.objects(None, SD.supportedLanguage)) == {SD.SPARQL11Query}
