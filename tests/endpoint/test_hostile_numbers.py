"""Every header and parameter that takes a number, fuzzed with generated
hostile values through a real server: an accepted value or a 400 that says
what was wrong, never a 500. ``str.isdigit()`` is true for superscripts and
other scripts' digits, which ``int()`` refuses, and Python refuses to convert
more than 4,300 digits: checking one and calling the other answered 500."""

from __future__ import annotations

import random
import sys
import unicodedata
from collections.abc import Iterator
from urllib.parse import quote, quote_from_bytes

import httpx
import pytest

from tests.endpoint.raw_http import RawConnection, Response, request_bytes
from tests.endpoint.rivulet_process import RivuletProcess

EX = "http://example.org/"
BATCH = b"application/x-timestamped-ntriples"
H2C_OFFER = [(b"Connection", b"Upgrade, HTTP2-Settings"), (b"Upgrade", b"h2c"),
             (b"HTTP2-Settings", b"AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA")]
OK = (200, 201, 202, 204)
CLOSE = (b"Connection", b"close")


def unicode_numbers(rng: random.Random, per_category: int) -> list[str]:
    """Characters outside ASCII that Python takes for digits or numbers, from
    every category of them (Nd decimal digits, No other numbers such as
    superscripts, Nl letter numbers such as Roman numerals)."""
    found: dict[str, list[str]] = {"Nd": [], "No": [], "Nl": []}
    for code in range(0x80, sys.maxunicode + 1):
        char = chr(code)
        category = unicodedata.category(char)
        if category in found:
            found[category].append(char)
    chosen = ["\u00b2", "\u0663", "\uff11"]  # superscript two, Arabic-Indic three, fullwidth one
    for chars in found.values():
        chosen += rng.sample(chars, per_category)
    return chosen


def hostile_values(seed: int) -> list[bytes]:
    """Header or parameter values, as bytes on the wire."""
    rng = random.Random(seed)
    texts = []
    for char in unicode_numbers(rng, 4):
        texts += [char, "1" + char, char + "0", "-" + char, char * 3]
    texts += ["9" * 4301, "1" * 5000, "-" + "9" * 4400, "9" * 19, "9" * 25, "0" * 30,
              "+5", "--5", "- 5", "5 5", "5.0", "1e3", "0x10", "1_000", "NaN", "", " ", "\t",
              "\x00", "5\x00", "\x7f"]
    values = [text.encode("utf-8") for text in texts]
    values += [b"\xb2", b"\xff", b"1\x80", b"\xc2", b"\xe2\x80", b"9" * 4301 + b"\xb2"]
    return values


@pytest.fixture(scope="module")
def server() -> Iterator[RivuletProcess]:
    process = RivuletProcess()
    url = process.url
    assert httpx.put(f"{url}/streams/s", json={"iri": f"{EX}s"}).status_code == 201
    registration = f"REGISTER QUERY q AS SELECT * FROM STREAM <{EX}s> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}"
    assert httpx.post(f"{url}/queries", content=registration,
                      headers={"Content-Type": "application/sparql-query"}).status_code == 201
    yield process
    process.stop()


def answer(url: str, data: bytes) -> Response:
    """The status and, unless it is an event stream, the body of one request."""
    with RawConnection(url, timeout=20) as connection:
        connection.send(data)
        status, headers = connection.head()
        if headers.get("content-type", "").startswith("text/event-stream"):
            return Response(status, headers, b"")
        return Response(status, headers, connection.body(headers))


def check(response: Response, allowed: tuple[int, ...], what: str) -> None:
    assert response.status in allowed or response.status == 400, (what, response)
    if response.status == 400:
        assert len(response.body.strip()) > 10, (what, response)  # says what was wrong


@pytest.fixture
def clean_log(server) -> Iterator[None]:
    start = len(server.stderr_lines)
    yield
    log = "".join(server.stderr_lines[start:])
    assert "Traceback" not in log and "ERROR" not in log, log[:3000]


@pytest.mark.parametrize("where", ["header", "parameter"])
def test_last_event_id(server, clean_log, where):
    for value in hostile_values(1):
        if where == "header":
            data = request_bytes("GET", "/queries/q/events", [(b"Last-Event-ID", value), CLOSE])
        else:
            data = request_bytes("GET", "/queries/q/events?last_event_id=" + quote_from_bytes(value),
                                 [CLOSE])
        response = answer(server.url, data)
        check(response, (200,), value[:40])
        if response.status == 400 and where == "parameter":
            assert b"Last-Event-ID" in response.body


def test_service_depth(server, clean_log):
    target = "/sparql?query=" + quote("ASK {}")
    for value in hostile_values(2):
        response = answer(server.url, request_bytes("GET", target, [(b"X-Rivulet-Service-Depth", value),
                                                                    CLOSE]))
        check(response, (200,), value[:40])


@pytest.mark.parametrize("where", ["header", "parameter", "batch"])
def test_stream_timestamps(server, clean_log, where):
    for value in hostile_values(3):
        if where == "header":
            data = request_bytes("POST", "/streams/s", [(b"X-Timestamp", value), CLOSE])
        elif where == "parameter":
            data = request_bytes("POST", "/streams/s?timestamp=" + quote_from_bytes(value),
                                 [CLOSE])
        else:
            body = value + f" <{EX}a> <{EX}p> <{EX}o> .\n".encode()
            data = request_bytes("POST", "/streams/s", [(b"Content-Type", BATCH), CLOSE], body)
        check(answer(server.url, data), (*OK, 409), value[:40])  # 409: older than the stream's last item


@pytest.mark.parametrize("offer", [False, True], ids=["httptools", "h2c-offer"])
def test_content_length(server, clean_log, offer):
    for value in hostile_values(4):
        if value.strip().isdigit() and len(value.strip()) < 19:
            continue  # a plain length: the server would wait for that many bytes
        headers = [(b"Content-Type", b"application/sparql-update"), (b"Content-Length", value),
                   *(H2C_OFFER if offer else [CLOSE])]
        # 204: a length of 0 however written (an empty update)
        response = answer(server.url, request_bytes("POST", "/sparql", headers, length=False))
        check(response, (204, 413), value[:40])


@pytest.mark.parametrize("unit", ["PT{}S", "PT{}M", "PT{}H", "P{}D", "{}ms", "{}s"])
def test_window_sizes(server, clean_log, unit):
    for digits in ("9" * 16, "9" * 4301, "1" * 5000):
        registration = (f"REGISTER QUERY big AS SELECT * FROM STREAM <{EX}s> [RANGE {unit.format(digits)} "
                        "STEP 1s] WHERE { ?s ?p ?o }")
        headers = [(b"Content-Type", b"application/sparql-query"), CLOSE]
        response = answer(server.url, request_bytes("POST", "/queries", headers, registration.encode()))
        assert response.status == 400 and b"at most" in response.body, (unit, response)


def test_numbers_inside_query_text(server, clean_log):
    """Years of a dateTime and ``$N`` in REPLACE went through int() too."""
    rng = random.Random(5)
    xsd = "http://www.w3.org/2001/XMLSchema#"
    queries = []
    for year in ("9" * 4001, "1" * 5000, "-" + "9" * 4400, "2024"):
        queries += [f'SELECT (YEAR("{year}-01-01T00:00:00"^^<{xsd}dateTime>) AS ?x) {{}}',
                    f'SELECT (<{xsd}dateTime>("{year}-01-01T00:00:00Z") AS ?x) {{}}',
                    f'SELECT ("{year}-01-01"^^<{xsd}date> < "2000-01-01"^^<{xsd}date> AS ?x) {{}}']
    for char in unicode_numbers(rng, 4):
        queries += [f'SELECT (REPLACE("abc", "(b)", "${char}") AS ?x) {{}}',
                    f'SELECT (REPLACE("abc", "(b)", "$1{char}") AS ?x) {{}}']
    for query in queries:
        response = answer(server.url, request_bytes("GET", "/sparql?query=" + quote(query), [
            (b"Accept", b"application/sparql-results+json"), CLOSE]))
        assert response.status == 200, (query[:80], response)
