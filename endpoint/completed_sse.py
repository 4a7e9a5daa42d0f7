"""A Server-Sent Events response that is ended properly when the server stops.

At a server's shutdown sse-starlette stops the event stream by cancelling it,
and the response's last (empty) body message is never sent: uvicorn then
logs ``ASGI callable returned without completing response`` for every
listener, at ERROR, on every restart. :class:`CompletedEventSourceResponse`
sends that message itself when the stream was cut short, so the response
ends as any other does; the client's EventSource (or ``endpoint.client``)
then reconnects, with ``Last-Event-ID``, to the restarted server.
"""

from __future__ import annotations

from sse_starlette.sse import EventSourceResponse
from starlette.types import Message, Receive, Scope, Send

#: the message that ends an HTTP response's body
END_OF_BODY: Message = {"type": "http.response.body", "body": b"", "more_body": False}


class CompletedEventSourceResponse(EventSourceResponse):
    """sse-starlette's response, whose body always ends once it has begun."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        begun = ended = False

        async def watched(message: Message) -> None:
            nonlocal begun, ended
            if message["type"] == "http.response.start":
                begun = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                ended = True
            await send(message)

        await super().__call__(scope, receive, watched)
        if begun and not ended:  # cancelled at shutdown (a client that left is not written to)
            await send(END_OF_BODY)
