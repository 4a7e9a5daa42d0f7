"""Reading the expected answers that the tests give as RDF files.

rdflib parses them (an independent parser, so a bug in the engine's own
Turtle reader cannot hide itself) with literal canonicalisation switched
off, because the tests compare lexical forms. rdflib does not read RDF 1.2
(triple terms, directional strings): the SPARQL 1.2 suite's files are read
by Oxigraph (:func:`read_rdf_quads`), and so are TriG and N-Quads files. Older DAWG tests encode
SELECT/ASK answers as RDF with the result-set vocabulary; those come back
as solutions or a boolean.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import rdflib
from rdflib import RDF, Namespace

from engine.rdf import IRI, BNode, Literal, Term, from_oxigraph
from tests.harness.w3c.manifest import SUITE_12_ROOT

RS = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/result-set#")

Triple = tuple[Term, Term, Term]
Solutions = tuple[list[str], list[list[Term | None]]]

_RDF_FORMATS = {".ttl": "turtle", ".nt": "nt", ".rdf": "xml", ".n3": "n3"}


def to_rdflib(term: Term) -> rdflib.term.Node:
    """Our term as an rdflib node; language tags lower-cased (RDF 1.1 ignores their case)."""
    cls = term.__class__
    if cls is IRI:
        return rdflib.URIRef(term.value)
    if cls is BNode:
        return rdflib.BNode(term.id)
    lang = term.lang.lower() if term.lang else None
    return rdflib.Literal(term.lexical, lang=lang, datatype=term.datatype, normalize=False)


def from_rdflib(node: rdflib.term.Node) -> Term:
    if isinstance(node, rdflib.URIRef):
        return IRI(str(node))
    if isinstance(node, rdflib.BNode):
        return BNode(str(node))
    if isinstance(node, rdflib.Literal):
        datatype = str(node.datatype) if node.datatype is not None else None
        return Literal(str(node), datatype=datatype, lang=node.language)
    raise TypeError(f"unexpected RDF node {node!r}")


@contextmanager
def exact_rdflib() -> Iterator[None]:
    """Keep literals as written: rdflib turns "01"^^xsd:integer into "1" unless
    told not to, and logs a traceback for every ill-typed literal, which the
    suite has on purpose."""
    saved = rdflib.NORMALIZE_LITERALS
    logger = logging.getLogger("rdflib.term")
    level = logger.level
    rdflib.NORMALIZE_LITERALS = False
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        rdflib.NORMALIZE_LITERALS = saved
        logger.setLevel(level)


def _parse(path: Path) -> rdflib.Graph:
    graph = rdflib.Graph()
    with exact_rdflib():
        graph.parse(path, format=_RDF_FORMATS.get(path.suffix, "turtle"), publicID=path.as_uri())
    return graph


def triples_of(graph: rdflib.Graph) -> list[Triple]:
    """An rdflib graph's triples as engine terms."""
    return [(from_rdflib(s), from_rdflib(p), from_rdflib(o)) for s, p, o in graph]


def read_rdf_quads(path: Path) -> list[tuple[Term, Term, Term, Term | None]]:
    """The statements of an RDF 1.2 file (Turtle, TriG, N-Triples, N-Quads)
    read by Oxigraph, as engine terms; the graph is None for the default one."""
    import pyoxigraph as ox

    formats = {".trig": ox.RdfFormat.TRIG, ".nq": ox.RdfFormat.N_QUADS, ".nt": ox.RdfFormat.N_TRIPLES}
    quads = ox.parse(path.read_bytes(), formats.get(path.suffix, ox.RdfFormat.TURTLE), base_iri=path.as_uri())
    return [(from_oxigraph(q.subject), from_oxigraph(q.predicate), from_oxigraph(q.object),
             None if isinstance(q.graph_name, ox.DefaultGraph) else from_oxigraph(q.graph_name))
            for q in quads]


def _rdf12(path: Path) -> bool:
    """Whether the file is one rdflib cannot be trusted with: the SPARQL 1.2
    suite's, or a TriG / N-Quads file (whose named graphs the caller wants)."""
    return path.suffix in (".trig", ".nq") or SUITE_12_ROOT in path.parents


def read_rdf_file(path: Path) -> list[Triple]:
    """The triples of an RDF file (of its default graph), as engine terms."""
    if _rdf12(path):
        return [(s, p, o) for s, p, o, g in read_rdf_quads(path) if g is None]
    return triples_of(_parse(path))


def _result_set(graph: rdflib.Graph, node: rdflib.term.Node) -> Solutions | bool:
    boolean = graph.value(node, RS.boolean)
    if boolean is not None:
        return str(boolean) == "true"
    variables = sorted(str(v) for v in graph.objects(node, RS.resultVariable))
    solutions = list(graph.objects(node, RS.solution))
    solutions.sort(key=lambda s: int(graph.value(s, RS.index) or 0))  # rs:index orders ORDER BY results
    bound: list[dict[str, Term]] = []
    for solution in solutions:
        row: dict[str, Term] = {}
        for binding in graph.objects(solution, RS.binding):
            name = str(graph.value(binding, RS.variable))
            row[name] = from_rdflib(graph.value(binding, RS.value))
            if name not in variables:
                variables.append(name)
        bound.append(row)
    return variables, [[row.get(var) for var in variables] for row in bound]


def read_expected_rdf(path: Path) -> list[Triple] | Solutions | bool:
    """An expected answer in RDF: a graph, or solutions / a boolean when the
    file uses the result-set vocabulary."""
    if _rdf12(path) and b"result-set#" not in path.read_bytes():
        return read_rdf_file(path)
    graph = _parse(path)
    result_set = next(graph.subjects(RDF.type, RS.ResultSet), None)
    if result_set is not None:
        return _result_set(graph, result_set)
    return triples_of(graph)
