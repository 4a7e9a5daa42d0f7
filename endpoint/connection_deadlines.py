"""How long the server waits on a client, and how it closes a connection the
client is still writing to (``rivulet serve --keep-alive-timeout``,
``--request-timeout`` and ``--send-timeout``; docs/operations.md,
"Connections").

Every connection holds a file descriptor, and uvicorn closes one only after
answering on it: a client that connects and sends nothing, or sends its
request a byte at a time (slowloris), held its descriptor for ever, and a few
hundred of them left the server unable to accept anyone. So:

- **idle**: a connection with no request under way, before its first one or
  between two, is closed after the keep-alive timeout (uvicorn's own timer,
  which it arms only after a response; here it is armed when the connection
  opens too).
- **slow**: a request must arrive whole, head and body, within the request
  timeout of its first byte, plus one second for every
  :data:`BODY_BYTES_PER_SECOND` of body received, so that an upload at a
  steady rate is never cut while a byte at a time is. Such a connection gets
  ``408 Request Timeout`` and is closed. The clock waits while the server is
  the one behind (reading paused while pipelined requests queue, an answer
  being computed or written): a response being written, an event stream
  above all, is never cut by these bounds.
- **not reading**: a client that takes none of what the server writes to it
  for the send timeout (the transport holds more than its high-water mark,
  and not a byte of it left in all that time) is cut off: its connection is
  aborted, the response's sends return, and its scope says why
  (:data:`SEND_STALLED`; an event-stream subscriber so cut off is counted as
  dropped). A client that reads slowly keeps its connection.
- **large heads**: a request's head (request line and headers) may hold at
  most :data:`MAX_HEAD_BYTES`; a larger one gets ``431 Request Header Fields
  Too Large`` and the connection is closed, so a client streaming an endless
  header within the request timeout cannot take the server's memory (a long
  query belongs in a POST body, which ``--max-body`` bounds). The h11
  protocol (connections that offered an upgrade) has h11's own, smaller bound.
- **closing while the client writes**: a connection closed while its request
  body is still arriving (an early answer such as 413 with ``Connection:
  close``) is reset by the kernel if unread data is left, and a client that
  sends its whole body before reading (Python's urllib) then sees the reset,
  not the answer. The server instead ends its side after the answer and reads
  and discards what still comes, until the client closes or for at most
  :data:`LINGER_SECONDS` (a lingering close).

:class:`ConnectionDeadlines` is mixed into both of the server's protocols
(:mod:`endpoint.http_protocol`); each says when a request begins, when its
head and its body have arrived.
"""

from __future__ import annotations

import asyncio
from typing import Any

#: seconds a request's head and body may take to arrive (--request-timeout)
DEFAULT_REQUEST_TIMEOUT = 30.0
#: seconds a connection with no request under way stays open (--keep-alive-timeout)
DEFAULT_KEEP_ALIVE_TIMEOUT = 5.0
#: body bytes that earn a slow request one more second
BODY_BYTES_PER_SECOND = 64 * 1024
#: seconds a client may take none of what is written to it (--send-timeout)
DEFAULT_SEND_TIMEOUT = 30.0
#: seconds a closing connection keeps reading the rest of a request body
LINGER_SECONDS = 5.0
#: bytes a request's head (request line and headers) may hold
MAX_HEAD_BYTES = 64 * 1024
#: set in the scope of a request whose body stopped arriving in time
REQUEST_TIMED_OUT = "rivulet.request_timed_out"
#: set in the scope of a request whose client stopped reading its answer
SEND_STALLED = "rivulet.send_stalled"

_TIMEOUT_MESSAGE = b"the request did not arrive whole in time (the server's --request-timeout)\n"
REQUEST_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: " + str(len(_TIMEOUT_MESSAGE)).encode() + b"\r\nconnection: close\r\n\r\n"
    + _TIMEOUT_MESSAGE)

_HEAD_MESSAGE = (f"the request's head (request line and headers) is larger than "
                 f"{MAX_HEAD_BYTES // 1024} KiB: send a long query in a POST body\n").encode()
HEAD_TOO_LARGE_RESPONSE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: " + str(len(_HEAD_MESSAGE)).encode() + b"\r\nconnection: close\r\n\r\n"
    + _HEAD_MESSAGE)


class ClosingTransport:
    """The connection's transport as uvicorn's protocol code sees it: the
    same, except that ``close()`` asks the protocol, which closes lingering
    while a request body is still arriving."""

    def __init__(self, transport: asyncio.Transport, protocol: ConnectionDeadlines) -> None:
        self.raw = transport
        self._protocol = protocol
        # the calls of every request, bound once (the others go through __getattr__)
        self.write = transport.write
        self.pause_reading = transport.pause_reading
        self.resume_reading = transport.resume_reading

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)

    def close(self) -> None:
        self._protocol.close_connection()

    def is_closing(self) -> bool:
        return self._protocol.lingering or self.raw.is_closing()


class ConnectionDeadlines:
    """The bounds of the module docstring, for a uvicorn HTTP protocol class
    (it uses their ``loop``, ``transport``, ``flow``, ``cycle``, ``logger``,
    ``client`` and keep-alive timer). The protocol calls
    :meth:`request_begun`, :meth:`head_received` and :meth:`request_received`
    as a request arrives, and :meth:`body_received` with its body's bytes."""

    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    send_timeout: float = DEFAULT_SEND_TIMEOUT
    _request_timer: asyncio.TimerHandle | None = None
    _send_timer: asyncio.TimerHandle | None = None
    _send_buffered = 0
    _linger_timer: asyncio.TimerHandle | None = None
    #: when the request under way began (loop time); None: none is
    _request_started: float | None = None
    _body_bytes = 0
    #: the head of the request under way has arrived (its cycle is ``self.cycle``)
    _head_read = False
    #: bytes received while the head of the request under way was still arriving
    _head_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(ClosingTransport(transport, self))  # type: ignore[misc]
        # idle before its first request, as uvicorn's timer makes it idle between two
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive,
                                                            self.timeout_keep_alive_handler)

    def connection_lost(self, exc: Exception | None) -> None:
        self.release()
        if self._linger_timer is not None:
            self._linger_timer.cancel()
        super().connection_lost(exc)  # type: ignore[misc]

    def pause_writing(self) -> None:
        """The transport holds more than it wants of what was written: the
        client has that long to take some (the send clock)."""
        super().pause_writing()  # type: ignore[misc]
        if self._send_timer is None:
            self._send_buffered = self.raw_transport.get_write_buffer_size()
            self._send_timer = self.loop.call_later(self.send_timeout, self._send_stalled)

    def resume_writing(self) -> None:
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None
        super().resume_writing()  # type: ignore[misc]

    def _send_stalled(self) -> None:
        """Cut off a client that read nothing for the send timeout (while
        writing is paused nothing is added, so a smaller buffer means the
        client took some)."""
        self._send_timer = None
        buffered = self.raw_transport.get_write_buffer_size()
        if buffered < self._send_buffered:
            self._send_buffered = buffered
            self._send_timer = self.loop.call_later(self.send_timeout, self._send_stalled)
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            cycle.scope[SEND_STALLED] = True
        self.raw_transport.abort()  # close() would wait for the buffer to drain

    @property
    def lingering(self) -> bool:
        return self._linger_timer is not None

    @property
    def raw_transport(self) -> asyncio.Transport:
        """The transport under :class:`ClosingTransport`."""
        return self.transport.raw

    def release(self) -> asyncio.Transport:
        """Stop every clock: the connection is gone, or another protocol
        takes it over (given the transport returned)."""
        self._stop_waiting()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None
        return self.raw_transport

    # --------------------------------------------------------- request clock
    def request_begun(self) -> None:
        """The first byte of a request arrived: its clock starts (unless running).
        One timer serves the connection's requests in turn: it is armed only
        when none is pending (a timer costs microseconds, a request a few
        hundred), and when it fires it looks at the request under way then."""
        self._head_read = False
        if self._request_started is None:
            self._request_started = self.loop.time()
            self._body_bytes = 0
            if self._request_timer is None:
                self._request_timer = self.loop.call_later(self.request_timeout, self._request_overdue)

    def head_received(self) -> None:
        """The request's head arrived: ``self.cycle`` is the request's."""
        self._head_read = True

    def head_too_large(self, received: int) -> bool:
        """``received`` bytes were read; whether, with those before them since
        the request under way began, its head (still not whole) is over
        :data:`MAX_HEAD_BYTES`: then it is answered 431 and the connection
        closed. Counted by read, so the bound is exceeded by one read at most."""
        if self._request_started is None or self._head_read:
            self._head_bytes = 0
            return False
        self._head_bytes += received
        if self._head_bytes <= MAX_HEAD_BYTES:
            return False
        client = "{}:{}".format(*self.client) if self.client else "a client"
        self.logger.warning("closed the connection of %s: its request's head passed %d bytes (431)",
                            client, MAX_HEAD_BYTES)
        self._stop_waiting()
        self.raw_transport.write(HEAD_TOO_LARGE_RESPONSE)
        self.raw_transport.close()
        return True

    def body_received(self, size: int) -> None:
        """``size`` more bytes of body arrived; they earn time while the
        application still waits for them (not once it has answered)."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            self._body_bytes += size

    def request_received(self) -> None:
        """The request arrived whole: no clock runs until the next one begins."""
        self._head_read = False
        self._request_started = None

    def _stop_waiting(self) -> None:
        """No request, nor the next one, is waited for any more."""
        self.request_received()
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None
        if self.timeout_keep_alive_task is not None:
            self.timeout_keep_alive_task.cancel()
            self.timeout_keep_alive_task = None

    def _request_overdue(self) -> None:
        self._request_timer = None
        if self._request_started is None or self.transport.is_closing():
            return
        now = self.loop.time()
        if self._server_behind():  # the client waits for the server: its clock starts again
            self._request_started, self._body_bytes = now, 0
            self._request_timer = self.loop.call_later(self.request_timeout, self._request_overdue)
            return
        allowed = self.request_timeout + self._body_bytes / BODY_BYTES_PER_SECOND
        waited = now - self._request_started
        if waited < allowed:
            self._request_timer = self.loop.call_later(allowed - waited, self._request_overdue)
            return
        self._close_slow_request(waited)

    def _server_behind(self) -> bool:
        """Whether the server, not the client, holds the request up: it paused
        reading, it has not yet asked for a body the client holds back until
        then (``Expect: 100-continue``), or an answer whose request arrived
        whole is being made or written (an earlier pipelined one, an event
        stream)."""
        if self.flow.read_paused:
            return True
        cycle = self.cycle
        return (cycle is not None and not cycle.response_complete
                and (cycle.response_started or not cycle.more_body or cycle.waiting_for_100_continue))

    def _close_slow_request(self, waited: float) -> None:
        """408 and close, unless the request was already answered; the
        application waiting for the body sees the client gone."""
        cycle = self.cycle if self._head_read else None
        if cycle is not None:
            cycle.scope[REQUEST_TIMED_OUT] = True  # named in the route's log line
            cycle.disconnected = True
            cycle.message_event.set()
        else:
            client = "{}:{}".format(*self.client) if self.client else "a client"
            self.logger.info("closed the connection of %s: its request did not arrive whole within "
                             "%.0f s (--request-timeout)", client, waited)
        if cycle is None or not cycle.response_complete:
            self.raw_transport.write(REQUEST_TIMEOUT_RESPONSE)
        self.raw_transport.close()  # a client this slow is not lingered for

    # --------------------------------------------------------------- closing
    def close_connection(self) -> None:
        """Close now if no request is arriving; else end the server's side
        after what is written and discard the rest of the request for at most
        :data:`LINGER_SECONDS`, so that the client reads the answer."""
        raw = self.raw_transport
        if self.lingering or raw.is_closing():
            return
        arriving = self._request_started is not None
        self._stop_waiting()  # the send clock goes on: close() waits for the client to take the rest
        if not arriving or not raw.can_write_eof():
            raw.close()
            return
        raw.write_eof()
        self._linger_timer = self.loop.call_later(LINGER_SECONDS, raw.close)
        self.flow.resume_reading()
