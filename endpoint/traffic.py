"""The HTTP traffic for ``/metrics``: every request counted by kind and
outcome, and its duration.

One ASGI wrapper sees every request, the GET ``/sparql`` short path
included (:class:`endpoint.app.RivuletApp` runs it inside the wrapper), so
the routes need no code of their own. It reads what the request left in its
scope once answered: the operation the route handed to the parser
(``rivulet.operation``: query, update, registration), and why a query was
cancelled (``rivulet.cancelled``, set by :mod:`endpoint.workers`); a request
that never reached a parser is classified by its path. The probes and the
scrape itself are not counted: they are not the service's traffic.
"""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Histogram
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from endpoint.errors import CLIENT_CLOSED, OPERATION
from endpoint.workers import CANCELLED
from engine.stream.window_stats import SECONDS_BUCKETS

#: paths whose requests are not counted (probes, the scrape)
UNCOUNTED = frozenset({"/healthz", "/readyz", "/metrics"})
#: an SSE subscription: counted, but its duration is the subscriber's stay, not a latency
SUBSCRIPTION = "subscription"


class Traffic:
    """The request counter and duration histogram of one application."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "rivulet_requests", "HTTP requests answered, by kind (query, update, registration, or the "
            "route family when no parser was reached) and outcome", ["kind", "outcome"], registry=registry)
        self.duration = Histogram(
            "rivulet_request_duration_seconds", "Time from a request's arrival to the last byte of its "
            "answer, by kind (SSE subscriptions apart)", ["kind"], buckets=SECONDS_BUCKETS, registry=registry)
        # the labelled children, looked up once: labels() takes a lock and
        # builds a key, which costs more than the count itself
        self._counts: dict[tuple[str, str], Counter] = {}
        self._durations: dict[str, Histogram] = {}

    async def observe(self, scope: Scope, receive: Receive, send: Send, app: ASGIApp) -> None:
        """Run ``app`` on one HTTP request and count it once it is answered."""
        if scope["path"] in UNCOUNTED:
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        status: int | None = None
        finished = False

        async def watched(message: Message) -> None:
            nonlocal status, finished
            await send(message)
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                finished = True

        error: BaseException | None = None
        try:
            await app(scope, receive, watched)
        except BaseException as exc:
            error = exc
            raise
        finally:
            self._record(scope, status, finished, error, time.perf_counter() - started)

    def answered(self, scope: Scope, status: int, seconds: float) -> None:
        """Count a request answered whole outside the application (the
        server's quick lane, :mod:`endpoint.quick_lane`)."""
        self._record(scope, status, True, None, seconds)

    def _record(self, scope: Scope, status: int | None, finished: bool, error: BaseException | None,
                seconds: float) -> None:
        kind = kind_of(scope)
        key = (kind, outcome_of(scope, kind, status, finished, error))
        count = self._counts.get(key)
        if count is None:
            count = self._counts[key] = self.requests.labels(*key)
        count.inc()
        if kind == SUBSCRIPTION:
            return
        duration = self._durations.get(kind)
        if duration is None:
            duration = self._durations[kind] = self.duration.labels(kind)
        duration.observe(seconds)


def kind_of(scope: Scope) -> str:
    """What a request was: the operation it handed to a parser, else its route family."""
    operation = scope.get(OPERATION)
    if operation is not None:
        return operation
    path = scope["path"]
    if path == "/sparql":
        return "sparql"  # the service description, or refused before its text was parsed
    if path == "/store" or path.startswith("/store/"):
        return "graph_store"
    if path.startswith("/streams"):
        return "stream"
    if path.startswith("/queries/") and path.endswith("/events") and scope["method"] == "GET":
        return SUBSCRIPTION
    if path.startswith("/queries"):
        return "continuous"
    return "other"  # the console and its files, unknown paths


def outcome_of(scope: Scope, kind: str, status: int | None, finished: bool,
               error: BaseException | None) -> str:
    """How a request ended: ok, client_error, cancelled (the client went away),
    timeout (the time limit), limit (another 503: the --max-rows budget),
    upstream_error (502: a SERVICE endpoint failed) or server_error."""
    cancelled = scope.get(CANCELLED)
    if cancelled == "time_limit":
        return "timeout"
    if cancelled == "client_gone" or status == CLIENT_CLOSED:
        return "cancelled"
    if error is not None:
        went_away = isinstance(error, ClientDisconnect | OSError) or not isinstance(error, Exception)
        return "cancelled" if went_away else "server_error"
    if status is None:
        return "server_error"  # the application returned without answering
    if not finished and kind != SUBSCRIPTION:
        return "cancelled"  # the answer stopped early: its client disconnected
    if status < 400:
        return "ok"
    if status < 500:
        return "client_error"
    if status == 503:
        return "limit"
    if status == 502:
        return "upstream_error"
    return "server_error"
