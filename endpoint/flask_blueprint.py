"""Rivulet inside a Flask application: a Blueprint serving the SPARQL 1.1
Protocol (``/sparql``), the streams (``/streams``) and continuous queries
with their Server-Sent Events (``/queries``).

    from flask import Flask
    from endpoint.flask_blueprint import rivulet_blueprint
    app = Flask(__name__)
    app.register_blueprint(rivulet_blueprint(store), url_prefix="/rdf")

It is a second front door to the same engine, not a second implementation:
reading the request (:mod:`endpoint.protocol`, :mod:`endpoint.stream_requests`),
choosing the format (:mod:`endpoint.negotiation`), deciding who may write
(:mod:`endpoint.access`), writing the answer (:mod:`endpoint.answers`,
:mod:`endpoint.sse`) and the status of every failure
(:mod:`endpoint.problems`) are the modules the Starlette application uses.
What differs is only the framework's side: a WSGI server runs each request
in a thread, so the engine is called directly (at most ``Settings.workers``
calls at once), a query stops at its time limit (a WSGI application cannot
see a client leave until it writes), and an event stream waits for windows
in its thread, writing a comment every ``Settings.sse_ping`` seconds.
Updates and the windows of a stream engine the blueprint makes are bounded
by the same time limit and row budget as queries.

The blueprint's URLs are the ones it was addressed by, under
``Settings.base_url`` when set. Without it they come from the WSGI
server's ``SERVER_NAME``; some servers (gunicorn) fill that from the
client's ``Host`` header, so set ``base_url`` behind those.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable, Iterator
from itertools import chain
from typing import TypeVar
from urllib.parse import quote

import orjson
from flask import Blueprint, Response, g, request, stream_with_context, url_for
from werkzeug.exceptions import HTTPException

from endpoint import negotiation, protocol
from endpoint.access import check_write
from endpoint.answers import answer_chunks
from endpoint.problems import problem_for
from endpoint.public_url import server_url
from endpoint.service_description import describe_service
from endpoint.settings import Settings
from endpoint.sse import sse_text
from endpoint.stream_requests import (
    item_media_type,
    registration_text,
    resume_after,
    stream_definition,
    with_report_parameters,
)
from engine.api import Store
from engine.rdf import write_graph
from engine.sparql.exec import DEPTH_HEADER, OutboundPolicy, incoming_depth
from engine.sparql.syntax import is_registration
from engine.stream import NO_EVENT_YET, StreamEngine, Subscription

T = TypeVar("T")

#: events a subscriber may have waiting before it is considered stalled
SUBSCRIBER_QUEUE = 256


def rivulet_blueprint(store: Store, settings: Settings | None = None, streams: StreamEngine | None = None,
                      name: str = "rivulet") -> Blueprint:
    """A Blueprint serving ``store`` and its streams (a new
    :class:`StreamEngine` over ``store`` when none is given; it is closed
    when the interpreter exits)."""
    settings = settings or Settings()
    store.outbound_policy = OutboundPolicy.for_server(settings.outbound_allowed, settings.service)
    if streams is None:
        streams = StreamEngine(store, timeout=settings.query_timeout, max_rows=settings.max_rows)
        atexit.register(streams.close)
    views = _Views(store, settings, streams)
    blueprint = Blueprint(name, __name__)
    blueprint.before_request(views.limit_body)
    rules: list[tuple[str, Callable[..., Response], list[str]]] = [
        ("/sparql", views.sparql, ["GET", "POST"]),
        ("/streams", views.list_streams, ["GET"]),
        ("/streams/<name>", views.describe_stream, ["GET"]),
        ("/streams/<name>", views.declare_stream, ["PUT"]),
        ("/streams/<name>", views.ingest, ["POST"]),
        ("/streams/<name>", views.drop_stream, ["DELETE"]),
        ("/queries", views.list_queries, ["GET"]),
        ("/queries", views.register, ["POST"]),
        ("/queries/<path:name>/events", views.events, ["GET"]),
        ("/queries/<path:name>", views.describe_query, ["GET"]),
        ("/queries/<path:name>", views.unregister, ["DELETE"]),
    ]
    for rule, view, methods in rules:
        blueprint.add_url_rule(rule, endpoint=f"{view.__name__}_{'_'.join(methods)}", view_func=view,
                               methods=methods)
    blueprint.register_error_handler(Exception, views.error)
    return blueprint


class _Views:
    """The blueprint's view functions over one store and stream engine."""

    def __init__(self, store: Store, settings: Settings, streams: StreamEngine) -> None:
        self.store = store
        self.settings = settings
        self.streams = streams
        self._engine_calls = threading.BoundedSemaphore(settings.workers)

    # ------------------------------------------------------------ plumbing
    def limit_body(self) -> None:
        """Refuse bodies over ``Settings.max_body_bytes`` (413) before reading them."""
        request.max_content_length = self.settings.max_body_bytes

    def error(self, exc: Exception) -> Response | HTTPException:
        """Every failure as the Starlette application answers it; Werkzeug's
        own (404, 405 with ``Allow``, 413) as Werkzeug answers them."""
        if isinstance(exc, HTTPException):
            return exc
        problem = problem_for(exc, g.get("rivulet_operation"), self.settings.query_timeout,
                              g.get("rivulet_time_limit"))
        if problem is None:
            raise exc
        response = Response(problem.message + "\n", status=problem.status, mimetype="text/plain")
        for header, value in problem.headers:
            response.headers.add(header, value)
        return response

    def _call(self, fn: Callable[..., T], *args) -> T:
        with self._engine_calls:
            return fn(*args)

    def _url(self, path: str | None = None) -> str:
        """The public URL of the request's path, or of ``path`` under the
        blueprint's mount point (the application's root and the blueprint's
        prefix)."""
        if path is not None:
            queries = url_for(f"{request.blueprint}.list_queries_GET")
            path = queries.removesuffix("/queries") + path
        else:
            path = request.script_root + request.path
        server = (request.environ.get("SERVER_NAME", ""), int(request.environ.get("SERVER_PORT") or 0))
        return server_url(self.settings, request.scheme, server if server[0] else None, path,
                          request.host_url.rstrip("/"))

    def _require_write(self) -> None:
        check_write(request.headers, f"{request.scheme}://{request.host}", self.settings)

    def _accept(self) -> str | None:
        return negotiation.combined_accept(request.headers.getlist("Accept"))

    @staticmethod
    def _json(value: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        return Response(orjson.dumps(value), status=status, headers=headers, mimetype="application/json")

    @staticmethod
    def _no_content() -> Response:
        response = Response(status=204)
        del response.headers["Content-Type"]  # Flask's default (text/html) says nothing here
        return response

    @staticmethod
    def _streamed(chunks: Iterator[bytes], content_type: str) -> Response:
        """A streamed answer; its first chunk is written now, so that an
        error in it is answered with its status."""
        first = next(chunks, None)
        body = chunks if first is None else chain([first], chunks)
        return Response(body, headers={"Vary": "Accept"}, content_type=content_type)

    # ------------------------------------------------------------- /sparql
    def sparql(self) -> Response:
        params = list(request.args.items(multi=True))
        body = b"" if request.method in ("GET", "HEAD") else request.get_data(cache=False)
        operation = protocol.read_operation(request.method, params, request.headers.get("Content-Type"), body)
        if operation is None:
            offer = negotiation.pick_offer(negotiation.GRAPH, self._accept(), protocol.format_values(params))
            settings = self.settings
            triples = describe_service(self._url(), settings.read_only, settings.union_default_graph)
            return self._streamed(write_graph(offer.format, triples), offer.content_type)
        with incoming_depth(protocol.service_depth(request.headers.get(DEPTH_HEADER))):
            if operation.kind == "update":
                return self._update(operation)
            return self._query(operation)

    def _query(self, operation: protocol.Operation) -> Response:
        g.rivulet_operation = "query"
        base = self._url()
        plan = self.store.cached_plan(operation.text, base)
        if plan is None:
            protocol.refuse_registration_as_query(operation)
            plan = self._call(self.store.prepare, operation.text, base)
        deadline = time.monotonic() + self._time_limit(operation)
        union = self.settings.union_default_graph
        if operation.explain is not None:
            return self._json(self._call(self.store.explain, plan, operation.explain == "analyze",
                                         operation.graphs, operation.named_graphs,
                                         lambda: time.monotonic() > deadline, self.settings.max_rows, union))
        offer = negotiation.pick_offer(negotiation.offers_for(plan.form), self._accept(), operation.formats)
        result = self._call(self.store.execute, plan, operation.graphs, operation.named_graphs,
                            lambda: time.monotonic() > deadline, self.settings.max_rows, union)
        return self._streamed(answer_chunks(result, offer), offer.content_type)

    def _time_limit(self, operation: protocol.Operation) -> float:
        """The server's time limit, or the request's own (``timeout``) when shorter."""
        if operation.timeout is None:
            return self.settings.query_timeout
        g.rivulet_time_limit = min(operation.timeout, self.settings.query_timeout)
        return g.rivulet_time_limit

    def _update(self, operation: protocol.Operation) -> Response:
        self._require_write()
        base = self._url()
        if is_registration(operation.text):
            g.rivulet_operation = "registration"
            running = self._call(self.streams.register, operation.text, base)
            return self._json(running.to_json(), 201)
        g.rivulet_operation = "update"
        self._call(self.store.update, operation.text, base, operation.graphs, operation.named_graphs, False,
                   self.settings.max_rows, self._time_limit(operation))
        return self._no_content()

    # ------------------------------------------------------------ /streams
    def list_streams(self) -> Response:
        return self._json({"streams": [s.to_json() for s in self.streams.streams.values()]})

    def describe_stream(self, name: str) -> Response:
        return self._json(self.streams.stream(name).to_json())

    def declare_stream(self, name: str) -> Response:
        self._require_write()
        url = self._url()
        definition = stream_definition(name, request.get_data(cache=False), url)
        state, created = self._call(self.streams.declare_stream, definition)
        return self._json(state.to_json(), 201 if created else 200, {"Location": url})

    def ingest(self, name: str) -> Response:
        self._require_write()
        timestamp = request.headers.get("X-Timestamp") or request.args.get("timestamp")
        summary = self._call(self.streams.ingest_body, name, request.get_data(cache=False),
                             item_media_type(request.headers.get("Content-Type")), timestamp)
        return self._json(summary, 202)

    def drop_stream(self, name: str) -> Response:
        self._require_write()
        self._call(self.streams.drop_stream, name)
        return self._no_content()

    # ------------------------------------------------------------ /queries
    def list_queries(self) -> Response:
        return self._json({"queries": [q.to_json() for q in self.streams.queries.values()]})

    def describe_query(self, name: str) -> Response:
        return self._json(self.streams.query(name).to_json())

    def register(self) -> Response:
        self._require_write()
        content_type, body = request.headers.get("Content-Type"), request.get_data(cache=False)
        text = registration_text(content_type, body)
        g.rivulet_operation = "registration"
        text = with_report_parameters(text, content_type, body, request.args.items())
        base = self._url("/")
        running = self._call(self.streams.register, text, base)
        location = f"{base}queries/{quote(running.spec.name, safe='')}"
        return self._json(running.to_json(), 201, {"Location": location})

    def unregister(self, name: str) -> Response:
        self._require_write()
        self._call(self.streams.unregister, name)
        return self._no_content()

    def events(self, name: str) -> Response:
        """The query's windows as Server-Sent Events, resuming after ``Last-Event-ID``."""
        after = resume_after(request.headers.get("Last-Event-ID") or request.args.get("last_event_id"))
        subscription = self.streams.subscribe(name, after, SUBSCRIBER_QUEUE)
        return Response(stream_with_context(self._event_stream(name, subscription)),
                        mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    def _event_stream(self, name: str, subscription: Subscription) -> Iterator[str]:
        """Replay, then every live event, a comment when none came for a
        while (it keeps proxies from closing the connection, and a write to
        a client that left ends the stream); unsubscribes however it ends."""
        try:
            for event in subscription.replay:
                yield sse_text(event)
            while (event := subscription.wait(self.settings.sse_ping)) is not None:
                yield ": ping\n\n" if event is NO_EVENT_YET else sse_text(event)
        finally:
            self.streams.unsubscribe(name, subscription)
