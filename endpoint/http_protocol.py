"""The HTTP/1.1 protocol the server runs: uvicorn's httptools protocol, with
the connection bounds of :mod:`endpoint.connection_deadlines`, and a request
offering to switch to a protocol other than WebSocket answered in plain
HTTP/1.1, whole and without a warning.

Java's HTTP client (Jena's ``rsparql`` and ``rupdate``, anything built on
``java.net.http``) opens a connection with ``Connection: Upgrade,
HTTP2-Settings`` and ``Upgrade: h2c``. A server may ignore such an offer and
answer in HTTP/1.1 (RFC 9110, section 7.8); the client then goes on in
HTTP/1.1. uvicorn's httptools protocol does not manage that: its parser
(llhttp) takes every byte after the offering request's head for the new
protocol, so a POST's body never reaches the application (an update or a
form query arrives empty, or the body is parsed as a second, invalid
request), and it logs "Unsupported upgrade request." for each one. uvicorn's
h11 protocol reads such a request whole and declines the offer by answering
normally, so a connection that offers any upgrade but WebSocket is handed to
it, with the request as received; every other connection stays on httptools,
the faster parser.

An offer may come behind other requests on the connection (pipelined, or
from a client that offers on any request): the hand-over then waits until
each of them has been answered. Until then the offer and whatever follows it
are kept as they came and the connection is not read further, so the answers
leave in the order of their requests.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import h11
import httptools
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from endpoint.connection_balance import ConnectionBalance
from endpoint.connection_deadlines import DEFAULT_REQUEST_TIMEOUT, DEFAULT_SEND_TIMEOUT, ConnectionDeadlines
from endpoint.head_holding import HeadHolding
from endpoint.quick_lane import QuickLane


def http_protocol(request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
                  send_timeout: float = DEFAULT_SEND_TIMEOUT,
                  balance: ConnectionBalance | None = None) -> Callable[..., asyncio.Protocol]:
    """uvicorn's ``http`` setting: :class:`HttpProtocol` with these timeouts
    (a partial of the class, which pickles for ``--processes``), and with
    ``--processes`` this process's part of the connections' spread."""
    return functools.partial(HttpProtocol, request_timeout=request_timeout, send_timeout=send_timeout,
                             balance=balance)


class DecliningH11Protocol(ConnectionDeadlines, H11Protocol):
    """uvicorn's h11 protocol, silent when it declines an upgrade offer (the
    answer in HTTP/1.1 is what a client offering ``h2c`` expects of a server
    without HTTP/2, not something to warn the operator about), with the
    connection bounds."""

    def __init__(self, *args: Any, request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
                 send_timeout: float = DEFAULT_SEND_TIMEOUT, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request_timeout = request_timeout
        self.send_timeout = send_timeout

    def _should_upgrade(self) -> bool:
        return self._get_upgrade() == b"websocket" and super()._should_upgrade()

    def data_received(self, data: bytes) -> None:
        if self.lingering:  # the rest of a request the server has answered: discarded
            return
        if self.conn.their_state is h11.SEND_BODY:
            self.body_received(len(data))
        super().data_received(data)

    def handle_events(self) -> None:
        """uvicorn's, then where the request under way stands, from h11's state."""
        super().handle_events()
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            self.request_begun()
            self.head_received()
        elif state is h11.IDLE and self.conn.trailing_data[0]:
            self.request_begun()
        else:
            self.request_received()


class HttpProtocol(QuickLane, ConnectionDeadlines, HttpToolsProtocol):
    """The server's protocol (uvicorn's ``http`` setting, through
    :func:`http_protocol`); see the module docstring. Small queries are
    answered without an ASGI cycle (:mod:`endpoint.quick_lane`)."""

    def __init__(self, *args: Any, request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
                 send_timeout: float = DEFAULT_SEND_TIMEOUT, balance: ConnectionBalance | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request_timeout = request_timeout
        self.send_timeout = send_timeout
        #: an upgrade offer waiting for the answers before it: the bytes to give h11
        self._offer: bytearray | None = None
        #: the spread of connections over the processes (``--processes``), None with one process
        self.balance = balance
        #: a connection another process accepted and handed to this one (counted there)
        self.adopted = False
        #: whether this connection counts among the process's clients' (``balance``)
        self._counted = False
        #: whether it went to another process (uvicorn never saw it here)
        self._handed_on = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """A client's new connection is handed to a process with fewer
        connections when there is one (:mod:`endpoint.connection_balance`),
        before a byte of it is read; else served here."""
        balance = self.balance
        if balance is not None and balance.spreads(transport):
            if not self.adopted:
                if balance.hand_off(transport):
                    self._handed_on = True
                    transport.abort()  # this process's descriptor; the other process holds the connection
                    return
                balance.opened()
            self._counted = True
        super().connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._handed_on:
            return
        if self._counted:
            self.balance.closed()  # type: ignore[union-attr]
        super().connection_lost(exc)

    def _should_upgrade(self) -> bool:
        # every offer keeps httptools from starting the request itself: the
        # request goes to the WebSocket protocol or to h11 once its head is read
        return self._get_upgrade() is not None

    def data_received(self, data: bytes) -> None:
        """uvicorn's, except that an upgrade offer other than WebSocket is
        answered by h11, given the rest of ``data`` (a POST's body) too."""
        if self.lingering:  # the rest of a request the server has answered: discarded
            return
        if self._offer is not None:
            self._offer += data
            return
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
            self.head_too_large(len(data))
        except httptools.HttpParserError:
            message = "Invalid HTTP request received."
            self.logger.warning(message)
            self.send_400_response(message)
        except httptools.HttpParserUpgrade as switch:
            upgrade = self._get_upgrade()
            if upgrade == b"websocket" and self.ws_protocol_class is not None:
                self.release()
                self.handle_websocket_upgrade()
            elif upgrade is not None:
                self._offer = bytearray(self._offer_head() + data[switch.args[0]:])
                self._hand_over_when_answered()
            else:  # a CONNECT request, which uvicorn does not serve either
                self._unsupported_upgrade_warning()

    # the request clock (endpoint.connection_deadlines)
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.request_begun()

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        if self.cycle is not None and self.cycle.scope is self.scope:  # not an upgrade offer
            self.head_received()
            # the answer's head and body in one write (endpoint.head_holding)
            self.cycle.transport = HeadHolding(self.transport, self.loop)

    def on_body(self, body: bytes) -> None:
        self.body_received(len(body))
        super().on_body(body)

    def on_message_complete(self) -> None:
        self.request_received()
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._offer is not None:
            self._hand_over_when_answered()

    def _offer_head(self) -> bytes:
        """The offering request's head as httptools read it."""
        head = [self.scope["method"].encode("ascii"), b" ", self.url,
                b" HTTP/", self.scope["http_version"].encode("ascii"), b"\r\n"]
        for name, value in self.headers:
            head += [name, b": ", value, b"\r\n"]
        head.append(b"\r\n")
        return b"".join(head)

    def _hand_over_when_answered(self) -> None:
        """Serve this connection with h11 from the offering request on, once
        every earlier request is answered; until then it is not read."""
        if self.transport.is_closing():
            return
        if self.pipeline or (self.cycle is not None and not self.cycle.response_complete):
            self.flow.pause_reading()
            return
        offer, self._offer = bytes(self._offer or b""), None
        self.flow.resume_reading()
        transport = self.release()
        protocol = DecliningH11Protocol(config=self.config, server_state=self.server_state,
                                        app_state=self.app_state, _loop=self.loop,
                                        request_timeout=self.request_timeout,
                                        send_timeout=self.send_timeout)
        self.connections.discard(self)
        protocol.connection_made(transport)
        transport.set_protocol(protocol)
        protocol.data_received(offer)
