"""Which addresses SERVICE and LOAD may call.

A server that fetches any URL a client names can be made to scan the
network behind it, reach its own admin ports, or call itself until every
worker waits on itself. A server's policy (``OutboundPolicy.for_server``)
refuses loopback, private, link-local and other non-public addresses unless
the operator allows them (hosts or networks; SERVICE aliases are allowed by
being configured), can turn SERVICE off, and bounds how deep SERVICE calls
may nest through Rivulet servers: each outgoing call carries its depth in
:data:`DEPTH_HEADER`, and a server refuses to call on once it is reached.
The library's default policy allows everything: code that embeds a
``Store`` decides for itself.

Names are resolved and every address checked before the call; a name that
resolves differently at connection time (DNS rebinding) is not caught here.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

#: request header carrying how many SERVICE calls led to this request
DEPTH_HEADER = "X-Rivulet-Service-Depth"
_depth: ContextVar[int] = ContextVar("service_depth", default=0)


def remote_failure(exc: Exception) -> str:
    """What to tell a client about a failed outbound call: the kind of
    failure and the remote status, never the remote body nor the local
    exception's text (which would let a client probe the network)."""
    if isinstance(exc, httpx.TimeoutException):
        return "remote endpoint failed: it did not answer in time"
    if isinstance(exc, httpx.HTTPStatusError):
        return f"remote endpoint failed: it answered HTTP {exc.response.status_code}"
    if isinstance(exc, httpx.HTTPError):
        return "remote endpoint failed: no connection could be made or it broke off"
    return "remote endpoint failed: its answer could not be read"


class OutboundRefused(Exception):
    """A call the policy does not allow; the message says why."""

    status = 403


@contextmanager
def incoming_depth(depth: int) -> Iterator[None]:
    """Run a request that arrived at SERVICE depth ``depth`` (0: from a client)."""
    token = _depth.set(max(0, depth))
    try:
        yield
    finally:
        _depth.reset(token)


def outgoing_depth() -> int:
    """The depth to send with a call made while answering the current request."""
    return _depth.get() + 1


@dataclass(frozen=True)
class OutboundPolicy:
    """What SERVICE and LOAD may call."""

    #: call non-public addresses (loopback, private, link-local, reserved)
    private: bool = True
    #: host names and networks (CIDR) allowed whatever their addresses
    allowed: tuple[str, ...] = ()
    #: SERVICE at all
    service: bool = True
    #: SERVICE calls nested through servers at most this deep
    max_depth: int = 2

    @classmethod
    def for_server(cls, allowed: tuple[str, ...] = (), service: bool = True) -> OutboundPolicy:
        """The policy of an HTTP server: public addresses only, plus ``allowed``."""
        return cls(private=False, allowed=tuple(allowed), service=service)

    def check_service(self, url: str) -> None:
        """Raise :class:`OutboundRefused` unless a SERVICE call to ``url`` is allowed."""
        if not self.service:
            raise OutboundRefused("SERVICE is turned off on this server")
        if outgoing_depth() > self.max_depth:
            raise OutboundRefused(f"SERVICE calls nest deeper than {self.max_depth} servers")
        self.check(url)

    def check(self, url: str) -> None:
        """Raise :class:`OutboundRefused` unless ``url`` may be fetched."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise OutboundRefused(f"only http(s) URLs are called, not {url!r}")
        host = parts.hostname
        if self.private or host in self.allowed:
            return
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            found = {info[4][0] for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)}
        except (OSError, ValueError) as exc:
            raise OutboundRefused(f"cannot resolve {host!r}") from exc
        for address in found:
            ip = ipaddress.ip_address(address.split("%")[0])
            if not ip.is_global and not self._allowed_network(ip):
                raise OutboundRefused(f"{host} is a non-public address ({ip}); the server's policy "
                                      "refuses it (rivulet serve --outbound-allow)")

    def _allowed_network(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        for entry in self.allowed:
            try:
                if ip in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:  # a host name, not a network
                continue
        return False
