"""The graph writers: every syntax read back by independent parsers gives the same graph.

pyoxigraph reads every syntax and keeps lexical forms, so its graph must
equal ours exactly; rdflib reads JSON-LD and RDF/XML too (another
implementation of the trickier syntaxes). Graphs with blank nodes are
compared by rdflib's isomorphism, since a reader renames them.
"""

from __future__ import annotations

import io

import pyoxigraph
import pytest
import rdflib
from rdflib.compare import isomorphic

from engine.rdf import (
    IRI,
    RDF,
    RDF_TYPE,
    XSD,
    BNode,
    Literal,
    NotRdfXml,
    NotXmlText,
    Term,
    from_oxigraph,
    write_graph,
)
from engine.rdf.graph_writers import CHUNK_TRIPLES
from tests.harness.w3c.expected import exact_rdflib, to_rdflib, triples_of

Triple = tuple[Term, Term, Term]

# rdflib's JSON-LD parser warns about rdflib's own deprecated classes
pytestmark = pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")

EX = "http://ex.org/"
EXA = "http://ex.org/a/"
#: overlapping namespaces, one not ending in a delimiter (JSON-LD cannot use it), one
#: named like a scheme the data uses ("urn": a JSON-LD reader would misread urn:... IRIs)
PREFIXES = {"ex": EX, "exa": EXA, "v": EX + "v-", "urn": "http://other.org/", "xsd": XSD, "e2x": EX}

_OX_FORMATS = {"turtle": pyoxigraph.RdfFormat.TURTLE, "nt": pyoxigraph.RdfFormat.N_TRIPLES,
               "json-ld": pyoxigraph.RdfFormat.JSON_LD, "xml": pyoxigraph.RdfFormat.RDF_XML}
FORMATS = tuple(_OX_FORMATS)


def ex(local: str) -> IRI:
    return IRI(EX + local)


def xsd(lexical: str, datatype: str) -> Literal:
    return Literal(lexical, XSD + datatype)


#: IRIs whose local part is plain, escaped, or cannot be a prefixed name at all
SUBJECTS = [
    ex("plain"), ex("a."), ex("-dash"), ex(".dot"), ex("1digit"), ex(""), ex("path/to/x"),
    ex("q?x=1&y=2"), ex("frag#ment"), ex("tilde~(paren)*+,;=!$'@"), ex("pct%20ok"), ex("caf\u00e9"),
    ex("times\u00d7sign"), ex("\u00b7middle-dot-first"), ex("a..b"), ex("colon:inside"),
    IRI(EXA + "b"), IRI(EXA), ex("ab"), IRI(EX + "v-x"),
    IRI("urn:isbn:0451450523"), IRI("ex:looks-prefixed"), IRI("http://elsewhere.org/x"),
]

OBJECTS: list[Term] = [
    ex("o"), IRI("urn:x:y"), IRI("mailto:someone@ex.org"),
    Literal(""), Literal('quote " and \\ backslash'), Literal("line\nbreak\r\nand\ttab"),
    Literal("unicode caf\u00e9 \u2603 \U0001f600"), Literal("xml <tag> & ]]> entity"),
    Literal("hello", lang="en"), Literal("colour", lang="en-gb"),
    xsd("42", "integer"), xsd("042", "integer"), xsd("+5", "integer"), xsd("-0", "integer"),
    xsd("-17", "integer"), xsd("1.5", "decimal"), xsd("1.50", "decimal"), xsd("1.", "decimal"),
    xsd(".5", "decimal"), xsd("-0.0", "decimal"), xsd("1.5E3", "double"), xsd("1.0E0", "double"),
    xsd("1e3", "double"), xsd("INF", "double"), xsd("NaN", "double"), xsd("2.5", "double"),
    xsd("true", "boolean"), xsd("false", "boolean"), xsd("1", "boolean"),
    xsd("2024-01-02T03:04:05Z", "dateTime"), xsd("2024-01-02", "date"), xsd("1.5", "float"),
    xsd("not a number", "integer"), Literal("typed", EX + "dt"), Literal("typed", "urn:dt:x"),
    Literal("x" * 100_000 + "\u00e9"),
]

PREDICATES = [ex("p"), IRI(EXA + "q"), IRI(EX + "v-r"), IRI("http://other.org/ns#s"), IRI(RDF + "value")]


def tricky_graph() -> list[Triple]:
    """Every subject with several predicates (runs of ``;`` and ``,``), every object
    under a few predicates, rdf:type with IRI and literal objects; no blank nodes."""
    triples: list[Triple] = []
    for i, s in enumerate(SUBJECTS):
        triples.append((s, IRI(RDF_TYPE), ex("Class")))
        for j, o in enumerate(OBJECTS):
            if (i + j) % 4 == 0:
                triples.append((s, PREDICATES[(i + j) % len(PREDICATES)], o))
                triples.append((s, PREDICATES[(i + j + 1) % len(PREDICATES)], o))
        triples.append((s, ex("p"), ex("o2")))  # the predicate again, later in the run
    triples.append((ex("odd"), IRI(RDF_TYPE), IRI("urn:class:C")))
    triples.append((ex("odd"), IRI(RDF_TYPE), Literal("a literal type")))
    triples.append((ex("odd"), ex("p"), OBJECTS[-1]))
    triples.append((ex("odd"), IRI("urn:p:t"), Literal("a predicate JSON-LD would misread under 'urn'")))
    return triples


def written(format: str, triples: list[Triple], prefixes: dict[str, str] | None = PREFIXES) -> bytes:
    return b"".join(write_graph(format, triples, prefixes))


def read_oxigraph(format: str, data: bytes) -> set[Triple]:
    return {(from_oxigraph(s), from_oxigraph(p), from_oxigraph(o))
            for s, p, o, _ in pyoxigraph.parse(data, _OX_FORMATS[format])}


def read_rdflib(format: str, data: bytes) -> rdflib.Graph:
    with exact_rdflib():
        return rdflib.Graph().parse(io.BytesIO(data), format=format)


def rdflib_graph(triples: list[Triple]) -> rdflib.Graph:
    graph = rdflib.Graph()
    for s, p, o in triples:
        graph.add((to_rdflib(s), to_rdflib(p), to_rdflib(o)))
    return graph


@pytest.mark.parametrize("format", FORMATS)
def test_tricky_graph_reads_back_exactly(format):
    triples = tricky_graph()
    assert read_oxigraph(format, written(format, triples)) == set(triples)


@pytest.mark.parametrize("format", ["json-ld", "xml"])
def test_tricky_graph_reads_back_exactly_in_rdflib(format):
    triples = tricky_graph()
    assert set(triples_of(read_rdflib(format, written(format, triples)))) == set(triples)


@pytest.mark.parametrize("format", FORMATS)
def test_without_prefixes_and_with_the_standard_ones(format):
    triples = tricky_graph()
    assert read_oxigraph(format, written(format, triples, {})) == set(triples)
    assert read_oxigraph(format, written(format, triples, None)) == set(triples)


def test_control_characters_outside_xml_read_back_in_the_other_syntaxes():
    triples = [(ex("s"), ex("p"), Literal("bell \x07 and \x01 and \x7f"))]
    for format in ("turtle", "nt", "json-ld"):
        assert read_oxigraph(format, written(format, triples)) == set(triples)


#: blank-node labels of every shape: Oxigraph's hex, our fresh ones, and some only
#: another source could give (N-Triples writes the store's own, so not those)
LABELS = ["b1", "0a1b2c", "with-dash", "under_score", "dot.inside", "fa1b2n7", "x_abc", "b_0a1b2c"]
ODD_LABELS = ["caf\u00e9 space", "<angle>"]


def blank_graph(labels: list[str]) -> list[Triple]:
    """Blank nodes as subjects and objects."""
    nodes = [BNode(label) for label in labels]
    triples: list[Triple] = []
    for i, node in enumerate(nodes):
        triples.append((node, ex("p"), nodes[(i + 1) % len(nodes)]))
        triples.append((node, ex("name"), Literal(f"node {i}")))
        triples.append((ex(f"r{i}"), ex("q"), node))
    triples.append((nodes[0], IRI(RDF_TYPE), ex("Class")))
    return triples


@pytest.mark.parametrize("format", FORMATS)
def test_blank_nodes_read_back_as_an_isomorphic_graph(format):
    triples = blank_graph(LABELS if format == "nt" else LABELS + ODD_LABELS)
    data = written(format, triples)
    assert len(read_oxigraph(format, data)) == len(triples)
    assert isomorphic(read_rdflib(format, data), rdflib_graph(triples))


def test_distinct_labels_stay_distinct():
    """Labels a syntax cannot carry are renamed, never onto another node's label."""
    triples = blank_graph(LABELS + ODD_LABELS)
    for format in ("turtle", "json-ld", "xml"):
        read = read_oxigraph(format, written(format, triples))
        assert len({s for s, _, _ in read if isinstance(s, BNode)}) == len(LABELS + ODD_LABELS)


@pytest.mark.parametrize("format", FORMATS)
def test_a_large_graph_streams_in_chunks_and_reads_back(format):
    """Subjects whose runs cross chunk boundaries; the first chunk comes
    before the writer has read much more than one batch."""
    triples = [(ex(f"s{i // 7}"), ex(f"p{i % 3}"), Literal(f"v{i}")) for i in range(3 * CHUNK_TRIPLES + 5)]
    consumed = 0

    def source():
        nonlocal consumed
        for triple in triples:
            consumed += 1
            yield triple

    chunks = write_graph(format, source(), PREFIXES)
    first = next(chunks)
    assert first and consumed <= CHUNK_TRIPLES + 1
    rest = list(chunks)
    assert len(rest) >= 3
    assert read_oxigraph(format, first + b"".join(rest)) == set(triples)


@pytest.mark.parametrize("format", FORMATS)
def test_an_empty_graph_is_a_valid_document(format):
    assert read_oxigraph(format, written(format, [])) == set()


def test_turtle_uses_the_given_prefixes_and_short_forms():
    triples = tricky_graph()
    text = written("turtle", triples).decode()
    assert "@prefix ex: <http://ex.org/> ." in text and "@prefix exa: <http://ex.org/a/> ." in text
    assert "ns1:" not in text
    assert "ex:plain a ex:Class" in text  # rdf:type as "a", then ";" for the run
    assert "exa:b " in text and "exa: " in text  # the longest namespace wins
    assert "ex:a\\. " in text and "ex:\\-dash " in text and "ex:path\\/to\\/x " in text
    assert "ex:pct%20ok " in text and "ex: " in text
    assert "<http://ex.org/times\u00d7sign>" in text  # no prefixed name can carry it
    assert " 42" in text and '"042"^^xsd:integer' in text and '"+5"^^xsd:integer' in text
    assert " true" in text and '"1"^^xsd:boolean' in text
    assert " 1.5E3" in text and '"1e3"^^xsd:double' in text and '"2.5"^^xsd:double' in text
    assert "exa:q 1.5 ;" in text and '"1.50"^^xsd:decimal' in text and '"1."^^xsd:decimal' in text
    assert '"hello"@en' in text


def test_json_ld_compacts_with_the_prefixes_it_can_use():
    text = written("json-ld", tricky_graph()).decode()
    context = text[:text.index("\n")]
    assert '"ex": "http://ex.org/"' in context and '"v"' not in context  # v- ends in no delimiter
    assert '"@id": "ex:plain"' in text and '"@type": ["ex:Class"' in text
    assert '{"@context": null, "@id": "urn:isbn:0451450523"' in text  # "urn" would misread it


def test_rdf_xml_declares_the_prefixes_and_generates_the_rest():
    text = written("xml", tricky_graph()).decode()
    assert 'xmlns:ex="http://ex.org/"' in text and "<ex:p>" in text and "<exa:q " in text
    assert 'xmlns:ns0="' in text  # predicates no declared namespace fits


def test_rdf_xml_keeps_rdf_and_drops_names_xml_reserves():
    triples = [(ex("s"), IRI(RDF_TYPE), ex("C")), (ex("s"), ex("p"), Literal("x"))]
    prefixes = {"rdf": "http://not-rdf.org/", "xmlish": EX, "": EX + "default/", "ex": EX}
    data = written("xml", triples, prefixes)
    assert read_oxigraph("xml", data) == set(triples)
    assert b"xmlns:xmlish" not in data


@pytest.mark.parametrize("predicate", [EX + "ends/", RDF + "li", RDF + "about", "urn:x:1"])
def test_rdf_xml_refuses_a_predicate_it_cannot_write(predicate):
    with pytest.raises(NotRdfXml):
        written("xml", [(ex("s"), IRI(predicate), Literal("x"))])


def test_rdf_xml_refuses_characters_xml_cannot_carry_in_the_first_chunk():
    chunks = write_graph("xml", [(ex("s"), ex("p"), Literal("a\x01b"))], PREFIXES)
    with pytest.raises(NotXmlText, match="U\\+0001"):
        next(chunks)


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="cannot write"):
        write_graph("n3-unknown", [], {})
