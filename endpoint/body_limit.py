"""A limit on request bodies (413), before anything reads them.

A client must not make the server hold an arbitrarily large body: a 100 MB
upload used to take 4.4 GB while it was parsed and stalled other requests.
A declared ``Content-Length`` over the limit is refused at once, before the
body is read; a body without one (chunked) is counted as it arrives and
refused when it passes the limit, so at most the limit is ever buffered.
Either 413 closes the connection: the rest of the body is read only to be
discarded, for a few seconds, so that a client that sends its whole body
before reading sees the 413 rather than a reset (a lingering close,
:mod:`endpoint.connection_deadlines`). Large datasets are loaded with
``rivulet serve --data`` or ``rivulet load``.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: the header of a 413: the rest of the body is not read for ever
CLOSING = {"Connection": "close"}


def too_large(limit: int) -> str:
    return (f"request body over the server's limit of {limit:,} bytes (--max-body); load large data "
            "with 'rivulet serve --data' or 'rivulet load'")


def declared_over(length: bytes, limit: int) -> bool:
    """Whether a Content-Length declares more than ``limit`` bytes
    (``bytes.isdigit()`` is ASCII digits only; a length of 19 digits or more
    is over any limit and is not converted: Python refuses past 4,300)."""
    return length.isdigit() and (len(length.lstrip(b"0")) > 18 or int(length) > limit)


class BodyLimit:
    """ASGI middleware refusing request bodies over ``limit`` bytes with 413."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length" and declared_over(value, self.limit):
                await PlainTextResponse(too_large(self.limit) + "\n", status_code=413,
                                        headers=CLOSING)(scope, receive, send)
                return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:  # the route's error handler answers 413
                    raise HTTPException(413, too_large(self.limit), headers=CLOSING)
            return message

        await self.app(scope, counted, send)
