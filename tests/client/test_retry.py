"""Answers Rivulet itself never gives, from a stand-in server: what a proxy in front of it may say.

The writer waits out 429 and 503 answers that carry ``Retry-After``, and
only those: Rivulet's own refusals of a write are final (a malformed or
late batch). The stand-in on a real uvicorn refuses each batch the first
time with the status and ``Retry-After`` a test chooses, takes it the
second time, and records what it took, so the test sees that every batch
arrived exactly once and in order. Likewise the window reader: an event
stream answered 503 (a restarting server behind a proxy) is tried again,
and each reconnection names the last window yielded.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from endpoint.client import Client, Reconnect, RivuletError


class Refusing:
    """Answers ``status`` (with ``headers``) to the first try of each batch, 202 to the second."""

    def __init__(self, status: int, headers: dict[str, str]) -> None:
        self.status = status
        self.headers = headers
        self.taken: list[str] = []
        self.refused = 0
        self._last_refused: bytes | None = None

    def routes(self) -> list[Route]:
        return [Route("/streams/{name}", self.answer, methods=["POST"])]

    async def answer(self, request: Request) -> Response:
        body = await request.body()
        if body != self._last_refused:
            self._last_refused = body
            self.refused += 1
            return PlainTextResponse("busy, come back later\n", status_code=self.status, headers=self.headers)
        self.taken.append(body.decode())
        return JSONResponse({"stream": "s", "items": body.count(b"\n"), "watermark_ms": 0}, status_code=202)


@pytest.fixture
def stand_in():
    servers: list[uvicorn.Server] = []

    def start(routes: list[Route]) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        app = Starlette(routes=routes)
        server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="off"))
        threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.002)
        assert server.started, "the stand-in server did not start"
        servers.append(server)
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    yield start
    for server in servers:
        server.should_exit = True


@pytest.mark.parametrize("status", [429, 503])
def test_a_batch_refused_with_retry_after_is_sent_again_once(stand_in, status):
    handler = Refusing(status, {"Retry-After": "0"})
    with Client(stand_in(handler.routes())) as client, client.stream_writer("s", batch_size=2) as writer:
        for i in range(6):
            writer.send(f"<http://ex/s> <http://ex/p> \"{i}\" .", 1000 + i)
    assert handler.refused == 3
    assert handler.taken == [f"{1000 + i} <http://ex/s> <http://ex/p> \"{i}\" .\n"
                             f"{1001 + i} <http://ex/s> <http://ex/p> \"{i + 1}\" .\n" for i in (0, 2, 4)]
    assert writer.sent_batches == 3


def test_a_503_without_retry_after_is_an_error(stand_in):
    handler = Refusing(503, {})
    with Client(stand_in(handler.routes())) as client:
        writer = client.stream_writer("s")
        writer.send("<http://ex/s> <http://ex/p> \"1\" .", 1000)
        with pytest.raises(RivuletError) as raised:
            writer.close()
    assert (raised.value.status, raised.value.message) == (503, "busy, come back later")
    assert handler.taken == []


def test_retries_are_bounded(stand_in):
    handler = Refusing(429, {"Retry-After": "0"})
    with Client(stand_in(handler.routes())) as client:
        writer = client.stream_writer("s", retries=0)
        writer.send("<http://ex/s> <http://ex/p> \"1\" .", 1000)
        with pytest.raises(RivuletError) as raised:
            writer.close()
    assert raised.value.status == 429
    assert handler.refused == 1


class Events:
    """A query's event stream that fails once with 503, then sends windows 1 and 2
    and ends, then window 3 and ends, then finds the query gone (404)."""

    def __init__(self) -> None:
        self.last_event_ids: list[str | None] = []

    @staticmethod
    def window(sequence: int) -> str:
        data = ('{"query":"q","sequence":%d,"window":{"start_ms":0,"end_ms":1000},"rows":0,'
                '"closed_at_ms":1,"reported_at_ms":2,"results":{"head":{"vars":[]},"results":{"bindings":[]}}}')
        return f"id: {sequence}\nevent: window\ndata: {data % sequence}\n\n"

    async def describe(self, request: Request) -> Response:
        return JSONResponse({"name": "q", "windows_reported": 0})

    async def events(self, request: Request) -> Response:
        self.last_event_ids.append(request.headers.get("last-event-id"))
        attempt = len(self.last_event_ids)
        if attempt == 1:
            return PlainTextResponse("restarting\n", status_code=503)
        if attempt == 2:
            return Response(": ping\n\n" + self.window(1) + self.window(2), media_type="text/event-stream")
        if attempt == 3:
            return Response(self.window(3), media_type="text/event-stream")
        return PlainTextResponse("unknown query 'q'\n", status_code=404)


def test_the_reader_reconnects_after_the_last_window_it_yielded(stand_in):
    events = Events()
    url = stand_in([Route("/queries/q", events.describe), Route("/queries/q/events", events.events)])
    with Client(url) as client:
        got = [w.sequence for w in client.windows("q", reconnect=Reconnect(attempts=2, delay=0.01))]
    assert got == [1, 2, 3]
    assert events.last_event_ids == ["0", "0", "2", "3"]
