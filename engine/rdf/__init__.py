"""RDF itself, below every other layer: terms, the term dictionary, the
syntaxes, and the media types that name them.

- :mod:`~engine.rdf.terms`: the term classes and the vocabulary (XSD, RDF, kinds).
- :mod:`~engine.rdf.geosparql`: GeoSPARQL's names (geo:, geof:, units, CRSs) and the geof: functions offered.
- :mod:`~engine.rdf.dictionary`: terms <-> integer IDs (the protocol and the in-memory kind).
- :mod:`~engine.rdf.ntriples`: the one N-Triples term syntax (escape, unescape,
  read, write) and the fast statement reader.
- :mod:`~engine.rdf.documents`: whole documents in any syntax (Oxigraph's parsers).
- :mod:`~engine.rdf.graph_writers`: graphs written a chunk at a time in every syntax offered, by
  :mod:`~engine.rdf.turtle_writer`, :mod:`~engine.rdf.jsonld_writer` and :mod:`~engine.rdf.rdfxml_writer`
  (with the name grammars of :mod:`~engine.rdf.names`).
- :mod:`~engine.rdf.dataset_writers`: a whole dataset written a chunk at a time as N-Quads or TriG.
- :mod:`~engine.rdf.value_ids`: IDs that are a number's or boolean's value (never in the dictionary).
- :mod:`~engine.rdf.spelled_quads`: canonical N-Quads text to columns of distinct spellings (bulk loads).
- :mod:`~engine.rdf.media_types`: the registry of RDF and result media types.
- :mod:`~engine.rdf.iri`: relative IRI resolution (RFC 3986).
- :mod:`~engine.rdf.xml_text`: the characters XML 1.0 cannot carry.

Callers import from this package, not from its modules.
"""

from engine.rdf.dataset_writers import DATASET_FORMATS, write_dataset
from engine.rdf.dictionary import MemoryTermDictionary, TermDictionary
from engine.rdf.documents import (
    RdfSyntaxError,
    canonical_nquads,
    from_oxigraph,
    from_rdflib,
    parse_rdf,
    serialize_triples,
)
from engine.rdf.geosparql import CRS84, EPSG_4326, GEO, GEOF, GEOF_ARITY, UOM, WKT_LITERAL, geof_problem
from engine.rdf.graph_writers import GRAPH_FORMATS, STANDARD_PREFIXES, write_graph
from engine.rdf.iri import resolve_iri
from engine.rdf.media_types import (
    FORMAT_NAMES,
    MEDIA_TYPE_FORMATS,
    REGISTRY,
    RESULT_MEDIA_TYPES,
    SUFFIX_FORMATS,
    Kind,
    MediaType,
    base_media_type,
    guess_format,
    offered_for,
    rdf_format,
    result_format,
)
from engine.rdf.ntriples import (
    NTriplesError,
    c14n_term,
    canonical,
    escape_string,
    format_term,
    parse_lines,
    parse_statement,
    parse_term,
    statement_lines,
    unescape,
)
from engine.rdf.rdfxml_writer import NotRdfXml
from engine.rdf.spelled_quads import (
    SpelledQuads,
    arrow_positions,
    canonical_spellings,
    first_after,
    spelling_kinds,
    spelling_numbers,
    split_nquads,
    string_buffers,
)
from engine.rdf.spelled_terms import SpelledTerms
from engine.rdf.terms import (
    DECIMAL_FORM,
    DOUBLE_FORM,
    INTEGER_FORM,
    IRI,
    KIND_BNODE,
    KIND_IRI,
    KIND_LITERAL,
    KIND_TRIPLE,
    NUMERIC_DATATYPES,
    RDF,
    RDF_DIRLANGSTRING,
    RDF_LANGSTRING,
    RDF_REIFIES,
    RDF_TYPE,
    XSD,
    XSD_BOOLEAN,
    XSD_DATETIME,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_FLOAT,
    XSD_INTEGER,
    XSD_STRING,
    BNode,
    Literal,
    Term,
    TripleTerm,
    Variable,
    fresh_bnode,
    iri_problem,
    numeric_value,
)
from engine.rdf.value_ids import (
    VALUE_BASE,
    encode_spans,
    is_value,
    value_id,
    value_kinds,
    value_numbers,
    value_term,
    value_terms,
)
from engine.rdf.xml_text import NotXmlText, check_xml_text

__all__ = [
    # GeoSPARQL vocabulary
    "CRS84",
    "EPSG_4326",
    "GEO",
    "GEOF",
    "GEOF_ARITY",
    "UOM",
    "WKT_LITERAL",
    "geof_problem",
    # value IDs
    "VALUE_BASE",
    "encode_spans",
    "is_value",
    "value_id",
    "value_kinds",
    "value_numbers",
    "value_term",
    "value_terms",
    # terms and vocabulary
    "IRI",
    "BNode",
    "Literal",
    "TripleTerm",
    "Variable",
    "Term",
    "XSD",
    "RDF",
    "XSD_STRING",
    "XSD_BOOLEAN",
    "XSD_INTEGER",
    "XSD_DECIMAL",
    "XSD_DOUBLE",
    "XSD_FLOAT",
    "XSD_DATETIME",
    "RDF_LANGSTRING",
    "RDF_TYPE",
    "NUMERIC_DATATYPES",
    "INTEGER_FORM",
    "DECIMAL_FORM",
    "DOUBLE_FORM",
    "KIND_IRI",
    "KIND_BNODE",
    "KIND_LITERAL",
    "KIND_TRIPLE",
    "RDF_REIFIES",
    "RDF_DIRLANGSTRING",
    "numeric_value",
    "iri_problem",
    "fresh_bnode",
    # dictionary
    "TermDictionary",
    "MemoryTermDictionary",
    # N-Triples syntax
    "format_term",
    "c14n_term",
    "parse_term",
    "canonical",
    "escape_string",
    "unescape",
    "parse_statement",
    "parse_lines",
    "statement_lines",
    "NTriplesError",
    # documents
    "parse_rdf",
    "RdfSyntaxError",
    "canonical_nquads",
    "from_oxigraph",
    "SpelledQuads",
    "SpelledTerms",
    "first_after",
    "arrow_positions",
    "canonical_spellings",
    "spelling_kinds",
    "spelling_numbers",
    "split_nquads",
    "string_buffers",
    "serialize_triples",
    "from_rdflib",
    # writing graphs
    "write_graph",
    "write_dataset",
    "DATASET_FORMATS",
    "GRAPH_FORMATS",
    "STANDARD_PREFIXES",
    "NotRdfXml",
    "resolve_iri",
    # media types
    "MediaType",
    "Kind",
    "REGISTRY",
    "MEDIA_TYPE_FORMATS",
    "SUFFIX_FORMATS",
    "RESULT_MEDIA_TYPES",
    "FORMAT_NAMES",
    "base_media_type",
    "offered_for",
    "rdf_format",
    "result_format",
    "guess_format",
    # XML output
    "NotXmlText",
    "check_xml_text",
]
