"""Reading and writing RDF documents.

Oxigraph's parsers (the ``pyoxigraph`` package, used as a parsing library
only: it never holds the store's data or evaluates queries) read every
syntax: they are compiled, validate IRIs and report the line and column of
an error. A bulk load takes a document as canonical N-Quads text
(:func:`canonical_nquads`) and splits it into columns without a Python
object per statement (:mod:`engine.rdf.spelled_quads`); smaller callers get
terms (:func:`parse_rdf`). Output is written by our own streaming writers
(:mod:`engine.rdf.graph_writers`); :func:`serialize_triples` joins their
chunks for a caller that wants the whole document.

Formats are named by rdflib's names ("turtle", "nt", "xml", ...); which
media type or file suffix says which format is :mod:`engine.rdf.media_types`'
job.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from engine.rdf.graph_writers import write_graph
from engine.rdf.media_types import guess_format
from engine.rdf.terms import IRI, BNode, Literal, Term, TripleTerm

if TYPE_CHECKING:
    import pyoxigraph as ox
    import rdflib

# Both libraries are imported when first used: a server that only answers
# queries over a mapped store never needs them (together about 21 MB of a
# process's memory, measured at import).

#: our format names -> the names of Oxigraph's parsers
_OXIGRAPH_FORMATS = {"turtle": "TURTLE", "nt": "N_TRIPLES", "nquads": "N_QUADS", "trig": "TRIG",
                     "xml": "RDF_XML", "json-ld": "JSON_LD", "n3": "N3"}


def _oxigraph():
    import pyoxigraph

    return pyoxigraph


def _rdflib():
    import rdflib

    # keep lexical forms exactly as written: "01"^^xsd:integer must stay "01"
    rdflib.NORMALIZE_LITERALS = False
    return rdflib


class RdfSyntaxError(ValueError):
    """A document that is not valid in its syntax; the message says where
    (line and columns) and what was expected."""


def from_rdflib(term: rdflib.term.Node) -> Term:
    """Our term for an rdflib term."""
    rdf_term = _rdflib().term
    if isinstance(term, rdf_term.URIRef):
        return IRI(str(term))
    if isinstance(term, rdf_term.BNode):
        return BNode(str(term))
    if isinstance(term, rdf_term.Literal):
        datatype = str(term.datatype) if term.datatype is not None else None
        return Literal(str(term), datatype, term.language)
    raise TypeError(f"not an RDF term: {term!r}")


def _document(source: str | Path | bytes, format: str | None, base: str | None
              ) -> tuple[bytes, ox.RdfFormat, str | None]:
    """(bytes, parser, base IRI) of a document given as a path or as bytes."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        fmt = format or guess_format(path.name) or "turtle"
        data = path.read_bytes()
        base = base or path.resolve().as_uri()
    else:
        fmt = format or "turtle"
        data = source
    parser = _OXIGRAPH_FORMATS.get(fmt)
    if parser is None:
        raise RdfSyntaxError(f"cannot read RDF in the format {fmt!r}")
    if fmt == "xml":
        _check_entity_growth(data)
        _check_rdfxml_12(data)
    return data, getattr(_oxigraph().RdfFormat, parser), base


#: an RDF/XML document may grow by its internal entities to at most this
#: many bytes plus 16 times its own size (OWL files abbreviate namespaces
#: with entities; a "billion laughs" of 700 bytes would grow to gigabytes)
ENTITY_GROWTH_ALLOWANCE = 1 << 20
_ENTITY = re.compile(rb"<!ENTITY\s+(%\s+)?([^\s%;&]+)\s+(?:\"([^\"]*)\"|'([^']*)')", re.S)
_REFERENCE = re.compile(rb"&([^\s&;#]+);")


def _check_entity_growth(data: bytes) -> None:
    """Refuse an RDF/XML document whose internal entities would expand it
    beyond the allowance, before a parser expands them."""
    if b"<!ENTITY" not in data:
        return
    declarations = list(_ENTITY.finditer(data))
    if any(m.group(1) for m in declarations):
        raise RdfSyntaxError("RDF/XML with parameter entities is not accepted")
    values = {m.group(2): m.group(3) if m.group(3) is not None else m.group(4) for m in declarations}
    sizes: dict[bytes, int] = {}

    def size(name: bytes, seen: frozenset[bytes]) -> int:
        if name in sizes:
            return sizes[name]
        if name in seen:
            raise RdfSyntaxError(f"RDF/XML entity {name.decode(errors='replace')!r} refers to itself")
        value = values.get(name)
        if value is None:
            return len(name) + 2
        total = len(value) + sum(size(ref, seen | {name}) - len(ref) - 2
                                 for ref in _REFERENCE.findall(value))
        sizes[name] = total
        return total

    # references are counted in the whole document, declarations included:
    # an overestimate, never an underestimate (where the DTD ends is not looked for)
    grown = sum(size(ref, frozenset()) for ref in _REFERENCE.findall(data) if ref in values)
    if grown > ENTITY_GROWTH_ALLOWANCE + 16 * len(data):
        raise RdfSyntaxError(f"RDF/XML entities would expand this {len(data):,}-byte document to "
                             f"{grown:,} bytes; refused")


_TRIPLE_PARSE_TYPE = re.compile(rb"""parseType\s*=\s*["']Triple["']""")


def _check_rdfxml_12(data: bytes) -> None:
    """Refuse the RDF/XML 1.2 forms Oxigraph's reader drops without a word
    (a ``rdf:parseType="Triple"`` element, an ``its:dir`` direction): a load
    must not lose statements or directions silently."""
    if _TRIPLE_PARSE_TYPE.search(data):
        raise RdfSyntaxError('RDF/XML triple terms (rdf:parseType="Triple") are not read here; '
                             "send the document as Turtle, TriG, N-Triples or N-Quads 1.2")
    if b"http://www.w3.org/2005/11/its" in data:
        raise RdfSyntaxError("RDF/XML directional strings (its:dir) are not read here; "
                             "send the document as Turtle, TriG, N-Triples or N-Quads 1.2")


def _quads(data: bytes, parser: ox.RdfFormat, base: str | None) -> Iterator[ox.Quad]:
    """Oxigraph's quads; blank nodes renamed, so that two documents (or two
    loads of one) never share a blank node, as RDF merging requires."""
    try:
        yield from _oxigraph().parse(data, parser, base_iri=base, rename_blank_nodes=True)
    except SyntaxError as exc:
        raise RdfSyntaxError(exc.msg) from None


def canonical_nquads(source: str | Path | bytes, format: str | None = None,
                     base: str | None = None) -> bytes:
    """The document's statements as N-Quads in Oxigraph's spelling: one
    statement a line, terms separated by one space, ``xsd:string`` dropped,
    language tags in lower case, non-ASCII raw (only a term spelled with a
    backslash differs from the store's spelling, see ``canonical``)."""
    data, parser, base = _document(source, format, base)
    out = io.BytesIO()
    try:
        ox = _oxigraph()
        ox.serialize(_quads(data, parser, base), out, ox.RdfFormat.N_QUADS)
    except ValueError as exc:
        if isinstance(exc, RdfSyntaxError):
            raise
        raise RdfSyntaxError(str(exc)) from None
    return out.getvalue()


def from_oxigraph(term: ox.NamedNode | ox.BlankNode | ox.Literal) -> Term:
    """Our term for an Oxigraph term."""
    ox = _oxigraph()
    cls = term.__class__
    if cls is ox.NamedNode:
        return IRI(term.value)
    if cls is ox.BlankNode:
        return BNode(term.value)
    if cls is ox.Literal:
        language = term.language
        if language is not None and term.direction is not None:
            language = f"{language}--{str(term.direction).lower()}"  # RDF 1.2's directional string
        return Literal(term.value, term.datatype.value, language)
    if cls is ox.Triple:
        return TripleTerm(from_oxigraph(term.subject), from_oxigraph(term.predicate),
                          from_oxigraph(term.object))
    raise RdfSyntaxError(f"not an RDF term: {term}")


def parse_rdf(
    source: str | Path | bytes, format: str | None = None, base: str | None = None
) -> Iterator[tuple[Term, Term, Term, Term | None]]:
    """Quads ``(s, p, o, graph-or-None)`` of a document (file path or bytes)."""
    data, parser, base = _document(source, format, base)
    convert = from_oxigraph
    default = _oxigraph().DefaultGraph
    for s, p, o, g in _quads(data, parser, base):
        yield convert(s), convert(p), convert(o), (None if g.__class__ is default else convert(g))


def serialize_triples(triples: Iterable[tuple[Term, Term, Term]], format: str,
                      prefixes: Mapping[str, str] | None = None) -> bytes:
    """A whole document (turtle, nt, xml, json-ld) at once, for callers that
    want bytes rather than chunks (the durability log's N-Triples)."""
    return b"".join(write_graph(format, triples, prefixes))
