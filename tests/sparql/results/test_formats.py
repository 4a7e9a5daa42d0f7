"""Round trips and exact output of the SPARQL result format writers/readers."""

from __future__ import annotations

import orjson
import pytest

from engine.rdf import IRI, XSD, BNode, Literal
from engine.sparql.results import (
    MEDIA_TYPES,
    format_for_media_type,
    read_select,
    write_boolean,
    write_select,
)

VARS = ["s", "o", "x"]
ROWS = [
    [IRI("http://example.org/s1"), Literal("plain"), None],
    [IRI("http://example.org/s2"), Literal("chat", lang="fr"), Literal("42", XSD + "integer")],
    [BNode("b0"), Literal('a "quoted", \tmulti\r\nline & <tag> \\ text'), IRI("http://ex.org/ü?a=1&b")],
    [None, None, None],
]


def _write(fmt: str, variables: list[str], rows: list) -> bytes:
    return b"".join(write_select(fmt, variables, rows))


@pytest.mark.parametrize("fmt", ["json", "xml", "tsv"])
def test_select_round_trip_keeps_terms(fmt: str) -> None:
    assert read_select(fmt, _write(fmt, VARS, ROWS)) == (VARS, ROWS)


@pytest.mark.parametrize("fmt", ["json", "xml", "csv", "tsv"])
def test_boolean_round_trip(fmt: str) -> None:
    assert read_select(fmt, write_boolean(fmt, True)) is True
    assert read_select(fmt, write_boolean(fmt, False)) is False


@pytest.mark.parametrize("fmt", ["json", "xml", "csv", "tsv"])
def test_empty_result(fmt: str) -> None:
    assert read_select(fmt, _write(fmt, ["a"], [])) == (["a"], [])


@pytest.mark.parametrize("fmt", ["json", "xml", "csv", "tsv"])
def test_writer_streams_in_chunks(fmt: str) -> None:
    rows = ([Literal(str(i))] for i in range(5000))
    chunks = list(write_select(fmt, ["n"], rows))
    assert len(chunks) > 2
    variables, parsed = read_select(fmt, b"".join(chunks))
    assert variables == ["n"] and len(parsed) == 5000 and parsed[-1] == [Literal("4999")]


def test_json_layout_follows_the_spec() -> None:
    doc = orjson.loads(_write("json", VARS, ROWS[:2]))
    assert doc["head"] == {"vars": VARS}
    assert doc["results"]["bindings"][0] == {
        "s": {"type": "uri", "value": "http://example.org/s1"},
        "o": {"type": "literal", "value": "plain"},
    }
    assert doc["results"]["bindings"][1]["o"] == {"type": "literal", "value": "chat", "xml:lang": "fr"}
    assert doc["results"]["bindings"][1]["x"]["datatype"] == XSD + "integer"
    assert orjson.loads(write_boolean("json", True)) == {"head": {}, "boolean": True}


def test_json_reader_accepts_legacy_typed_literal() -> None:
    data = (
        b'{"head":{"vars":["v"]},"results":{"bindings":[{"v":{"type":"typed-literal",'
        b'"datatype":"http://www.w3.org/2001/XMLSchema#integer","value":"1"}}]}}'
    )
    assert read_select("json", data) == (["v"], [[Literal("1", XSD + "integer")]])


def test_xml_layout_and_escaping() -> None:
    text = _write("xml", VARS, ROWS).decode()
    assert text.startswith('<?xml version="1.0"')
    assert '<sparql xmlns="http://www.w3.org/2005/sparql-results#">' in text
    assert '<variable name="s"/>' in text
    assert '<literal xml:lang="fr">chat</literal>' in text
    assert "&amp; &lt;tag&gt;" in text and "&#13;" in text
    assert "<bnode>b0</bnode>" in text


def test_csv_quotes_per_rfc4180_with_crlf() -> None:
    text = _write("csv", VARS, ROWS).decode()
    lines = text.split("\r\n")
    assert lines[0] == "s,o,x"
    assert lines[1] == "http://example.org/s1,plain,"
    assert lines[2] == "http://example.org/s2,chat,42"
    assert lines[3] == '_:b0,"a ""quoted"", \tmulti'
    assert text.endswith(",,\r\n")


def test_csv_reader_gives_strings() -> None:
    variables, rows = read_select("csv", _write("csv", VARS, ROWS))
    assert variables == VARS
    assert rows[2] == [BNode("b0"), Literal(ROWS[2][1].lexical), Literal("http://ex.org/ü?a=1&b")]
    assert rows[3] == [None, None, None]


def test_tsv_layout() -> None:
    text = _write("tsv", VARS, ROWS).decode()
    lines = text.split("\n")
    assert lines[0] == "?s\t?o\t?x"
    assert lines[1] == "<http://example.org/s1>\t\"plain\"\t"
    assert lines[2] == '<http://example.org/s2>\t"chat"@fr\t"42"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert lines[3].startswith('_:b0\t"a \\"quoted\\", \\tmulti\\r\\nline')


def test_tsv_reader_accepts_turtle_shorthands() -> None:
    data = b"?a\t?b\n4\t-2.5\n1.0e6\ttrue\n'x'@en-GB\t\"\"\"long\"\"\"\n"
    assert read_select("tsv", data) == (
        ["a", "b"],
        [
            [Literal("4", XSD + "integer"), Literal("-2.5", XSD + "decimal")],
            [Literal("1.0e6", XSD + "double"), Literal("true", XSD + "boolean")],
            [Literal("x", lang="en-GB"), Literal("long")],
        ],
    )


def test_tsv_single_variable_unbound_row_is_an_empty_line() -> None:
    rows = [[None], [Literal("v")]]
    assert read_select("tsv", _write("tsv", ["a"], rows)) == (["a"], rows)


def test_media_types() -> None:
    assert MEDIA_TYPES["json"] == "application/sparql-results+json"
    assert format_for_media_type("application/sparql-results+xml; charset=utf-8") == "xml"
    assert format_for_media_type("text/tab-separated-values") == "tsv"
    assert format_for_media_type("text/html") is None


def test_unknown_format_is_rejected() -> None:
    with pytest.raises(ValueError):
        write_boolean("yaml", True)
