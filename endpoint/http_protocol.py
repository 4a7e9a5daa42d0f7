"""The HTTP/1.1 protocol the server runs: uvicorn's httptools protocol, but a
request offering to switch to a protocol other than WebSocket is answered in
plain HTTP/1.1, whole and without a warning.

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
the faster parser. Clients make such an offer on a connection's first request
and wait for its answer, so no earlier response is being written when the
connection changes hands.
"""

from __future__ import annotations

import httptools
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class DecliningH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, silent when it declines an upgrade offer: the
    answer in HTTP/1.1 is what a client offering ``h2c`` expects of a server
    without HTTP/2, not something to warn the operator about."""

    def _should_upgrade(self) -> bool:
        return self._get_upgrade() == b"websocket" and super()._should_upgrade()


class HttpProtocol(HttpToolsProtocol):
    """The server's protocol (uvicorn's ``http`` setting); see the module docstring."""

    def _should_upgrade(self) -> bool:
        # every offer keeps httptools from starting the request itself: the
        # request goes to the WebSocket protocol or to h11 once its head is read
        return self._get_upgrade() is not None

    def data_received(self, data: bytes) -> None:
        """uvicorn's, except that an upgrade offer other than WebSocket is
        answered by h11, given the rest of ``data`` (a POST's body) too."""
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            message = "Invalid HTTP request received."
            self.logger.warning(message)
            self.send_400_response(message)
        except httptools.HttpParserUpgrade as switch:
            upgrade = self._get_upgrade()
            if upgrade == b"websocket" and self.ws_protocol_class is not None:
                self.handle_websocket_upgrade()
            elif upgrade is not None:
                self._hand_to_h11(data[switch.args[0]:])
            else:  # a CONNECT request, which uvicorn does not serve either
                self._unsupported_upgrade_warning()

    def _hand_to_h11(self, rest: bytes) -> None:
        """Serve this connection with h11 from the current request on: it is
        given the request's head as httptools read it, then ``rest``."""
        head = [self.scope["method"].encode("ascii"), b" ", self.url,
                b" HTTP/", self.scope["http_version"].encode("ascii"), b"\r\n"]
        for name, value in self.headers:
            head += [name, b": ", value, b"\r\n"]
        head.append(b"\r\n")
        protocol = DecliningH11Protocol(config=self.config, server_state=self.server_state,
                                        app_state=self.app_state, _loop=self.loop)
        self.connections.discard(self)
        protocol.connection_made(self.transport)
        self.transport.set_protocol(protocol)
        protocol.data_received(b"".join(head) + rest)
