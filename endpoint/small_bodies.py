"""Reading a small request body ahead of the application, and handing it on.

The short path of ``/sparql`` (:class:`endpoint.app.RivuletApp`) answers a
POSTed query on the event loop, before the middleware stack, so it reads the
body itself; should it decline the request, the whole path must still see
the body exactly as it came. Only a body whose declared ``Content-Length``
is within a small bound is read here: the body limit's middleware
(:mod:`endpoint.body_limit`) has nothing to refuse in it.
"""

from __future__ import annotations

from starlette.types import Message, Receive, Scope

#: the largest POST body (bytes) the short path reads: a query, not a dataset
QUICK_BODY = 16 * 1024


def declared_length(scope: Scope, limit: int) -> int | None:
    """The request's ``Content-Length`` if it declares at most ``limit`` bytes, else None."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            if value.isdigit() and len(value) <= 9 and int(value) <= limit:
                return int(value)
            return None
    return None


#: the media types of a POSTed body that may hold a query (a form may hold an update too)
QUERY_BODIES = frozenset({b"application/sparql-query", b"application/x-www-form-urlencoded"})


def media_type(scope: Scope) -> bytes:
    """The request's media type (its ``Content-Type`` without parameters, lower case; empty if none)."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            return value.split(b";", 1)[0].strip().lower()
    return b""


async def read_small_body(receive: Receive, length: int) -> tuple[bytes | None, Receive]:
    """The body (None if it did not come as declared: a disconnect, or more
    than ``length`` bytes) and a ``receive`` that gives the application the
    messages read here again before any later ones."""
    messages: list[Message] = []
    parts: list[bytes] = []
    size = 0
    complete = False
    while size <= length:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        parts.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            complete = size == length
            break

    async def replay() -> Message:
        if messages:
            return messages.pop(0)
        return await receive()

    return (b"".join(parts) if complete else None), replay
