"""The quick lane (endpoint/quick_lane.py): small queries answered by the
HTTP protocol itself give the very bytes the ASGI application gives, keep
their order among pipelined requests, and are counted like any other.

Two real servers on the same store: one with the lane, one with uvicorn's
access log on (which closes it), compared byte for byte on generated
requests (GET, POSTed forms and query bodies, small and gzipped answers,
HTTP/1.0 and ``Connection: close``)."""

from __future__ import annotations

import gzip
import json
import random
import re
from urllib.parse import quote, urlencode

import pytest

from endpoint.settings import Settings
from engine.api import Store
from tests.endpoint.conftest import Server
from tests.endpoint.raw_http import RawConnection, request_bytes

EX = "http://example.org/people/"
PEOPLE = 60
JSON = (b"Accept", b"application/sparql-results+json")
SHAPES = [
    "SELECT ?name WHERE {{ <{who}> <{ex}name> ?name }}",
    "SELECT ?friend ?name WHERE {{ <{who}> <{ex}knows> ?friend . ?friend <{ex}name> ?name }}",
    "SELECT (COUNT(?f) AS ?n) WHERE {{ ?f <{ex}knows> <{who}> }}",
    "ASK {{ <{who}> <{ex}knows> <{ex}p0> }}",
]


def _store() -> Store:
    rng = random.Random(11)
    store = Store()
    lines = []
    for i in range(PEOPLE):
        lines.append(f'<{EX}p{i}> <{EX}name> "person {i} {"x" * rng.randrange(40)}" .')
        for j in rng.sample(range(PEOPLE), rng.randrange(0 if i % 7 else 30, 8 if i % 7 else 45)):
            lines.append(f"<{EX}p{i}> <{EX}knows> <{EX}p{j}> .")
    store.update("INSERT DATA { " + "\n".join(lines) + " }")
    return store


@pytest.fixture
def servers():
    """(the server with the lane, the same store served with the lane closed
    as ``--access-log`` closes it)"""
    store = _store()
    started = [Server(store, Settings()), Server(store, Settings(), quick_lane=False)]
    for server in started:
        server.start()
    yield started
    for server in started:
        server.server.should_exit = True
    for server in started:
        server.join()


def _requests(rng: random.Random, count: int) -> list[bytes]:
    """Generated requests of the shapes: GET, POSTed form, POSTed query; some
    asking for gzip, some HTTP/1.0 or closing (sent last on their connection)."""
    made = []
    for _ in range(count):
        text = rng.choice(SHAPES).format(who=f"{EX}p{rng.randrange(PEOPLE + 3)}", ex=EX)
        headers = [JSON] + ([(b"Accept-Encoding", b"gzip")] if rng.random() < 0.5 else [])
        way = rng.randrange(3)
        if way == 0:
            made.append(request_bytes("GET", "/sparql?query=" + quote(text), headers))
        elif way == 1:
            form = (b"Content-Type", b"application/x-www-form-urlencoded")
            body = urlencode({"query": text}).encode()
            made.append(request_bytes("POST", "/sparql", [*headers, form], body))
        else:
            query = (b"Content-Type", b"application/sparql-query")
            made.append(request_bytes("POST", "/sparql", [*headers, query], text.encode()))
    return made


def _without_date(head: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in head.items() if k != "date"}


def _answers(url: str, requests: list[bytes], pipelined: bool) -> list[tuple[int, dict, bytes]]:
    with RawConnection(url) as connection:
        if pipelined:
            connection.send(b"".join(requests))
            return [(r.status, _without_date(r.headers), r.body) for r in
                    (connection.response() for _ in requests)]
        answers = []
        for raw in requests:
            connection.send(raw)
            r = connection.response()
            answers.append((r.status, _without_date(r.headers), r.body))
        return answers


def _asgi_calls(server: Server) -> list[str]:
    """Count the requests that reach the ASGI application (not the lane)."""
    app = server.server.config.loaded_app.app
    calls: list[str] = []
    asgi = app._answer

    async def counted(scope, receive, send):
        calls.append(scope["path"])
        await asgi(scope, receive, send)

    app._answer = counted
    return calls


@pytest.mark.parametrize("pipelined", [False, True], ids=["one-by-one", "pipelined"])
def test_the_lane_answers_as_the_application_does(servers, pipelined):
    lane, whole = servers
    rng = random.Random(5)
    requests = _requests(rng, 120)
    _answers(lane.url, requests, False)  # every shape seen and timed once: on the lane from now
    calls = _asgi_calls(lane)
    got = _answers(lane.url, requests, pipelined)
    expected = _answers(whole.url, requests, pipelined)
    assert got == expected
    assert len(calls) < len(requests) // 4, "most repeated shapes should be answered on the lane"
    gzipped = [body for status, head, body in got if head.get("content-encoding") == "gzip"]
    assert gzipped and all(json.loads(gzip.decompress(b)) for b in gzipped)
    assert any(len(body) < 1024 and "accept-encoding" not in head.get("vary", "").lower()
               for _, head, body in got)


def test_closing_and_http_1_0_requests_are_answered_and_closed(servers):
    lane, whole = servers
    text = SHAPES[0].format(who=f"{EX}p3", ex=EX)
    get = request_bytes("GET", "/sparql?query=" + quote(text), [JSON])
    _answers(lane.url, [get, get], False)
    calls = _asgi_calls(lane)
    for raw in (get.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"),
                get.replace(b"HTTP/1.1", b"HTTP/1.0")):
        answers = []
        for server in (lane, whole):
            with RawConnection(server.url, timeout=10) as connection:
                connection.send(raw)
                r = connection.response()
                answers.append((r.status, _without_date(r.headers), r.body))
                assert connection.closed_by_server()
        assert answers[0] == answers[1] and answers[0][0] == 200
        assert answers[0][1]["connection"] == "close"
    assert calls == []


def test_pipelined_reads_see_the_update_before_them(servers):
    lane, _ = servers
    ask = SHAPES[3].format(who=f"{EX}p1", ex=EX).replace("p0", "nobody")
    get = request_bytes("GET", "/sparql?query=" + quote(ask), [JSON])
    _answers(lane.url, [get, get], False)
    update = f"INSERT DATA {{ <{EX}p1> <{EX}knows> <{EX}nobody> }}".encode()
    post = request_bytes("POST", "/sparql", [(b"Content-Type", b"application/sparql-update")], update)
    answers = _answers(lane.url, [get, get, post, get, get], True)
    assert [a[0] for a in answers] == [200, 200, 204, 200, 200]
    asked = [json.loads(body)["boolean"] for i, (_, _, body) in enumerate(answers) if i != 2]
    assert asked == [False, False, True, True]


def test_a_body_in_pieces_is_answered_once_whole(servers):
    lane, whole = servers
    text = SHAPES[1].format(who=f"{EX}p7", ex=EX).encode()
    raw = request_bytes("POST", "/sparql", [JSON, (b"Content-Type", b"application/sparql-query")], text)
    expected = _answers(whole.url, [raw], False)
    _answers(lane.url, [raw, raw], False)
    calls = _asgi_calls(lane)
    with RawConnection(lane.url) as connection:
        for start in range(0, len(raw), 37):
            connection.send(raw[start:start + 37])
        r = connection.response()
    assert [(r.status, _without_date(r.headers), r.body)] == expected
    assert calls == []


def test_lane_answers_are_counted(servers):
    lane, _ = servers
    text = SHAPES[2].format(who=f"{EX}p2", ex=EX)
    get = request_bytes("GET", "/sparql?query=" + quote(text), [JSON])

    def counted() -> float:
        r = _answers(lane.url, [request_bytes("GET", "/metrics", [])], False)[0]
        found = re.search(rb'rivulet_requests_total\{kind="query",outcome="ok"\} (\S+)', r[2])
        return float(found.group(1)) if found else 0.0

    _answers(lane.url, [get, get], False)
    before = counted()
    calls = _asgi_calls(lane)
    _answers(lane.url, [get] * 25, False)
    assert calls == []
    assert counted() == before + 25


HOSTILE = [
    (b"Accept", b"application/sparql-results+xml"), (b"Accept", b"text/csv;q=0.5, */*;q=0.1"),
    (b"Accept", b"image/png"), (b"Accept", b"application/sparql-results+json;q=0"),
    (b"Accept", b""), (b"Accept-Encoding", b"gzip;q=0"), (b"Accept-Encoding", b"x-gzip, *;q=0"),
    (b"Accept-Encoding", b"br, GZIP;q=0.2"), (b"X-Forwarded-Proto", b"https"),
    (b"X-Forwarded-For", b"10.0.0.1"), (b"Connection", b"keep-alive"), (b"Cookie", b"a=b; c"),
    (b"Content-Type", b"application/sparql-query; charset=utf-8"), (b"Host", b"evil.example"),
    (b"Content-Type", b"APPLICATION/SPARQL-QUERY"), (b"Content-Type", b"text/plain"),
    (b"X-Padding", b"\xff\xfe latin-1 bytes"), (b"Rivulet-Log-Position", b"99999999999999999999"),
]


def test_hostile_headers_get_the_answers_of_the_application(servers):
    """Generated requests with headers no client library would send (odd
    Accept and Accept-Encoding values, proxy headers, a second Host, media
    types in other cases, bytes that are not UTF-8, query strings with a
    timeout or a format): the lane answers each as the application does,
    or leaves it to the application."""
    lane, whole = servers
    rng = random.Random(23)
    requests = []
    for raw in _requests(rng, 150):
        head, body = raw.split(b"\r\n\r\n", 1)
        extra = rng.sample(HOSTILE, rng.randrange(1, 4))
        if any(name == b"Accept" for name, _ in extra) and rng.random() < 0.7:  # instead of the JSON one
            head = b"\r\n".join(line for line in head.split(b"\r\n") if not line.startswith(b"Accept:"))
        if b"POST" not in head[:4]:
            extra = [h for h in extra if h[0] != b"Content-Type"]
            if rng.random() < 0.3:
                parameter = rng.choice([b"&timeout=5", b"&format=json", b"&format=xml", b"&query="])
                head = head.replace(b" HTTP/1.1", parameter + b" HTTP/1.1", 1)
        elif any(h[0] == b"Content-Type" for h in extra):  # the generated media type replaces the request's
            head = b"\r\n".join(line for line in head.split(b"\r\n") if not line.startswith(b"Content-Type"))
        requests.append(head + b"".join(b"\r\n" + name + b": " + value for name, value in extra)
                        + b"\r\n\r\n" + body)
    _answers(lane.url, requests, False)  # shapes seen, timed
    calls = _asgi_calls(lane)
    got = _answers(lane.url, requests, False)
    expected = _answers(whole.url, requests, False)
    assert 0 < len(calls) < len(requests) // 2, "the lane answers most, and leaves some to the application"
    assert [a[0] for a in got] == [a[0] for a in expected]
    assert got == expected
    assert {a[0] for a in got} >= {200, 400, 406}  # the generated headers reach refusals as well as answers
