"""``/queries``: register continuous queries and receive their windows over SSE.

``POST /queries`` registers (body: the C-SPARQL / RSP-QL text, as
``application/sparql-query``, ``text/plain`` or a ``query`` form field; a
``report`` parameter chooses the report strategy, written into the text),
``GET /queries`` lists, ``GET /queries/{name}`` describes, ``DELETE`` unregisters.
``GET /queries/{name}/events`` is a Server-Sent Events stream: one ``window``
event per window, its id the window's sequence number, so a reconnecting
``EventSource`` resumes after ``Last-Event-ID`` from the retained events.

Each subscriber drains its own bounded queue, which the engine fills
without blocking (:class:`~engine.stream.subscription.Subscription`): a
subscriber that stops reading is dropped when its queue is full, or when its
connection took nothing for the server's send timeout (the server cuts it
off: :mod:`endpoint.connection_deadlines`), and the others never wait for it.
Either drop is a warning in the log and counted
(``rivulet_continuous_query_subscriber_drops_total``). The SSE payload of an
event is written here, once (:mod:`endpoint.sse`).
"""

from __future__ import annotations

import logging
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from endpoint.asgi_requests import require_write
from endpoint.completed_sse import CompletedEventSourceResponse
from endpoint.connection_deadlines import SEND_STALLED
from endpoint.errors import parsing
from endpoint.public_url import public_url
from endpoint.settings import Settings
from endpoint.sse import window_sse
from endpoint.stream_requests import registration_text, resume_after, with_report_parameters
from endpoint.workers import Workers
from engine.stream import StreamEngine, Subscription

log = logging.getLogger("rivulet.endpoint")

#: events a subscriber may have waiting before it is considered stalled
SUBSCRIBER_QUEUE = 256


class ContinuousQueryRoutes:
    """The handlers of ``/queries``; the engine's errors are answered by the
    application's handlers (:mod:`endpoint.errors`)."""

    def __init__(self, engine: StreamEngine, settings: Settings, workers: Workers) -> None:
        self.engine = engine
        self.settings = settings
        self.workers = workers

    def routes(self) -> list[Route]:
        return [
            Route("/queries", self.list_queries, methods=["GET"]),
            Route("/queries", self.register, methods=["POST"]),
            Route("/queries/{name:path}/events", self.events, methods=["GET"]),
            Route("/queries/{name:path}", self.describe, methods=["GET"]),
            Route("/queries/{name:path}", self.unregister, methods=["DELETE"]),
        ]

    async def list_queries(self, request: Request) -> Response:
        return JSONResponse({"queries": [q.to_json() for q in self.engine.queries.values()]})

    async def register(self, request: Request) -> Response:
        require_write(request, self.settings)
        content_type, body = request.headers.get("content-type"), await request.body()
        text = registration_text(content_type, body)
        parsing(request, "registration")
        text = with_report_parameters(text, content_type, body, request.query_params)
        base = public_url(request, self.settings, "/")
        running = await self.workers.call(self.engine.register, text, base)
        location = f"{base}queries/{quote(running.spec.name, safe='')}"
        return JSONResponse(running.to_json(), status_code=201, headers={"Location": location})

    async def describe(self, request: Request) -> Response:
        return JSONResponse(self.engine.query(request.path_params["name"]).to_json())

    async def unregister(self, request: Request) -> Response:
        require_write(request, self.settings)
        await self.workers.call(self.engine.unregister, request.path_params["name"])
        return Response(status_code=204)

    async def events(self, request: Request) -> Response:
        """The query's windows as Server-Sent Events, resuming after ``Last-Event-ID``."""
        name = request.path_params["name"]
        last_id = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
        after = resume_after(last_id)
        subscription = self.engine.subscribe(name, after, SUBSCRIBER_QUEUE)
        return CompletedEventSourceResponse(
            self._send(request, name, subscription), ping=self.settings.sse_ping,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def _send(self, request: Request, name: str, subscription: Subscription):
        """Replay, then every live event until the query is unregistered or
        the subscriber is dropped; a subscriber that goes away unsubscribes."""
        try:
            for event in subscription.replay:
                yield window_sse(event)
            while (event := await subscription.next()) is not None:
                yield window_sse(event)
            if subscription.dropped:
                log.warning("SSE subscriber of %r dropped: it stopped reading", name)
        finally:
            stalled = bool(request.scope.get(SEND_STALLED))
            if stalled:
                log.warning("SSE subscriber of %r dropped: its connection took nothing for the send "
                            "timeout (--send-timeout)", name)
            self.engine.unsubscribe(name, subscription, stalled=stalled)
