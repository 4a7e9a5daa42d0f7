"""What a reader process answers itself, and what it hands to the writer.

With ``rivulet serve --processes N --data-dir DIR`` every process accepts
connections on the one public port (:mod:`endpoint.reader_processes`). A
reader answers the reads itself, from its copy of the store that follows the
writer's log (:class:`~engine.durability.log_follower.LogFollower`): SPARQL
queries (GET, or POST as ``application/sparql-query`` or as a form without
an ``update`` field) and Graph Store reads (GET, HEAD). Every other request
(SPARQL Update, Graph Store writes, streams, continuous queries and their
event streams, admin, the console, metrics) is forwarded whole to the writer
over its private Unix socket, and the writer's answer, streamed, is the
reader's answer: only the writer changes anything.

Read-your-writes: the writer's answer to a write carries the log position
that write reached (``Rivulet-Log-Position`` and a cookie of that name,
:class:`WriterFront`). A read that sends it back (the header, or the cookie)
is answered once this reader has applied the log up to there, so a client
sees its own writes whichever process answers; without it a reader answers
at once from the newest snapshot it has (a few milliseconds behind the
writer at most, under a steady load). A reader's own answers say the log
position they reflect at least in the same header.
"""

from __future__ import annotations

import asyncio
import re
import time

import httpx
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from endpoint.body_limit import declared_over, too_large
from endpoint.quick_lane import Answer
from endpoint.small_bodies import media_type
from engine.durability.log_follower import LogFollower

#: the response header (and cookie) with a write's log position, and the request header sending it back
POSITION_HEADER = "Rivulet-Log-Position"
POSITION_COOKIE = "rivulet_log_position"
#: request headers by which a reader tells the writer where the client connected (trusted on its socket only)
FORWARDED_SERVER = "rivulet-forwarded-server"
FORWARDED_CLIENT = "rivulet-forwarded-client"
#: headers of one connection, not of the request or answer they carry
HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"trailer", b"upgrade",
              b"proxy-authorization", b"proxy-connection", b"host"}
WRITE_METHODS = {"POST", "PUT", "DELETE", "PATCH"}
_COOKIE = re.compile(rb"(?:^|;)\s*" + POSITION_COOKIE.encode() + rb"=(\d{1,19})")
_UPDATE_FIELD = re.compile(rb"(?:^|&)update=")
#: seconds between two looks at a follower a read waits for
WAIT_STEP = 0.001


def requested_position(scope: Scope) -> int:
    """The log position a read asks to see (its header, else its cookie; 0: none)."""
    header = POSITION_HEADER.lower().encode()
    for name, value in scope["headers"]:
        if name == header and value.strip().isdigit() and len(value.strip()) < 20:
            return int(value)
        if name == b"cookie" and (found := _COOKIE.search(value)):
            return int(found.group(1))
    return 0


class ReaderFront:
    """The ASGI application of a reader process: ``local`` (the usual
    application over the follower's store) for reads, the writer for the rest."""

    def __init__(self, local: ASGIApp, follower: LogFollower, writer_socket: str, max_body: int,
                 wait_seconds: float) -> None:
        self.local = local
        self.follower = follower
        self.max_body = max_body
        self.wait_seconds = wait_seconds
        self.writer = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=writer_socket),
                                        base_url="http://writer", timeout=None)

    @property
    def state(self):
        return self.local.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.local(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        if path == "/sparql" and method == "GET":
            if b"update=" not in scope.get("query_string", b""):
                await self._read(scope, receive, send)
                return
        elif path == "/sparql" and method == "POST" and media_type(scope) == b"application/sparql-query":
            await self._read(scope, receive, send)
            return
        elif (path == "/store" or path.startswith("/store/")) and method in ("GET", "HEAD"):
            await self._read(scope, receive, send)
            return
        body = await self._body(scope, receive, send)
        if body is None:
            return
        form = media_type(scope) == b"application/x-www-form-urlencoded"
        if path == "/sparql" and method == "POST" and form and not _UPDATE_FIELD.search(body):
            await self._read(scope, _replay(body, receive), send)
            return
        await self._forward(scope, body, receive, send)

    def takes_quickly(self, scope: Scope) -> bool:
        """The server's quick lane (:mod:`endpoint.quick_lane`): as the local application."""
        return self.local.takes_quickly(scope)

    def quick_answer(self, scope: Scope, body: bytes) -> Answer | None:
        """The local application's quick answer to a read this reader may
        answer now (the log position it asks for applied), with the position
        it reflects; None for anything else."""
        if scope["path"] != "/sparql":
            return None
        if scope["method"] == "GET":
            if b"update=" in scope.get("query_string", b""):
                return None
        elif media_type(scope) == b"application/x-www-form-urlencoded":
            if _UPDATE_FIELD.search(body):
                return None
        elif media_type(scope) != b"application/sparql-query":
            return None
        if requested_position(scope) > self.follower.applied:
            return None  # the whole path waits for the follower
        position = str(self.follower.applied).encode()
        answer = self.local.quick_answer(scope, body)
        if answer is None:
            return None
        status, headers, content = answer
        return status, [*headers, (b"rivulet-log-position", position)], content

    # ----------------------------------------------------------------- reads
    async def _read(self, scope: Scope, receive: Receive, send: Send) -> None:
        wanted = requested_position(scope)
        if wanted > self.follower.applied and not await self._reach(wanted):
            await PlainTextResponse(
                f"this server process has not yet applied log position {wanted} (it is at "
                f"{self.follower.applied}) after {self.wait_seconds:g} s; try again\n",
                status_code=503, headers={"Retry-After": "1"})(scope, receive, send)
            return
        position = str(self.follower.applied).encode()

        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), (b"rivulet-log-position", position)]
            await send(message)

        await self.local(scope, receive, marked)

    async def _reach(self, wanted: int) -> bool:
        """Wait (without holding the event loop) for the follower to apply ``wanted``."""
        deadline = time.monotonic() + self.wait_seconds
        while self.follower.applied < wanted:
            if time.monotonic() > deadline:
                return False
            self.follower.wake.set()
            await asyncio.sleep(WAIT_STEP)
        return True

    # ---------------------------------------------------------------- writes
    async def _body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole request body (None: refused as too large, answered 413)."""
        for name, value in scope["headers"]:
            if name == b"content-length" and declared_over(value, self.max_body):
                await PlainTextResponse(too_large(self.max_body) + "\n", status_code=413,
                                        headers={"Connection": "close"})(scope, receive, send)
                return None
        parts, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            parts.append(message.get("body", b""))
            size += len(parts[-1])
            if size > self.max_body:
                await PlainTextResponse(too_large(self.max_body) + "\n", status_code=413,
                                        headers={"Connection": "close"})(scope, receive, send)
                return None
            if not message.get("more_body", False):
                break
        return b"".join(parts)

    async def _forward(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
        """Hand the request to the writer and stream its answer back, until
        it ends or the client goes away (an event stream ends only so)."""
        forwarding = asyncio.ensure_future(self._relay(scope, body, send))
        leaving = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait({forwarding, leaving}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (forwarding, leaving):
                task.cancel()
        if forwarding.done() and not forwarding.cancelled() and forwarding.exception() is not None:
            raise forwarding.exception()

    async def _relay(self, scope: Scope, body: bytes, send: Send) -> None:
        headers = [(k, v) for k, v in scope["headers"]
                   if k not in HOP_BY_HOP and k not in (FORWARDED_SERVER.encode(), FORWARDED_CLIENT.encode())
                   and k != b"content-length"]
        addresses = ((FORWARDED_SERVER, scope.get("server")), (FORWARDED_CLIENT, scope.get("client")))
        for name, address in addresses:
            if address and address[1] is not None:
                headers.append((name.encode(), f"{address[0]}|{address[1]}".encode()))
        target = scope.get("raw_path") or scope["path"].encode()
        if scope.get("query_string"):
            target += b"?" + scope["query_string"]
        request = self.writer.build_request(scope["method"], target.decode("latin-1"), headers=headers,
                                            content=body)
        try:
            answer = await self.writer.send(request, stream=True)
        except httpx.TransportError as exc:
            await PlainTextResponse(f"the writer process cannot be reached: {exc}\n", status_code=503,
                                    headers={"Retry-After": "1"})(scope, _nothing, send)
            return
        try:
            await send({"type": "http.response.start", "status": answer.status_code,
                        "headers": [(k, v) for k, v in answer.headers.raw if k.lower() not in HOP_BY_HOP]})
            async for chunk in answer.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await answer.aclose()


class WriterFront:
    """The writer's application: requests a reader forwarded (on the
    writer's private socket) keep the addresses the client connected to,
    and the answer to a write names the log position it reached."""

    def __init__(self, app: ASGIApp, wal) -> None:
        self.app = app
        self.wal = wal

    @property
    def state(self):
        return self.app.state

    def takes_quickly(self, scope: Scope) -> bool:
        """The server's quick lane (:mod:`endpoint.quick_lane`): as the application."""
        return self.app.takes_quickly(scope)

    def quick_answer(self, scope: Scope, body: bytes) -> Answer | None:
        """The application's quick answer, marked as :meth:`__call__` marks
        its answers; None for a request a reader forwarded (its addresses
        are in its headers)."""
        server = scope.get("server")
        if server is not None and server[1] is None:
            return None
        answer = self.app.quick_answer(scope, body)
        if answer is None or scope["method"] not in WRITE_METHODS:
            return answer
        status, headers, content = answer
        return status, [*headers, *self._position_headers()], content

    def _position_headers(self) -> list[tuple[bytes, bytes]]:
        position = str(self.wal.last_lsn).encode()  # at least this write's: it is durable by now
        cookie = POSITION_COOKIE.encode() + b"=" + position + b"; Path=/; SameSite=Lax; HttpOnly"
        return [(b"rivulet-log-position", position), (b"set-cookie", cookie)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        server = scope.get("server")
        if server is not None and server[1] is None:  # the private Unix socket: a reader forwarded it
            scope = _with_forwarded_addresses(scope)
        if scope["method"] not in WRITE_METHODS:
            await self.app(scope, receive, send)
            return

        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *self._position_headers()]
            await send(message)

        await self.app(scope, receive, marked)


def _with_forwarded_addresses(scope: Scope) -> Scope:
    scope = dict(scope)
    for name, value in scope["headers"]:
        if name in (FORWARDED_SERVER.encode(), FORWARDED_CLIENT.encode()):
            host, _, port = value.decode("latin-1").rpartition("|")
            if port.isdigit():
                scope["server" if name == FORWARDED_SERVER.encode() else "client"] = (host, int(port))
    return scope


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` giving ``body`` whole first, then what ``receive`` gives."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _nothing() -> Message:
    return {"type": "http.disconnect"}
