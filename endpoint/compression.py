"""gzip for large answers, when the client asks for it (``Accept-Encoding``).

An answer is compressed when the client accepts gzip and the answer is not
tiny: :data:`MINIMUM_SIZE` bytes or more. A streamed answer is compressed chunk by chunk as it goes (each
chunk flushed, so the client can decode what it has), never gathered
first. Never compressed: Server-Sent Events (each event must reach the
listener when it is sent), a response that carries its own encoding, and
the few statuses without a body. Every answer that could have been
compressed says ``Vary: Accept-Encoding``, so a cache keeps the two apart.
"""

from __future__ import annotations

import zlib

import anyio
from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: answers smaller than this (bytes, whole) are sent as they are: gzip would save nothing worth its time
MINIMUM_SIZE = 1024
#: zlib's level: 5 compresses SPARQL results nearly as well as 9, several times faster
LEVEL = 5
#: chunks at least this large are compressed in a worker thread, not on the event loop
THREAD_SIZE = 64 * 1024
#: media types never compressed
UNCOMPRESSED_TYPES = frozenset({"text/event-stream"})


def accepts_gzip(header: str | None) -> bool:
    """Does an ``Accept-Encoding`` header allow gzip: named (or as ``x-gzip``),
    or covered by ``*``, with a q-value above 0 (RFC 9110 12.5.3)? A coding
    listed twice counts with its highest q-value, whatever the order."""
    if not header:
        return False
    named: float | None = None
    wildcard: float | None = None
    for item in header.split(","):
        coding, *params = (part.strip() for part in item.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        coding = coding.lower()
        if coding in ("gzip", "x-gzip"):
            named = q if named is None else max(named, q)
        elif coding == "*":
            wildcard = q if wildcard is None else max(wildcard, q)
    if named is not None:
        return named > 0
    return wildcard is not None and wildcard > 0


class Compression:
    """ASGI middleware: gzip for the answers the module docstring describes."""

    def __init__(self, app: ASGIApp, minimum_size: int = MINIMUM_SIZE) -> None:
        self.app = app
        self.minimum_size = minimum_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _Responder(scope, send, self.minimum_size).send)


def _header(scope: Scope, name: bytes) -> str | None:
    """The request's header ``name`` (several lines joined by commas), None without one."""
    values = [value.decode("latin-1") for key, value in scope["headers"] if key == name]
    return ", ".join(values) if values else None


class _Responder:
    """The ``send`` of one response: holds its start, and its first chunks
    until they make :data:`MINIMUM_SIZE` bytes or the body ends (a streamed
    answer's first chunk is a few thousand rows, so this waits for nothing
    in practice), then decides, and compresses every chunk from then on."""

    def __init__(self, scope: Scope, send: Send, minimum_size: int) -> None:
        self._scope = scope
        self._send = send
        self._minimum_size = minimum_size
        self._start: Message | None = None
        self._held: list[bytes] = []
        self._held_size = 0
        self._passing = False
        self._compressor: zlib._Compress | None = None

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            if _left_alone(message):
                self._passing = True
                await self._send(message)
            else:
                self._start = message
            return
        if self._passing or kind != "http.response.body":
            await self._send(message)
            return
        body, more = message.get("body", b""), message.get("more_body", False)
        if self._compressor is not None:
            await self._send(await self._compressed(body, more))
            return
        self._held.append(body)
        self._held_size += len(body)
        if more and self._held_size < self._minimum_size:
            return
        await self._decide(b"".join(self._held), more)
        self._held = []

    async def _decide(self, body: bytes, more: bool) -> None:
        """Send the start and the body so far: compressed unless the whole
        answer is tiny or the client did not ask for gzip."""
        start = self._start
        assert start is not None
        if not more and len(body) < THREAD_SIZE:  # whole, and small enough to compress here
            self._passing = True
            headers, body = _whole(start["status"], start.get("headers", []), body, self._scope,
                                   self._minimum_size)
            await self._send({**start, "headers": headers})
            await self._send({"type": "http.response.body", "body": body, "more_body": False})
            return
        start["headers"] = list(start.get("headers", []))  # a list: MutableHeaders edits it in place
        headers = MutableHeaders(raw=start["headers"])
        headers.add_vary_header("Accept-Encoding")
        if not accepts_gzip(_header(self._scope, b"accept-encoding")):  # read only for answers this large
            self._passing = True
            await self._send(start)
            await self._send({"type": "http.response.body", "body": body, "more_body": more})
            return
        self._compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        headers["Content-Encoding"] = "gzip"
        compressed = await self._compressed(body, more)
        if more:
            del headers["Content-Length"]
        else:
            headers["Content-Length"] = str(len(compressed["body"]))
        await self._send(start)
        await self._send(compressed)

    async def _compressed(self, body: bytes, more: bool) -> Message:
        """The body message of a chunk compressed: flushed so that the client
        can read it now, or the stream's end when no more follows."""
        if len(body) >= THREAD_SIZE:
            data = await anyio.to_thread.run_sync(self._compress, body, more)
        else:
            data = self._compress(body, more)
        return {"type": "http.response.body", "body": data, "more_body": more}

    def _compress(self, body: bytes, more: bool) -> bytes:
        compressor = self._compressor
        assert compressor is not None
        return compressor.compress(body) + compressor.flush(zlib.Z_SYNC_FLUSH if more else zlib.Z_FINISH)


def _left_alone(start: Message) -> bool:
    """Is this response never compressed (see the module docstring)?"""
    if start["status"] in (204, 206, 304) or start["status"] < 200:
        return True
    for key, value in start.get("headers", []):
        if key == b"content-encoding":
            return True
        if key == b"content-type":
            media_type = value.split(b";")[0].strip().lower().decode("latin-1")
            if media_type in UNCOMPRESSED_TYPES:
                return True
    return False


def whole_answer(response: Response, scope: Scope) -> tuple[list[tuple[bytes, bytes]], bytes] | None:
    """The head and body :class:`Compression` would send for a whole (not
    streamed) ``response``, computed at once; None for an answer so large
    that its compression belongs in a worker thread (:data:`THREAD_SIZE`):
    send it through :class:`Compression` instead."""
    if len(response.body) >= THREAD_SIZE:
        return None
    return _whole(response.status_code, response.raw_headers, response.body, scope, MINIMUM_SIZE)


def _whole(status: int, headers: list[tuple[bytes, bytes]], body: bytes, scope: Scope,
           minimum_size: int) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """A whole answer's head and body: gzipped when the client accepts it
    and the answer is not tiny, ``Vary: Accept-Encoding`` added whenever it
    could have been (the decision of the module docstring)."""
    if len(body) < minimum_size or _left_alone({"headers": headers, "status": status}):
        return headers, body
    headers = list(headers)  # a copy: MutableHeaders edits it in place
    edited = MutableHeaders(raw=headers)
    edited.add_vary_header("Accept-Encoding")
    if not accepts_gzip(_header(scope, b"accept-encoding")):  # read only for answers this large
        return headers, body
    compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    body = compressor.compress(body) + compressor.flush(zlib.Z_FINISH)
    edited["Content-Encoding"] = "gzip"
    edited["Content-Length"] = str(len(body))
    return headers, body


async def send_whole(response: Response, scope: Scope, receive: Receive, send: Send) -> None:
    """Send a whole (not streamed) ``response`` as :class:`Compression`
    around it would, with the same head and body, without its per-response
    machinery (:func:`whole_answer`)."""
    answer = whole_answer(response, scope)
    if answer is None:
        await Compression(response)(scope, receive, send)
        return
    headers, body = answer
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body})
