"""Small queries answered by the HTTP protocol itself, without an ASGI cycle.

A small query to ``/sparql`` whose shape is cached is answered in a few
tens of microseconds; what uvicorn does around it cost more: a task per
request and a turn of the event loop to start it, the ASGI messages and the
wrappers each passes through (proxy headers, traffic metrics, the
application's short path, the head-holding transport), and their coroutine
switches. :class:`QuickLane`, mixed into the server's protocol, asks the
application for the whole answer as soon as the request has arrived
(:meth:`endpoint.app.RivuletApp.quick_answer`) and writes it with one
``write``, head and body, on the request's own cycle (so pipelining, the
keep-alive and request clocks and a shutdown see a request like any other).
When the application declines (not a cached shape, too slow, too large, an
error to answer, an ASGI-only concern) the request's task starts as uvicorn
would have started it, with its body already read.

Taken only where the lane sees everything the whole path would: never with
``--access-log`` (uvicorn's access logger is in the ASGI send), never for a
request a proxy names its client for (``X-Forwarded-For`` or
``-Proto``: uvicorn's proxy-headers middleware rewrites the scope), never
for ``Expect: 100-continue``, a chunked body, or while the transport holds
back writes.
"""

from __future__ import annotations

from typing import Any, Protocol

from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, RequestResponseCycle

#: a whole answer: status, headers, body
Answer = tuple[int, list[tuple[bytes, bytes]], bytes]
#: request headers that keep a request off the lane (see the module docstring)
_OFF_LANE = frozenset({b"x-forwarded-for", b"x-forwarded-proto", b"transfer-encoding"})


class QuickAnswerer(Protocol):
    """What an application offers the lane (``RivuletApp`` and the fronts of
    ``--processes``)."""

    def takes_quickly(self, scope: dict) -> bool: ...

    def quick_answer(self, scope: dict, body: bytes) -> Answer | None: ...


def quick_answerer(app: Any) -> QuickAnswerer | None:
    """The application under uvicorn's own wrapper that answers quickly, if any."""
    if isinstance(app, ProxyHeadersMiddleware):
        app = app.app
    return app if hasattr(app, "quick_answer") else None


class QuickLane:
    """The lane, for uvicorn's httptools protocol (uses its ``app``,
    ``access_log``, ``transport``, ``flow``, ``cycle`` and ``server_state``)."""

    #: the application's answerer; None: the lane is closed on this connection
    _answerer: QuickAnswerer | None = None
    #: a cycle on the lane whose body is still arriving, and the app to run if declined
    _waiting: tuple[RequestResponseCycle, Any] | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._answerer = None if self.access_log else quick_answerer(self.app)  # type: ignore[attr-defined]

    def on_message_begin(self) -> None:
        # an answer given inside this read armed the idle timer: the next request is not idle
        self._unset_keepalive_if_required()  # type: ignore[attr-defined]
        super().on_message_begin()  # type: ignore[misc]

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        """uvicorn starts a request's task here (its head read, or its turn
        come after pipelined ones): a request on the lane waits for its body
        instead, then is answered or started."""
        if self._on_lane(cycle, app):
            if cycle.more_body:
                self._waiting = (cycle, app)
                return
            if self._answer(cycle):
                return
        super()._start_asgi_task(cycle, app)  # type: ignore[misc]

    def on_message_complete(self) -> None:
        super().on_message_complete()  # type: ignore[misc]
        waiting = self._waiting
        if waiting is not None and waiting[0] is self.cycle:  # type: ignore[attr-defined]
            self._waiting = None
            cycle, app = waiting
            if not self._answer(cycle):
                super()._start_asgi_task(cycle, app)  # type: ignore[misc]

    def _close_slow_request(self, waited: float) -> None:
        """The request clock gave up on a request whose body was still
        arriving: its application runs on it, to see why as it would have."""
        waiting, self._waiting = self._waiting, None
        super()._close_slow_request(waited)  # type: ignore[misc]
        if waiting is not None:
            super()._start_asgi_task(*waiting)  # type: ignore[misc]

    def connection_lost(self, exc: Exception | None) -> None:
        waiting, self._waiting = self._waiting, None
        super().connection_lost(exc)  # type: ignore[misc]
        if waiting is not None:  # the application sees its client gone, and counts it
            super()._start_asgi_task(*waiting)  # type: ignore[misc]

    def _on_lane(self, cycle: RequestResponseCycle, app: Any) -> bool:
        answerer = self._answerer
        if answerer is None or app is not self.app or cycle.waiting_for_100_continue:  # type: ignore[attr-defined]
            return False
        scope = cycle.scope
        if any(name in _OFF_LANE for name, _ in scope["headers"]):
            return False
        return answerer.takes_quickly(scope)

    def _answer(self, cycle: RequestResponseCycle) -> bool:
        """Answer ``cycle`` whole, as uvicorn's ``send`` would have written
        it; False (nothing written) if the application declines."""
        if cycle.disconnected:
            return True  # nobody to answer; uvicorn's send would write nothing either
        if self.flow.write_paused:  # type: ignore[attr-defined]
            return False  # the answer must wait for the client to read: the task can
        try:
            answer = self._answerer.quick_answer(cycle.scope, bytes(cycle.body))  # type: ignore[union-attr]
        except Exception:  # the whole path answers it, errors included
            return False
        if answer is None:
            return False
        status, headers, body = answer
        content = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers + headers:  # type: ignore[attr-defined]
            content += (name, b": ", value, b"\r\n")
        if not cycle.keep_alive:
            content.append(b"connection: close\r\n")
        content += (b"\r\n", body)
        cycle.response_started = True
        cycle.response_complete = True
        self.transport.write(b"".join(content))  # type: ignore[attr-defined]
        cycle.message_event.set()
        if not cycle.keep_alive:
            self.transport.close()  # type: ignore[attr-defined]
        cycle.on_response()
        return True
