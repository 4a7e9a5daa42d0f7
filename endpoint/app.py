"""The Starlette application: routes, CORS, and the objects they share.

    from endpoint.app import create_app
    app = create_app(store, Settings(query_timeout=10))
    uvicorn.run(app)
"""

from __future__ import annotations

import contextlib
import time

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.routing import Route

from endpoint.admin_routes import AdminRoutes
from endpoint.body_limit import BodyLimit
from endpoint.brokers import Connectors
from endpoint.brokers.metrics import ConnectorCollector
from endpoint.brokers.sink_routes import SinkRoutes
from endpoint.compression import Compression, send_whole, whole_answer
from endpoint.console import console_routes
from endpoint.continuous_routes import ContinuousQueryRoutes
from endpoint.errors import OPERATION, error_handlers
from endpoint.graph_store import GraphStoreRoute
from endpoint.health import Readiness
from endpoint.metrics import Metrics
from endpoint.openapi import openapi_json
from endpoint.quick_lane import Answer
from endpoint.reader_front import POSITION_HEADER
from endpoint.settings import Settings
from endpoint.small_bodies import QUERY_BODIES, QUICK_BODY, declared_length, media_type, read_small_body
from endpoint.sparql_route import SparqlRoute
from endpoint.stream_routes import StreamRoutes
from endpoint.traffic import Traffic
from endpoint.workers import Workers
from engine.api import Store
from engine.sparql.exec import OutboundPolicy
from engine.stream import StreamEngine

GRAPH_STORE_METHODS = ["GET", "HEAD", "PUT", "POST", "DELETE"]


class RivuletApp(Starlette):
    """The Starlette application with one shortcut in front: a query to
    ``/sparql`` (a GET, or a POST with a small declared body) that
    :meth:`SparqlRoute.answer_now` can answer at once skips the middleware
    stack and the router (most of a small query's time over HTTP). Anything
    else, and any such request it declines, takes the whole path (a POST's
    body, read already, is handed on as it came). Not taken when CORS is on
    (the middleware must add its headers). Both paths run inside the traffic
    metrics (:mod:`endpoint.traffic`).

    The server's HTTP protocol goes one step further
    (:mod:`endpoint.quick_lane`): it asks :meth:`quick_answer` for the whole
    answer as soon as such a request has arrived, and runs the ASGI
    application only when it declines."""

    answer_now = None
    traffic: Traffic | None = None
    #: the largest POST body the shortcut reads (the server's body limit, at most QUICK_BODY)
    quick_body = QUICK_BODY

    async def __call__(self, scope, receive, send) -> None:
        if self.traffic is not None and scope["type"] == "http":
            await self.traffic.observe(scope, receive, send, self._answer)
        else:
            await self._answer(scope, receive, send)

    async def _answer(self, scope, receive, send) -> None:
        if scope["type"] == "http" and self.takes_quickly(scope):
            body: bytes | None = b""
            if scope["method"] == "POST":
                body, receive = await read_small_body(receive, declared_length(scope, self.quick_body))
            response = None if body is None else self.answer_now(Request(scope), body)
            if response is not None:
                scope[OPERATION] = "query"  # what the whole path would have said
                # gzip as on the whole path (endpoint.compression); a tiny answer never is
                await send_whole(response, scope, receive, send)
                return
        await super().__call__(scope, receive, send)

    def takes_quickly(self, scope) -> bool:
        """Might :meth:`quick_answer` answer this request (its head read)?"""
        if self.answer_now is None or scope["path"] != "/sparql":
            return False
        method = scope["method"]
        if method == "GET":
            return True
        return (method == "POST" and declared_length(scope, self.quick_body) is not None
                and media_type(scope) in QUERY_BODIES)

    def quick_answer(self, scope, body: bytes) -> Answer | None:
        """The whole answer (status, headers, body) of a request
        :meth:`takes_quickly` accepted, arrived with ``body``, or None: the
        application then runs on it as on any other. Counted in the traffic
        metrics as the application would count it."""
        started = time.perf_counter()
        response = self.answer_now(Request(scope), body)
        if response is None:
            return None
        answer = whole_answer(response, scope)
        if answer is None:
            return None
        scope[OPERATION] = "query"
        if self.traffic is not None:
            self.traffic.answered(scope, response.status_code, time.perf_counter() - started)
        return response.status_code, answer[0], answer[1]


def create_app(
    store: Store, settings: Settings | None = None, streams: StreamEngine | None = None
) -> Starlette:
    """An ASGI app serving ``store``: ``/sparql`` (SPARQL 1.1 Protocol, which
    also takes continuous-query registrations as updates), ``/store`` (Graph
    Store HTTP Protocol), ``/streams`` and ``/queries`` (streams, continuous
    queries and their Server-Sent Events). Any other method on a route is
    answered 405 with an ``Allow`` header by Starlette's router; engine errors
    by the handlers of :mod:`endpoint.errors`."""
    settings = settings or Settings()
    # a server's clients must not make it call its own network
    store.outbound_policy = OutboundPolicy.for_server(settings.outbound_allowed, settings.service)
    streams = streams or StreamEngine(store, timeout=settings.query_timeout, max_rows=settings.max_rows)
    # one shutdown for queries, updates and windows (``rivulet serve`` begins it on SIGTERM)
    workers = Workers(settings.workers, settings.query_timeout, streams.shutdown)
    queries = ContinuousQueryRoutes(streams, settings, workers)
    sparql = SparqlRoute(store, settings, workers, streams.register)
    graphs = GraphStoreRoute(store, settings, workers)
    metrics = Metrics(store, streams, workers)
    readiness = Readiness()
    # streams fed by brokers and queries publishing to them; sinks are kept in the data directory
    connectors = Connectors(streams, getattr(streams.journal, "path", None))
    metrics.registry.register(ConnectorCollector(connectors))
    middleware = [Middleware(BodyLimit, limit=settings.max_body_bytes)]
    if settings.cors_origins:
        middleware.append(Middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=GRAPH_STORE_METHODS,
            allow_headers=["Accept", "Authorization", "Content-Type", "X-Timestamp", "Last-Event-ID",
                           "Cache-Control", POSITION_HEADER],
            # a browser client reads the log position of its write to read it back (--processes)
            expose_headers=["Location", POSITION_HEADER],
        ))
    middleware.append(Middleware(Compression))  # gzip for large answers when asked (never SSE)
    routes = [
        Route("/sparql", sparql.handle, methods=["GET", "POST"]),
        Route("/store", graphs.indirect, methods=GRAPH_STORE_METHODS),
        Route("/store/{path:path}", graphs.direct, methods=GRAPH_STORE_METHODS),
        *StreamRoutes(streams, settings, workers, connectors).routes(),
        *SinkRoutes(connectors, settings, workers).routes(),
        *queries.routes(),
        *readiness.routes(),
        *metrics.routes(),
        *AdminRoutes(streams, settings).routes(),
        Route("/openapi.json", openapi_json, methods=["GET"]),
        *console_routes(),
    ]
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        connectors.start()
        yield
        connectors.close()  # before the data directory closes: no message is acknowledged after
        readiness.stop()
        streams.close()  # stop the idle clock with the server

    app = RivuletApp(routes=routes, middleware=middleware,
                     exception_handlers=error_handlers(settings.query_timeout), lifespan=lifespan)
    if not settings.cors_origins:
        app.answer_now = sparql.answer_now
        app.quick_body = min(QUICK_BODY, settings.max_body_bytes)
    app.traffic = metrics.traffic
    app.state.store = store
    app.state.streams = streams
    app.state.connectors = connectors
    app.state.shutdown = streams.shutdown
    return app

