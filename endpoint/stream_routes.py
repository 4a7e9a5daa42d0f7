"""``/streams``: declare RDF streams, list them, and post items to them.

``PUT /streams/{name}`` declares (or re-declares) a stream from a JSON body;
``DELETE /streams/{name}`` drops it (refused with 409 while a registered
query reads it or writes into it); ``POST /streams/{name}`` ingests one
item (N-Triples, Turtle or JSON-LD, with its timestamp in the
``X-Timestamp`` header or ``timestamp`` parameter, arrival time when
absent; an empty body is a heartbeat) or many items in timestamped
N-Triples. A malformed body is 400 and nothing of it is
ingested; a late item is 409 with its timestamp.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from endpoint.asgi_requests import require_write
from endpoint.brokers import Connectors
from endpoint.public_url import public_url
from endpoint.settings import Settings
from endpoint.stream_requests import item_media_type, stream_definition
from endpoint.workers import Workers
from engine.stream import StreamEngine


class StreamRoutes:
    """The handlers of ``/streams`` and ``/streams/{name}``; the engine's
    errors are answered by the application's handlers (:mod:`endpoint.errors`)."""

    def __init__(self, engine: StreamEngine, settings: Settings, workers: Workers,
                 connectors: Connectors | None = None) -> None:
        self.engine = engine
        self.settings = settings
        self.workers = workers
        #: the streams' broker sources (their state is shown with the stream)
        self.connectors = connectors

    def routes(self) -> list[Route]:
        return [
            Route("/streams", self.list_streams, methods=["GET"]),
            Route("/streams/{name}", self.declare, methods=["PUT"]),
            Route("/streams/{name}", self.describe, methods=["GET"]),
            Route("/streams/{name}", self.ingest, methods=["POST"]),
            Route("/streams/{name}", self.drop, methods=["DELETE"]),
        ]

    async def list_streams(self, request: Request) -> Response:
        return JSONResponse({"streams": [self._described(s) for s in list(self.engine.streams.values())]})

    async def describe(self, request: Request) -> Response:
        return JSONResponse(self._described(self.engine.stream(request.path_params["name"])))

    def _described(self, state) -> dict:
        """The stream's state, with its source's when it has one."""
        described = state.to_json()
        if self.connectors is not None and state.definition.source is not None:
            described["source_state"] = self.connectors.source(state.definition.name)
        return described

    async def _follow_sources(self) -> None:
        """Start, restart or stop the source of a stream declared or dropped now."""
        if self.connectors is not None:
            await self.workers.call(self.connectors.reconcile)

    async def declare(self, request: Request) -> Response:
        require_write(request, self.settings)
        url = public_url(request, self.settings)
        definition = stream_definition(request.path_params["name"], await request.body(), url)
        state, created = await self.workers.call(self.engine.declare_stream, definition)
        await self._follow_sources()
        return JSONResponse(self._described(state), status_code=201 if created else 200,
                            headers={"Location": url})

    async def drop(self, request: Request) -> Response:
        """Drop the stream: its stored graph stays, its transient data goes."""
        require_write(request, self.settings)
        await self.workers.call(self.engine.drop_stream, request.path_params["name"])
        await self._follow_sources()
        return Response(status_code=204)

    async def ingest(self, request: Request) -> Response:
        """One item, a heartbeat or a batch: the engine parses the body and ingests it."""
        require_write(request, self.settings)
        media_type = item_media_type(request.headers.get("content-type"))
        timestamp = request.headers.get("x-timestamp") or request.query_params.get("timestamp")
        summary = await self.workers.call(
            self.engine.ingest_body, request.path_params["name"], await request.body(), media_type, timestamp
        )
        return JSONResponse(summary, status_code=202)
