"""Reading and writing RDF documents (rdflib parses and serialises syntaxes;
it never holds the store's data or evaluates queries).

Formats are named by rdflib's parser names; which media type or file suffix
says which format is :mod:`engine.rdf.media_types`' job. N-Triples output is
written by :mod:`engine.rdf.ntriples` directly, in the store's spelling.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from pathlib import Path

import rdflib
from rdflib.term import BNode as RdflibBNode
from rdflib.term import Literal as RdflibLiteral
from rdflib.term import URIRef

from engine.rdf.media_types import guess_format
from engine.rdf.ntriples import format_term
from engine.rdf.terms import IRI, BNode, Literal, Term

# keep lexical forms exactly as written: "01"^^xsd:integer must stay "01"
rdflib.NORMALIZE_LITERALS = False


def from_rdflib(term: rdflib.term.Node) -> Term:
    """Our term for an rdflib term."""
    if isinstance(term, URIRef):
        return IRI(str(term))
    if isinstance(term, RdflibBNode):
        return BNode(str(term))
    if isinstance(term, RdflibLiteral):
        datatype = str(term.datatype) if term.datatype is not None else None
        return Literal(str(term), datatype, term.language)
    raise TypeError(f"not an RDF term: {term!r}")


def to_rdflib(term: Term) -> rdflib.term.Identifier:
    """rdflib's term for one of ours."""
    if isinstance(term, IRI):
        return URIRef(term.value)
    if isinstance(term, BNode):
        return RdflibBNode(term.id)
    return RdflibLiteral(term.lexical, lang=term.lang, datatype=term.datatype)


def parse_rdf(
    source: str | Path | bytes, format: str | None = None, base: str | None = None
) -> Iterator[tuple[Term, Term, Term, Term | None]]:
    """Quads ``(s, p, o, graph-or-None)`` of a document (file path or bytes)."""
    if isinstance(source, (str, Path)) and not isinstance(source, bytes):
        path = Path(source)
        fmt = format or guess_format(path.name) or "turtle"
        data = path.read_bytes()
        base = base or path.resolve().as_uri()
    else:
        fmt = format or "turtle"
        data = source
    if fmt in ("nquads", "trig"):
        dataset = rdflib.Dataset()
        dataset.parse(io.BytesIO(data), format=fmt, publicID=base)
        for s, p, o, g in dataset.quads((None, None, None, None)):
            graph = None if g is None or g == rdflib.graph.DATASET_DEFAULT_GRAPH_ID else from_rdflib(g)
            yield from_rdflib(s), from_rdflib(p), from_rdflib(o), graph
        return
    graph = rdflib.Graph()
    graph.parse(io.BytesIO(data), format=fmt, publicID=base)
    for s, p, o in graph:
        yield from_rdflib(s), from_rdflib(p), from_rdflib(o), None


def serialize_triples(triples: Iterable[tuple[Term, Term, Term]], format: str) -> bytes:
    """Serialise triples in an rdflib output format (turtle, nt, xml, json-ld)."""
    if format == "nt":
        spell = format_term
        return "".join(f"{spell(s)} {spell(p)} {spell(o)} .\n" for s, p, o in triples).encode()
    graph = rdflib.Graph()
    for s, p, o in triples:
        graph.add((to_rdflib(s), to_rdflib(p), to_rdflib(o)))
    return graph.serialize(format=format, encoding="utf-8")
