"""From errors to HTTP answers in the Starlette application.

Routes let engine errors and :class:`~endpoint.problems.ProtocolError`
propagate; :func:`~endpoint.problems.problem_for` decides each one's status
and message (the same for the Flask blueprint), and the handlers here send
it as one line of text ending in a newline (so that curl users see the
message on its own line). A syntax error names what was being parsed
("malformed query", "malformed update", "malformed registration"): the
route that hands text to the parser says which with :func:`parsing`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response

from endpoint.connection_deadlines import REQUEST_TIMED_OUT
from endpoint.problems import ProtocolError, problem_for
from endpoint.workers import TIME_LIMIT, ClientGone
from engine.api import QueryCancelled
from engine.rdf import NotXmlText
from engine.sparql.exec import ServiceError, UpdateError
from engine.sparql.syntax import SparqlSyntaxError
from engine.store import RowBudgetExceeded, StoreUnavailable
from engine.stream import StreamError

#: answer for a client that went away (nginx's code; nobody reads it)
CLIENT_CLOSED = 499
#: the scope key naming what a request hands to a parser
OPERATION = "rivulet.operation"
#: the errors :func:`~endpoint.problems.problem_for` answers
ANSWERED = (ProtocolError, NotXmlText, RowBudgetExceeded, StreamError, SparqlSyntaxError, UpdateError,
            ServiceError, QueryCancelled, StoreUnavailable)

Handler = Callable[[Request, Exception], Awaitable[Response]]

log = logging.getLogger("rivulet.endpoint")


def parsing(request: Request, operation: str) -> None:
    """Name the text this request hands to a parser ("query", "update",
    "registration"), for the message of a syntax error."""
    request.scope[OPERATION] = operation


def error_handlers(query_timeout: float) -> dict[type[Exception], Handler]:
    """The handlers to give Starlette, for a server whose queries stop after
    ``query_timeout`` seconds."""

    async def answered(request: Request, exc: Exception) -> Response:
        problem = problem_for(exc, request.scope.get(OPERATION), query_timeout, request.scope.get(TIME_LIMIT))
        assert problem is not None  # every class of ANSWERED has an answer
        return problem_response(problem)

    handlers: dict[type[Exception], Handler] = {kind: answered for kind in ANSWERED}
    handlers[HTTPException] = http_error
    handlers[ClientGone] = client_gone
    handlers[ClientDisconnect] = body_cut_off
    return handlers


def problem_response(problem: ProtocolError) -> Response:
    """The problem as text, with its headers (a header may repeat)."""
    response = PlainTextResponse(problem.message + "\n", status_code=problem.status)
    for name, value in problem.headers:
        response.headers.append(name, value)
    return response


async def http_error(request: Request, exc: HTTPException) -> Response:
    return PlainTextResponse(exc.detail + "\n", status_code=exc.status_code, headers=exc.headers)


async def client_gone(request: Request, exc: ClientGone) -> Response:
    return Response(status_code=CLIENT_CLOSED)


async def body_cut_off(request: Request, exc: ClientDisconnect) -> Response:
    """A request whose body stopped before its end: the client left, or sent
    too slowly (the server's --request-timeout). One line in the log, no
    traceback: it says nothing about the server. Nothing was carried out:
    every route reads its whole body before it acts."""
    client = f"{request.client.host}:{request.client.port}" if request.client else "a client"
    why = ("did not arrive whole in time (--request-timeout)" if request.scope.get(REQUEST_TIMED_OUT)
           else "stopped short: the client left")
    log.warning("%s %s from %s: the request body %s; nothing was done", request.method,
                request.url.path, client, why)
    return Response(status_code=CLIENT_CLOSED)
