"""A limit on request bodies (413), before anything reads them.

A client must not make the server hold an arbitrarily large body: a 100 MB
upload used to take 4.4 GB while it was parsed and stalled other requests.
A declared ``Content-Length`` over the limit is refused at once, before the
body is read; a body without one (chunked) is counted as it arrives and
refused when it passes the limit, so at most the limit is ever buffered.
Large datasets are loaded with ``rivulet serve --data`` or ``rivulet load``.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def too_large(limit: int) -> str:
    return (f"request body over the server's limit of {limit:,} bytes (--max-body); load large data "
            "with 'rivulet serve --data' or 'rivulet load'")


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
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await PlainTextResponse(too_large(self.limit) + "\n", status_code=413)(scope, receive, send)
                return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:  # the route's error handler answers 413
                    raise HTTPException(413, too_large(self.limit))
            return message

        await self.app(scope, counted, send)
