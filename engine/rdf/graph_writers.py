"""Writing a graph in any RDF syntax the endpoint offers, a chunk at a time.

:func:`write_graph` cuts the triples into batches of :data:`CHUNK_TRIPLES`
and hands them to the writer of the syntax; every writer yields one chunk
of bytes per batch (the document's opening goes out with the first one), so
an answer's first bytes leave before its last triple is spelled, and a
writer holds one batch, never the whole graph. A chunk always ends a
statement: a subject whose triples span two batches is written twice,
which every syntax reads as the same graph.

The writers are ours rather than rdflib's: rdflib builds the whole graph in
memory first (an 11 s wait before the first byte of 200K triples as
Turtle, measured), and invents ``ns1:`` prefixes where the query had its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import islice

from engine.rdf.jsonld_writer import write_jsonld
from engine.rdf.ntriples import c14n_term
from engine.rdf.rdfxml_writer import write_rdfxml
from engine.rdf.terms import RDF, XSD, Term
from engine.rdf.turtle_writer import write_turtle

Triple = tuple[Term, Term, Term]

#: triples written per chunk
CHUNK_TRIPLES = 4096

#: The prefixes of a graph written with none given: a graph store GET or
#: the service description has no query to take them from. A streamed
#: writer declares its prefixes before it has seen the graph, so it cannot
#: pick the ones the graph uses; these three are used by nearly every graph
#: (``rdf:type`` in RDF/XML, ``rdfs:label``, XSD datatypes) and cost three lines.
STANDARD_PREFIXES: Mapping[str, str] = {
    "rdf": RDF,
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": XSD,
}


def write_ntriples(batches: Iterable[list[Triple]], prefixes: Mapping[str, str]) -> Iterator[bytes]:
    """N-Triples (it has no prefixes), one chunk per batch, in canonical
    N-Triples (the store's spelling with every control character escaped)."""
    spell = c14n_term
    for batch in batches:
        yield "".join([f"{spell(s)} {spell(p)} {spell(o)} .\n" for s, p, o in batch]).encode()


_WRITERS = {"nt": write_ntriples, "turtle": write_turtle, "json-ld": write_jsonld, "xml": write_rdfxml}

#: the format names write_graph knows (those of engine.rdf.media_types)
GRAPH_FORMATS = frozenset(_WRITERS)


def batches(triples: Iterable[Triple], size: int = CHUNK_TRIPLES) -> Iterator[list[Triple]]:
    """The triples as lists of ``size`` (the last one shorter)."""
    it = iter(triples)
    while batch := list(islice(it, size)):
        yield batch


def write_graph(format: str, triples: Iterable[Triple],
                prefixes: Mapping[str, str] | None = None) -> Iterator[bytes]:
    """The triples as a document in ``format`` ("turtle", "nt", "json-ld",
    "xml"), in chunks of bytes, using ``prefixes`` (prefix -> namespace IRI;
    None: :data:`STANDARD_PREFIXES`) where the syntax has them. Nothing is
    written until the first chunk is asked for."""
    writer = _WRITERS.get(format)
    if writer is None:
        raise ValueError(f"cannot write a graph as {format!r}; known: {', '.join(sorted(_WRITERS))}")
    return writer(batches(triples), STANDARD_PREFIXES if prefixes is None else prefixes)
