"""What went wrong with a request, as the HTTP answer it gets, whatever the web framework.

The protocol code shared by the Starlette application and the Flask
blueprint raises :class:`ProtocolError` for bad requests; engine errors
propagate from the engine. :func:`problem_for` turns either into one
:class:`ProtocolError` (status, one line of text, headers), so both
frameworks answer every failure with the same status and message.
"""

from __future__ import annotations

from engine.api import QueryCancelled
from engine.rdf import NotXmlText
from engine.sparql.exec import ServiceError, UpdateError
from engine.sparql.syntax import SparqlSyntaxError
from engine.store import RowBudgetExceeded, StoreUnavailable
from engine.stream import StreamError


class ProtocolError(Exception):
    """A request the server refuses: its status, the message shown to the
    client, and extra headers (``Allow``, ``WWW-Authenticate``); a header
    name may repeat, as HTTP allows for challenges."""

    def __init__(self, status: int, message: str, headers: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or []


def problem_for(exc: Exception, operation: str | None, query_timeout: float,
                time_limit: float | None = None) -> ProtocolError | None:
    """The answer to ``exc`` raised while serving a request that handed a
    ``operation`` ("query", "update", "registration"; None when nothing was
    parsed) to the engine; None for an error that is the server's own fault
    (the framework answers 500 and logs it). ``time_limit``: the limit the
    request set itself (its ``timeout`` parameter, capped by the server's)."""
    if isinstance(exc, ProtocolError):
        return exc
    what = operation if operation in ("query", "update") else "request"
    unchanged = "; nothing was changed" if operation == "update" else ""
    if isinstance(exc, RowBudgetExceeded):
        return ProtocolError(503, f"{what} cancelled: {exc} (the server's --max-rows); nothing was changed")
    if isinstance(exc, QueryCancelled) and exc.reason == "shutdown":
        return ProtocolError(503, f"{what} cancelled: the server is shutting down{unchanged}; retry later",
                             [("Retry-After", "5")])
    if isinstance(exc, QueryCancelled) and time_limit is not None:
        return ProtocolError(503, f"{what} cancelled: it ran longer than the request's time limit of "
                                  f"{time_limit:g} s (its 'timeout' parameter, at most the server's "
                                  f"{query_timeout:g} s){unchanged}")
    if isinstance(exc, QueryCancelled):
        return ProtocolError(503, f"{what} cancelled: it ran longer than the server's time limit of "
                                  f"{query_timeout:g} s{unchanged}")
    if isinstance(exc, StoreUnavailable):
        return ProtocolError(503, f"the store is briefly unavailable, retry: {exc}",
                             [("Retry-After", str(exc.retry_after))])
    if isinstance(exc, NotXmlText):  # the answer holds a character the XML format cannot carry
        return ProtocolError(406, str(exc))
    if isinstance(exc, StreamError):
        return ProtocolError(exc.status, str(exc))
    if isinstance(exc, SparqlSyntaxError):
        return ProtocolError(400, f"malformed {operation or 'request'}: {exc}")
    if isinstance(exc, UpdateError):
        return ProtocolError(400, f"update failed, nothing was changed: {exc}")
    if isinstance(exc, ServiceError):
        # a SERVICE endpoint failed (502: the gateway's error, not ours) or the outbound policy refused (403)
        return ProtocolError(exc.status, str(exc))
    return None
