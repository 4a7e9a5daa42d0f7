"""``/queries``: register continuous queries and receive their windows over SSE.

``POST /queries`` registers (body: the C-SPARQL / RSP-QL text, as
``application/sparql-query``, ``text/plain`` or a ``query`` form field),
``GET /queries`` lists, ``GET /queries/{name}`` describes, ``DELETE`` unregisters.
``GET /queries/{name}/events`` is a Server-Sent Events stream: one ``window``
event per window, its id the window's sequence number, so a reconnecting
``EventSource`` resumes after ``Last-Event-ID`` from the retained events.

Each subscriber has its own bounded queue filled from the engine's thread
without blocking: a subscriber that stops reading is dropped when its queue
is full (or a send stalls), and the others never wait for it.
"""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import quote

from sse_starlette.sse import EventSourceResponse, ServerSentEvent
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from endpoint.access import require_write
from endpoint.settings import Settings
from endpoint.stream_routes import stream_error
from endpoint.workers import Workers
from engine.sparql.syntax import SparqlSyntaxError
from engine.stream.errors import StreamError
from engine.stream.events import WindowEvent
from engine.stream.stream_engine import StreamEngine

log = logging.getLogger("rivulet.endpoint")

#: events a subscriber may have waiting before it is considered stalled
SUBSCRIBER_QUEUE = 256
#: seconds one send may take before the subscriber is dropped
SEND_TIMEOUT = 30


class ContinuousQueryRoutes:
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
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media == "application/x-www-form-urlencoded":
            text = (await request.form()).get("query")
            if not text:
                raise HTTPException(400, "the form has no 'query' field")
        elif media in ("application/sparql-query", "application/sparql-update", "text/plain", ""):
            try:
                text = (await request.body()).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise HTTPException(400, f"the registration is not UTF-8: {exc}") from exc
        else:
            raise HTTPException(415, f"unsupported registration type {media!r}; "
                                     "send the query as application/sparql-query")
        running = await self.workers.call(self.register_text, text, str(request.base_url))
        location = f"{request.base_url}queries/{quote(running.spec.name, safe='')}"
        return JSONResponse(running.to_json(), status_code=201, headers={"Location": location})

    def register_text(self, text: str, base: str):
        """Register from text; engine errors become HTTP errors (shared with /sparql)."""
        try:
            return self.engine.register(text, base)
        except SparqlSyntaxError as exc:
            raise HTTPException(400, f"malformed registration: {exc}") from exc
        except StreamError as exc:
            raise stream_error(exc) from exc

    async def describe(self, request: Request) -> Response:
        try:
            running = self.engine.query(request.path_params["name"])
        except StreamError as exc:
            raise stream_error(exc) from exc
        return JSONResponse(running.to_json())

    async def unregister(self, request: Request) -> Response:
        require_write(request, self.settings)
        try:
            await self.workers.call(self.engine.unregister, request.path_params["name"])
        except StreamError as exc:
            raise stream_error(exc) from exc
        return Response(status_code=204)

    async def events(self, request: Request) -> Response:
        name = request.path_params["name"]
        try:
            running = self.engine.query(name)
        except StreamError as exc:
            raise stream_error(exc) from exc
        last_id = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
        after = int(last_id) if last_id and last_id.strip().isdigit() else None
        if after is not None and after > running.sequence:
            # an id from before a re-registration or a restart: start afresh
            after = None
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[WindowEvent | None] = asyncio.Queue(maxsize=SUBSCRIBER_QUEUE)

        def deliver(event: WindowEvent | None) -> None:
            # called in the engine's thread: hand over without ever blocking it;
            # None means the query was unregistered
            loop.call_soon_threadsafe(_offer, queue, CLOSED if event is None else event)

        backlog = running.subscribe(deliver, after)

        async def stream():
            # an event published while subscribing can come both ways: send it once
            last_sent = after or 0
            try:
                for event in backlog:
                    last_sent = event.sequence
                    yield _sse(event)
                while True:
                    event = await queue.get()
                    if event is CLOSED:
                        return  # the query was unregistered
                    if event is None:
                        log.warning("SSE subscriber of %r dropped: it stopped reading", name)
                        return
                    if event.sequence <= last_sent:
                        continue
                    last_sent = event.sequence
                    yield _sse(event)
            finally:
                running.unsubscribe(deliver)

        return EventSourceResponse(stream(), ping=self.settings.sse_ping, send_timeout=SEND_TIMEOUT,
                                   headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


#: queued when the query is unregistered: its event streams end
CLOSED = object()


def _offer(queue: asyncio.Queue, event) -> None:
    """Queue an event; a full queue means the subscriber stalled: end its stream."""
    try:
        queue.put_nowait(event)
    except asyncio.QueueFull:
        while not queue.empty():
            queue.get_nowait()
        queue.put_nowait(None)


def _sse(event: WindowEvent) -> ServerSentEvent:
    return ServerSentEvent(data=event.to_json().decode(), event="window", id=str(event.sequence))
