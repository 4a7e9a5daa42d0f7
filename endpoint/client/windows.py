"""A continuous query's windows, read from its Server-Sent Events and resumed across drops.

Each ``window`` event carries one window's answer (docs/http-api.md), and a
``window-error`` event a window whose evaluation failed (yielded too, with
its ``error``: skipping it would hide the failure); its id is the window's
sequence number. When the connection ends for any reason
(the server restarted, a proxy cut it, the server dropped a subscriber that
fell behind, a read timed out) the reader connects again with
``Last-Event-ID`` set to the last sequence it yielded, and the server
replays the windows after it from those it retains: none is lost or
repeated. A 5xx answer counts as a failed attempt too (a server or a proxy
restarting); reconnection is bounded: after ``attempts`` failures in a row
without a window in between, the reader gives up with a
:class:`~endpoint.client.errors.RivuletError`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import quote

import httpx

from endpoint.client.errors import RivuletError
from endpoint.client.sse import event_stream_lines, parse_events
from endpoint.client.terms import python_value


@dataclass(frozen=True)
class Window:
    """One reported window. ``bindings`` are the raw SPARQL 1.1 JSON bindings
    (CONSTRUCT: ``subject``/``predicate``/``object`` rows), ``rows`` the same
    as dicts of Python values; ``boolean`` is the answer of an ASK query.
    ``start_ms``/``end_ms`` bound the evaluation (``end_ms`` its instant);
    ``windows`` gives each stream window's own bounds (``stream``, ``name``,
    ``start_ms``, ``end_ms``), which differ when the windows' RANGEs or STEPs do.
    ``error`` is set (``reason``, ``message``) for a window whose evaluation
    failed (a ``window-error`` event: its time limit, its row budget): it has
    no rows, and the windows after it come as usual."""

    query: str
    sequence: int
    start_ms: int
    end_ms: int
    closed_at_ms: int
    reported_at_ms: int
    variables: list[str]
    bindings: list[dict] = field(default_factory=list)
    boolean: bool | None = None
    windows: list[dict] = field(default_factory=list)
    error: dict | None = None

    @classmethod
    def from_json(cls, data: dict) -> Window:
        """A window from the JSON ``data`` of a ``window`` event."""
        results = data.get("results") or {}
        return cls(
            query=data["query"],
            sequence=int(data["sequence"]),
            start_ms=int(data["window"]["start_ms"]),
            end_ms=int(data["window"]["end_ms"]),
            closed_at_ms=int(data.get("closed_at_ms", 0)),
            reported_at_ms=int(data.get("reported_at_ms", 0)),
            variables=list(results.get("head", {}).get("vars", [])),
            bindings=list(results.get("results", {}).get("bindings", [])),
            boolean=results.get("boolean"),
            windows=list(data.get("windows", [])),
            error=data.get("error"),
        )

    @property
    def rows(self) -> list[dict[str, object]]:
        """Each solution as ``{variable: Python value}`` (unbound variables left out)."""
        return [{name: python_value(term) for name, term in binding.items()} for binding in self.bindings]


@dataclass(frozen=True)
class Reconnect:
    """How a reader reconnects: at most ``attempts`` failures in a row, waiting
    ``delay`` seconds after the first and doubling up to ``max_delay``; a
    connection that hears nothing (not even the server's ping every 15 s)
    for ``read_timeout`` seconds counts as dropped."""

    attempts: int = 10
    delay: float = 0.5
    max_delay: float = 10.0
    read_timeout: float = 60.0


DEFAULT_RECONNECT = Reconnect()


class _Transient(Exception):
    """An error answer worth connecting again for (5xx)."""


def read_windows(http: httpx.Client, name: str, after: int,
                 reconnect: Reconnect = DEFAULT_RECONNECT) -> Iterator[Window]:
    """The windows of query ``name`` reported after sequence ``after``, for as
    long as the query is registered: the iteration ends when a connection
    finds the query gone (404). Any other error answer raises; so do
    ``reconnect.attempts`` failed reconnections in a row."""
    path = f"/queries/{quote(name, safe='')}"
    timeout = httpx.Timeout(http.timeout.connect, read=reconnect.read_timeout,
                            write=http.timeout.write, pool=http.timeout.pool)
    last = after
    failures = 0
    first_delay = delay = reconnect.delay
    while True:
        problem: Exception | str = "the server ended the event stream"
        try:
            with http.stream("GET", path + "/events", timeout=timeout, headers={
                "Accept": "text/event-stream", "Cache-Control": "no-cache", "Last-Event-ID": str(last),
            }) as response:
                if response.status_code == 404:
                    return  # the query was unregistered
                if response.status_code >= 400:
                    response.read()
                    error = RivuletError.from_response(response)
                    if response.status_code < 500:
                        raise error
                    raise _Transient(error)  # a server or a proxy in its way may be restarting
                for event in parse_events(event_stream_lines(response.iter_text())):
                    if event.retry_ms is not None:  # the server's own reconnection delay
                        first_delay = delay = event.retry_ms / 1000
                    if event.event in ("window", "window-error"):
                        window = Window.from_json(json.loads(event.data))
                        last = window.sequence
                        failures, delay = 0, first_delay
                        yield window
        except (httpx.TransportError, _Transient) as exc:
            problem = exc
        failures += 1
        if failures > reconnect.attempts:
            raise RivuletError(None, f"lost the events of query {name!r} after {reconnect.attempts} "
                                     f"reconnection attempts; last problem: {problem}",
                               method="GET", url=str(http.base_url.join(path + "/events")))
        time.sleep(delay)
        delay = min(delay * 2, reconnect.max_delay)
