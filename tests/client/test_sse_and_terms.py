"""The client's own parsing and writing: the event-stream parser and RDF terms, without a server."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import httpx
import pytest

from endpoint.client import IRI, BlankNode, Literal, TripleTerm, Window
from endpoint.client.sse import ServerSentEvent, event_stream_lines, parse_events
from endpoint.client.terms import XSD, ntriples_line, ntriples_lines, python_value
from endpoint.client.writer import item_lines, retry_after, timestamp_ms


def events(text: str) -> list[ServerSentEvent]:
    return list(parse_events(event_stream_lines([text])))


#: characters str.splitlines() splits at that are no line end in an event stream
SEPARATORS = "\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e"


def test_lines_end_at_cr_lf_or_crlf_only_however_the_text_is_cut():
    """Random events whose data hold every separator str.splitlines() knows,
    written with random line ends and read in chunks cut at random places
    (between the CR and the LF of one line end too)."""
    import random

    rng = random.Random(2028)
    alphabet = "ab{}\":" + SEPARATORS + "\u00e9\U0001F30A"
    for _ in range(300):
        sent = [ServerSentEvent("window", "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))),
                                str(k)) for k in range(rng.randint(1, 4))]
        ends = [rng.choice(["\n", "\r", "\r\n"])]
        while len(ends) < 4 * len(sent):  # a CR then a LF would be one line end
            ends.append(rng.choice(["\r", "\r\n"] if ends[-1] == "\r" else ["\n", "\r", "\r\n"]))
        text = "".join(f"id: {e.id}{ends[4 * k]}event: window{ends[4 * k + 1]}data: {e.data}{ends[4 * k + 2]}"
                       f"{ends[4 * k + 3]}" for k, e in enumerate(sent))
        cuts = sorted(rng.sample(range(len(text) + 1), rng.randint(0, min(6, len(text) + 1))))
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        assert list(parse_events(event_stream_lines(chunks))) == sent, (text, chunks)


def test_window_events_pings_and_multi_line_data():
    stream = (": ping\r\n\r\nid: 1\r\nevent: window\r\ndata: {\"a\": 1}\r\n\r\n"
              ": ping - 2024\nid:2\nevent:window\ndata:first\ndata: second\n\n"
              "data: no type\nretry: 1500\n\n")
    assert events(stream) == [
        ServerSentEvent("window", '{"a": 1}', "1"),
        ServerSentEvent("window", "first\nsecond", "2"),
        ServerSentEvent("message", "no type", "2", 1500),
    ]


def test_an_event_cut_short_is_dropped_and_odd_fields_ignored():
    assert events("id: 7\nevent: window\ndata: {}\n") == []  # no blank line: the stream broke
    assert events("id: 3\n\nid: a\0b\nfoo: bar\ndata\n\n") == [ServerSentEvent("message", "", "3")]
    assert events("retry: soon\ndata:  two spaces\n\n") == [ServerSentEvent("message", " two spaces", None)]


def test_a_window_from_its_event_data():
    data = {"query": "q", "sequence": 4, "window": {"start_ms": 0, "end_ms": 1000}, "rows": 1,
            "closed_at_ms": 5.5, "reported_at_ms": 6.25,
            "results": {"head": {"vars": ["s", "n", "missing"]}, "results": {"bindings": [
                {"s": {"type": "uri", "value": "http://ex/s"},
                 "n": {"type": "literal", "value": "3", "datatype": XSD + "integer"}}]}}}
    window = Window.from_json(data)
    assert (window.query, window.sequence, window.start_ms, window.end_ms) == ("q", 4, 0, 1000)
    assert window.variables == ["s", "n", "missing"]
    assert window.rows == [{"s": IRI("http://ex/s"), "n": 3}]
    ask = Window.from_json({**data, "results": {"head": {}, "boolean": True}})
    assert (ask.boolean, ask.rows) == (True, [])


@pytest.mark.parametrize(("binding", "value"), [
    ({"type": "literal", "value": "plain"}, "plain"),
    ({"type": "literal", "value": "x", "datatype": XSD + "string"}, "x"),
    ({"type": "literal", "value": "-12", "datatype": XSD + "long"}, -12),
    ({"type": "literal", "value": "1.50", "datatype": XSD + "decimal"}, Decimal("1.50")),
    ({"type": "literal", "value": "INF", "datatype": XSD + "double"}, float("inf")),
    ({"type": "literal", "value": "1", "datatype": XSD + "boolean"}, True),
    ({"type": "literal", "value": "2024-05-01T12:30:00Z", "datatype": XSD + "dateTime"},
     datetime(2024, 5, 1, 12, 30, tzinfo=UTC)),
    ({"type": "literal", "value": "2024-05-01", "datatype": XSD + "date"}, date(2024, 5, 1)),
    ({"type": "literal", "value": "ten", "datatype": XSD + "integer"}, Literal("ten", XSD + "integer")),
    ({"type": "literal", "value": "P1D", "datatype": XSD + "duration"}, Literal("P1D", XSD + "duration")),
    ({"type": "literal", "value": "hi", "xml:lang": "en"}, Literal("hi", language="en")),
    ({"type": "bnode", "value": "b0"}, BlankNode("b0")),
    ({"type": "triple", "value": {"subject": {"type": "uri", "value": "http://ex/s"},
                                  "predicate": {"type": "uri", "value": "http://ex/p"},
                                  "object": {"type": "literal", "value": "7", "datatype": XSD + "int"}}},
     TripleTerm(IRI("http://ex/s"), IRI("http://ex/p"), 7)),
])
def test_sparql_json_terms_as_python_values(binding, value):
    assert python_value(binding) == value
    assert type(python_value(binding)) is type(value)


def test_triples_as_ntriples():
    assert ntriples_line(("http://ex/s", "http://ex/p", "a \"b\"\n\\")) == \
        '<http://ex/s> <http://ex/p> "a \\"b\\"\\n\\\\" .'
    assert ntriples_line((BlankNode("x"), IRI("http://ex/p"), IRI("http://ex/o with space"))) == \
        "_:x <http://ex/p> <http://ex/o\\u0020with\\u0020space> ."
    assert ntriples_line(("http://ex/s", "http://ex/p", False)).endswith(f'"false"^^<{XSD}boolean> .')
    assert ntriples_line(("http://ex/s", "http://ex/p", float("-inf"))).endswith(f'"-INF"^^<{XSD}double> .')
    assert ntriples_line(("http://ex/s", "http://ex/p", Literal("x", language="de"))).endswith('"x"@de .')
    with pytest.raises(TypeError, match="a subject is an IRI or a blank node"):
        ntriples_line((5, "http://ex/p", 1))
    with pytest.raises(TypeError, match="no RDF literal for a list"):
        ntriples_line(("http://ex/s", "http://ex/p", [1]))
    with pytest.raises(TypeError, match="not one triple"):
        ntriples_lines(("http://ex/s", "http://ex/p", 1))
    with pytest.raises(ValueError, match="not a blank node label"):
        ntriples_line((BlankNode("a b"), "http://ex/p", 1))


def test_items_as_batch_lines():
    assert item_lines("<http://ex/s> <http://ex/p> 1 .\n\n# note\n<http://ex/s> <http://ex/q> 2 .", 5) == [
        "5 <http://ex/s> <http://ex/p> 1 .", "5 <http://ex/s> <http://ex/q> 2 ."]
    for separator in SEPARATORS:  # raw in a literal: not a line end of N-Triples
        statement = f'<http://ex/s> <http://ex/p> "a{separator}b" .'
        assert item_lines(f"{statement}\r\n{statement}\r", 3) == [f"3 {statement}"] * 2
    assert item_lines([], 9) == ["9"]
    assert timestamp_ms(datetime(1970, 1, 1, 0, 0, 1)) == 1000  # naive: UTC, as the server reads it
    with pytest.raises(TypeError):
        timestamp_ms(1.5)


def test_retry_after_in_seconds_or_as_a_date():
    assert retry_after(httpx.Response(429, headers={"Retry-After": "3"})) == 3.0
    assert retry_after(httpx.Response(429)) is None
    assert retry_after(httpx.Response(503, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    assert retry_after(httpx.Response(503, headers={"Retry-After": "soon"})) is None
