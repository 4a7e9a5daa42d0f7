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
