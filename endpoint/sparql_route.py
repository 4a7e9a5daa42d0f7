"""``/sparql``: the SPARQL 1.1 Protocol (query, update, service description).

Parse the request, hand the text to the engine in a worker thread, stream
the answer. The engine's errors become the protocol's status codes in the
application's error handlers (:mod:`endpoint.errors`): a syntax error is 400
with the parser's line and column, a query over its time limit 503, a
failing SERVICE endpoint 502.

Per request, a ``timeout`` parameter shortens the time limit (never past
the server's), and ``explain=plan`` / ``explain=analyze`` answer the
query's plan as JSON instead of its answer (:meth:`engine.api.Store.explain`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from endpoint import negotiation
from endpoint.asgi_requests import accept, read_operation, read_operation_with, require_write
from endpoint.errors import parsing
from endpoint.negotiation import Offer, offers_for
from endpoint.protocol import (
    Operation,
    form_pairs,
    format_values,
    operation_from_params,
    refuse_registration_as_query,
    service_depth,
)
from endpoint.public_url import public_url
from endpoint.responses import (
    INLINE_ROWS,
    graph_response,
    query_response,
    small_query_response,
)
from endpoint.service_description import describe_service
from endpoint.settings import Settings
from endpoint.workers import Workers
from engine.api import Store
from engine.sparql import algebra as A
from engine.sparql.exec import DEPTH_HEADER, incoming_depth
from engine.sparql.syntax import is_registration

#: entries of each of the short path's memories (GET readings, offers, base IRIs, shapes calling out)
REMEMBERED = 1024
#: the keyword of a pattern run by another endpoint (a string or comment naming it only costs a thread hop)
_SERVICE = re.compile(r"\bservice\b", re.IGNORECASE)


def calls_out(text: str) -> bool:
    """May the query wait on another endpoint (SERVICE)? Such a run waits
    without using the CPU, so its CPU time says nothing of how long it
    would hold the event loop (:mod:`endpoint.workers`)."""
    return _SERVICE.search(text) is not None


def _remembered(kept: dict, key: Hashable, make: Callable[[], object]):
    """``kept[key]``, made by ``make()`` when missing; the dict is emptied
    when it holds :data:`REMEMBERED` entries (these keep what clients send
    again and again, a few entries each). A ``make`` that raises keeps nothing."""
    found = kept.get(key)
    if found is None:
        if len(kept) >= REMEMBERED:
            kept.clear()
        found = kept[key] = make()
    return found


class SparqlRoute:
    """The handler of ``/sparql`` for one store."""

    def __init__(
        self, store: Store, settings: Settings, workers: Workers, register: Callable[[str, str], object]
    ) -> None:
        self.store = store
        self.settings = settings
        self.workers = workers
        #: registers a continuous query from its text (a REGISTER ... "update")
        self.register = register
        #: (query string, local address) -> the GET's operation and base IRI (see _read_get)
        self._recent_gets: dict[tuple, tuple[Operation | None, str]] = {}
        #: per cached shape: may its queries wait on another endpoint (see _calls_out)
        self._shapes_calling_out: dict[Hashable, bool] = {}
        #: (form, Accept lines, format parameters) -> the offer negotiated for them
        self._offers: dict[tuple, Offer] = {}
        #: (scheme, local address, path) -> the endpoint's URL, the base IRI (see _base)
        self._bases: dict[tuple, str] = {}

    async def handle(self, request: Request) -> Response:
        operation = await read_operation(request)
        if operation is None:
            return await self._describe(request)
        with incoming_depth(service_depth(request.headers.get(DEPTH_HEADER))):
            if operation.kind == "update":
                return await self._update(request, operation)
            return await self._query(request, operation)

    async def _query(self, request: Request, operation: Operation) -> Response:
        parsing(request, "query")
        base = public_url(request, self.settings)
        found = self.store.cached_shape(operation.text, base)
        if found is None:
            refuse_registration_as_query(operation)
            found = await self.workers.call(self.store.prepare_shape, operation.text, base)
        plan, shape = found
        time_limit = None if operation.timeout is None else self.workers.limit(request, operation.timeout)
        if operation.explain is not None:
            return await self._explain(request, operation, plan, time_limit)
        offer = negotiation.pick_offer(offers_for(plan.form), accept(request), operation.formats)

        def run(should_stop):
            return self.store.execute(plan, operation.graphs, operation.named_graphs, should_stop,
                                      self.settings.max_rows, self.settings.union_default_graph)

        result = await self.workers.run_plan(request, shape, run, time_limit, calls_out(operation.text))
        return await query_response(result, offer, self.workers)

    async def _explain(self, request: Request, operation: Operation, plan: A.Query,
                       time_limit: float | None) -> Response:
        """The query's plan as JSON; ``explain=analyze`` runs the query (under
        its time limit, cancelled as any query) to count each step's rows."""
        analyze = operation.explain == "analyze"

        def run(should_stop):
            return self.store.explain(plan, analyze, operation.graphs, operation.named_graphs, should_stop,
                                      self.settings.max_rows, self.settings.union_default_graph)

        explained = await self.workers.query(request, run, time_limit)
        return JSONResponse(explained, headers={"Vary": "Accept"})

    def answer_now(self, request: Request, body: bytes) -> Response | None:
        """The answer of a query (GET, or POST of a form or a query with its
        ``body``) that needs nothing but the event loop: its shape is cached
        (so it is not parsed), ran fast last time and again now, and its
        answer is small. None otherwise, and on any error: the request then
        takes the whole path (:meth:`handle`), which answers errors properly;
        a query changes nothing, so running it again there is safe. This
        path skips the middleware stack, the router and every thread hop."""
        if request.headers.get(DEPTH_HEADER):  # a SERVICE call from a server: the whole path
            return None
        try:
            if request.method == "GET":
                operation, base = self._read_get(request)
            else:
                operation = read_operation_with(request, body)
                base = self._base(request)
            if (operation is None or operation.kind != "query" or operation.graphs is not None
                    or operation.timeout is not None or operation.explain is not None):
                return None
            prepared = self.store.cached_prepared(operation.text, base)
            if prepared is None:
                return None
            shape = prepared.template
            if (prepared.form not in ("SELECT", "ASK") or not self.workers.runs_inline(shape)
                    or self._calls_out(shape, operation.text)):
                return None
            offer = self._offer(request, prepared.form, operation.formats)
            limit = self.settings.max_rows
            union = self.settings.union_default_graph
            result = self.workers.run_inline(shape, lambda stop: self.store.execute_prepared(
                prepared, should_stop=stop, max_rows=limit, union_default_graph=union))
            if result is None or len(result) > INLINE_ROWS:
                return None
            return small_query_response(result, offer)
        except Exception:  # the whole path answers it, errors included
            return None

    def _read_get(self, request: Request) -> tuple[Operation | None, str]:
        """The operation of a GET and the endpoint's URL (the base IRI), kept
        per query string: decoding a long percent-encoded query costs more
        than the rest of the short path."""
        def read() -> tuple[Operation | None, str]:
            # Starlette's query_params, read faster (protocol.form_pairs)
            params = form_pairs(request.scope["query_string"].decode("latin-1"))
            return operation_from_params(params, None), self._base(request)

        key = (request.scope["query_string"], request.scope.get("server"))
        return _remembered(self._recent_gets, key, read)

    def _calls_out(self, shape: Hashable, text: str) -> bool:
        """:func:`calls_out`, once per shape: a shape holds the SERVICE
        keyword of its text (a query naming one lifts nothing, so its shape
        is its very text), and the rest of a text says nothing more."""
        return _remembered(self._shapes_calling_out, shape, lambda: calls_out(text))

    def _offer(self, request: Request, form: str, formats: tuple[str, ...]) -> Offer:
        """The negotiated offer (:func:`negotiation.pick_offer`), kept per
        form, ``Accept`` lines and format parameters: clients send the same
        few. A refusal (406, 400) is raised, never kept."""
        lines = tuple(value for name, value in request.scope["headers"] if name == b"accept")
        return _remembered(self._offers, (form, lines, formats),
                           lambda: negotiation.pick_offer(offers_for(form), accept(request), formats))

    def _base(self, request: Request) -> str:
        """:func:`public_url` of the request, kept per scheme, local address
        and path (what it depends on when the server knows its address)."""
        scope = request.scope
        server = scope.get("server")
        if not server:
            return public_url(request, self.settings)
        return _remembered(self._bases, (scope["scheme"], server, scope["path"]),
                           lambda: public_url(request, self.settings))

    async def _update(self, request: Request, operation: Operation) -> Response:
        require_write(request, self.settings)
        if is_registration(operation.text):
            parsing(request, "registration")
            base = public_url(request, self.settings)
            running = await self.workers.call(self.register, operation.text, base)
            return JSONResponse(running.to_json(), status_code=201)
        parsing(request, "update")
        base = public_url(request, self.settings)
        requested = None if operation.timeout is None else self.workers.limit(request, operation.timeout)
        await self.workers.update(request, lambda time_limit, shutdown: self.store.update(
            operation.text, base, operation.graphs, operation.named_graphs, local_files=False,
            max_rows=self.settings.max_rows, time_limit=time_limit, shutdown=shutdown), requested)
        return Response(status_code=204)

    async def _describe(self, request: Request) -> Response:
        offer = negotiation.pick_offer(negotiation.GRAPH, accept(request),
                                       format_values(request.query_params.multi_items()))
        triples = describe_service(public_url(request, self.settings), self.settings.read_only,
                                   self.settings.union_default_graph)
        return await graph_response(triples, offer, self.workers, {"Vary": "Accept"})
