"""The one registry of the media types the server reads and writes.

Each entry ties a media type to the format name its reader/writer knows it
by (an rdflib parser/serialiser name for RDF, a writer name of
``engine.sparql.results`` for results), to the kinds of content it carries,
and to what a client may call it. Content negotiation, the result-format
dispatch, document parsing, the graph store, stream ingestion and the loader
all derive their lookups from :data:`REGISTRY`, so adding a syntax is one
entry here.

An *alias* is a media type clients send for a format that has a proper one
(``application/x-turtle``, ``text/xml``): it is accepted and its responses
carry the proper type (:attr:`MediaType.content_type`). The order of
:data:`REGISTRY` within a kind is the server's preference when a client
accepts several.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: what a document carries: an RDF graph, an RDF dataset, SELECT solutions, an ASK boolean
Kind = Literal["graph", "dataset", "solutions", "boolean"]
_RESULTS: frozenset[Kind] = frozenset({"solutions", "boolean"})
_GRAPH: frozenset[Kind] = frozenset({"graph"})
_DATASET: frozenset[Kind] = frozenset({"dataset"})


@dataclass(frozen=True)
class MediaType:
    """One media type for one family of content."""

    media_type: str
    #: the reader's / writer's name of the format
    format: str
    kinds: frozenset[Kind]
    #: the proper media type when this one is an alias ("" when it is proper)
    alias_of: str = ""
    #: file name suffixes (without the dot) that say this format
    suffixes: tuple[str, ...] = ()
    #: short names a client may give in a ``format`` parameter
    names: tuple[str, ...] = ()
    #: accepted in requests (bodies, uploads) and result documents read back
    readable: bool = True
    #: sent in responses, i.e. offered by content negotiation
    offered: bool = True

    @property
    def content_type(self) -> str:
        """The Content-Type header of a response in this format."""
        proper = self.alias_of or self.media_type
        return proper + "; charset=utf-8" if proper.startswith("text/") else proper


_SPARQL_JSON = "application/sparql-results+json"
_SPARQL_XML = "application/sparql-results+xml"
_TSV = "text/tab-separated-values"

REGISTRY: tuple[MediaType, ...] = (
    # SPARQL results
    MediaType(_SPARQL_JSON, "json", _RESULTS),
    MediaType(_SPARQL_XML, "xml", _RESULTS),
    MediaType("text/csv", "csv", _RESULTS, names=("csv",)),
    MediaType(_TSV, "tsv", _RESULTS, names=("tsv",)),
    MediaType("application/json", "json", _RESULTS, alias_of=_SPARQL_JSON, names=("json",)),
    MediaType("application/xml", "xml", _RESULTS, alias_of=_SPARQL_XML, names=("xml",)),
    MediaType("text/xml", "xml", _RESULTS, alias_of=_SPARQL_XML),
    MediaType("text/tsv", "tsv", _RESULTS, alias_of=_TSV, offered=False),
    # RDF graphs
    MediaType("text/turtle", "turtle", _GRAPH, suffixes=("ttl", "turtle"), names=("turtle", "ttl")),
    MediaType("application/n-triples", "nt", _GRAPH, suffixes=("nt", "ntriples"),
              names=("nt", "ntriples", "n-triples")),
    MediaType("application/rdf+xml", "xml", _GRAPH, suffixes=("rdf", "xml", "owl"),
              names=("rdfxml", "rdf+xml")),
    MediaType("application/ld+json", "json-ld", _GRAPH, suffixes=("jsonld", "json"),
              names=("jsonld", "json-ld")),
    MediaType("text/n3", "n3", _GRAPH, suffixes=("n3",), offered=False),
    # asked for as N3, a graph is written as Turtle, which is N3 (what clients get elsewhere)
    MediaType("text/n3", "turtle", _GRAPH, names=("n3",), readable=False),
    MediaType("text/rdf+n3", "turtle", _GRAPH, alias_of="text/n3", readable=False),
    MediaType("application/x-turtle", "turtle", _GRAPH, alias_of="text/turtle"),
    MediaType("text/plain", "nt", _GRAPH, alias_of="application/n-triples"),
    MediaType("application/xml", "xml", _GRAPH, alias_of="application/rdf+xml", names=("xml",)),
    # offered for CONSTRUCT, but a JSON request body is not taken for JSON-LD
    MediaType("application/json", "json-ld", _GRAPH, alias_of="application/ld+json", names=("json",),
              readable=False),
    # RDF datasets (a graph store GET of the whole store is sent in them)
    MediaType("application/n-quads", "nquads", _DATASET, suffixes=("nq",), names=("nquads", "nq")),
    MediaType("application/trig", "trig", _DATASET, suffixes=("trig",), names=("trig",)),
)


def base_media_type(header: str) -> str:
    """The media type of a Content-Type header, lower-cased, parameters dropped."""
    return header.split(";", 1)[0].strip().lower()


def offered_for(kind: Kind) -> tuple[MediaType, ...]:
    """The media types a response of ``kind`` may be sent in, in preference order."""
    return tuple(entry for entry in REGISTRY if kind in entry.kinds and entry.offered)


def _rdf(entry: MediaType) -> bool:
    return "graph" in entry.kinds or "dataset" in entry.kinds


#: media type -> rdflib parser name, for the RDF documents the server reads
MEDIA_TYPE_FORMATS: dict[str, str] = {e.media_type: e.format for e in REGISTRY if _rdf(e) and e.readable}

#: file suffix -> rdflib parser name
SUFFIX_FORMATS: dict[str, str] = {suffix: e.format for e in REGISTRY if _rdf(e) for suffix in e.suffixes}

#: results format name -> its proper media type
RESULT_MEDIA_TYPES: dict[str, str] = {
    e.format: e.media_type for e in REGISTRY if "solutions" in e.kinds and not e.alias_of
}

_RESULT_FORMATS: dict[str, str] = {
    e.media_type: e.format for e in REGISTRY if "solutions" in e.kinds and e.readable
}

#: short name of a ``format`` parameter -> the media type it stands for
FORMAT_NAMES: dict[str, str] = {name: e.media_type for e in REGISTRY for name in e.names}


def rdf_format(media_type: str) -> str | None:
    """The rdflib parser name for a Content-Type (parameters ignored), or None."""
    return MEDIA_TYPE_FORMATS.get(base_media_type(media_type))


def result_format(media_type: str) -> str | None:
    """The results format name for a Content-Type (parameters ignored), or None."""
    return _RESULT_FORMATS.get(base_media_type(media_type))


def guess_format(name: str) -> str | None:
    """The rdflib parser name a file name's suffix says, or None."""
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return SUFFIX_FORMATS.get(suffix)
