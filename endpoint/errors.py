"""From engine errors to HTTP answers: one Starlette exception handler per family.

Routes let engine errors propagate; the application maps each family to its
status here, in one place, as one line of text ending in a newline (so that
curl users see the message on its own line). A stream error carries its own
status. A syntax error names what was being parsed ("malformed query",
"malformed update", "malformed registration"): the route that hands text to
the parser says which with :func:`parsing`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from endpoint.workers import ClientGone
from engine.api import QueryCancelled
from engine.rdf import NotXmlText
from engine.sparql.exec import ServiceError, UpdateError
from engine.sparql.syntax import SparqlSyntaxError
from engine.store import RowBudgetExceeded
from engine.stream import StreamError

#: answer for a client that went away (nginx's code; nobody reads it)
CLIENT_CLOSED = 499
#: the scope key naming what a request hands to a parser
OPERATION = "rivulet.operation"

Handler = Callable[[Request, Exception], Awaitable[Response]]


def parsing(request: Request, operation: str) -> None:
    """Name the text this request hands to a parser ("query", "update",
    "registration"), for the message of a syntax error."""
    request.scope[OPERATION] = operation


def error_handlers(query_timeout: float) -> dict[type[Exception], Handler]:
    """The handlers to give Starlette, for a server whose queries stop after
    ``query_timeout`` seconds."""

    async def query_cancelled(request: Request, exc: QueryCancelled) -> Response:
        return _text(503, "query cancelled: it ran longer than the server's time limit of "
                          f"{query_timeout:g} s")

    async def rows_exceeded(request: Request, exc: RowBudgetExceeded) -> Response:
        return _text(503, f"query cancelled: {exc} (the server's --max-rows); nothing was changed")

    return {
        HTTPException: http_error,
        NotXmlText: not_xml_text,
        RowBudgetExceeded: rows_exceeded,
        StreamError: stream_error,
        SparqlSyntaxError: syntax_error,
        UpdateError: update_error,
        ServiceError: service_error,
        QueryCancelled: query_cancelled,
        ClientGone: client_gone,
    }


async def http_error(request: Request, exc: HTTPException) -> Response:
    return PlainTextResponse(exc.detail + "\n", status_code=exc.status_code, headers=exc.headers)


async def stream_error(request: Request, exc: StreamError) -> Response:
    return _text(exc.status, str(exc))


async def syntax_error(request: Request, exc: SparqlSyntaxError) -> Response:
    operation = request.scope.get(OPERATION, "request")
    return _text(400, f"malformed {operation}: {exc}")


async def update_error(request: Request, exc: UpdateError) -> Response:
    return _text(400, f"update failed, nothing was changed: {exc}")


async def service_error(request: Request, exc: ServiceError) -> Response:
    """A SERVICE endpoint failed (502: the gateway's error, not ours), or the
    server's outbound policy refused the call (403)."""
    return _text(exc.status, str(exc))


async def not_xml_text(request: Request, exc: NotXmlText) -> Response:
    """The answer holds a character the negotiated XML format cannot carry."""
    return _text(406, str(exc))


async def client_gone(request: Request, exc: ClientGone) -> Response:
    return Response(status_code=CLIENT_CLOSED)


def _text(status: int, message: str) -> Response:
    return PlainTextResponse(message + "\n", status_code=status)
