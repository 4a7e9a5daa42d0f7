"""The SPARQL 1.1 Service Description sent on a GET of the endpoint without a query.

It tells a client (or another endpoint's federated query planner) what this
service speaks: its endpoint IRI, the languages, the result and input
formats, and features such as SERVICE. Terms come from
https://www.w3.org/TR/sparql11-service-description/ and the W3C format IRIs.
"""

from __future__ import annotations

from engine.rdf import IRI, BNode, Term

SD = "http://www.w3.org/ns/sparql-service-description#"
FORMATS = "http://www.w3.org/ns/formats/"
RDF_TYPE = IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")

RESULT_FORMATS = ("SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV", "SPARQL_Results_TSV",
                  "Turtle", "N-Triples", "RDF_XML", "JSON-LD")
#: what the graph store accepts for uploads
INPUT_FORMATS = ("Turtle", "N-Triples", "RDF_XML", "JSON-LD", "N-Quads", "TriG")
FEATURES = ("BasicFederatedQuery", "EmptyGraphs")


def describe_service(endpoint: str, read_only: bool,
                     union_default_graph: bool = False) -> list[tuple[Term, Term, Term]]:
    """The description as triples; ``endpoint`` is the URL the client used;
    ``union_default_graph``: the server's ``--union-default-graph``, the
    feature ``sd:UnionDefaultGraph``."""
    service, dataset, default_graph = BNode("service"), BNode("dataset"), BNode("defaultGraph")

    def sd(name: str) -> IRI:
        return IRI(SD + name)

    triples: list[tuple[Term, Term, Term]] = [
        (service, RDF_TYPE, sd("Service")),
        (service, sd("endpoint"), IRI(endpoint)),
        (service, sd("supportedLanguage"), sd("SPARQL11Query")),
    ]
    if not read_only:
        triples.append((service, sd("supportedLanguage"), sd("SPARQL11Update")))
    triples += [(service, sd("resultFormat"), IRI(FORMATS + name)) for name in RESULT_FORMATS]
    if not read_only:
        triples += [(service, sd("inputFormat"), IRI(FORMATS + name)) for name in INPUT_FORMATS]
    triples += [(service, sd("feature"), sd(name)) for name in FEATURES]
    if union_default_graph:
        triples.append((service, sd("feature"), sd("UnionDefaultGraph")))
    triples += [
        (service, sd("defaultDataset"), dataset),
        (dataset, RDF_TYPE, sd("Dataset")),
        (dataset, sd("defaultGraph"), default_graph),
        (default_graph, RDF_TYPE, sd("Graph")),
    ]
    return triples
