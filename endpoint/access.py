"""Who may change the data: read-only mode, cross-site requests, and the
bearer token for writes.

Queries are always open; updates, graph store writes, stream items and
registrations pass through :func:`check_write`, the one place that decides
(for the Starlette application and the Flask blueprint alike).

A web page on another site can make a visitor's browser send a form POST
(``update=DROP ALL``) or a ``text/plain`` POST without asking the server
first, and a server without a token would obey. Browsers say where such a
request comes from (``Origin``, ``Sec-Fetch-Site``); a write whose origin is
another site is refused unless ``--cors`` allows that origin. Clients that
are not browsers send neither header and are not affected.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from typing import Protocol

from endpoint.problems import ProtocolError
from endpoint.settings import Settings

#: the challenge of a 401 to a browser: a Basic challenge would make it ask
#: its user for a password instead of letting the page (the console) show the error
BEARER_CHALLENGE = ("WWW-Authenticate", 'Bearer realm="rivulet"')
#: the challenge of a 401 to any other client: some send their user and
#: password only after a Basic challenge (Jena's rupdate, Java's client), and
#: stop at a response that also offers Bearer
BASIC_CHALLENGE = ("WWW-Authenticate", 'Basic realm="rivulet"')


class Headers(Protocol):
    """Request headers, looked up case-insensitively (Starlette's and Werkzeug's both are)."""

    def get(self, name: str, default: str | None = None) -> str | None: ...


def check_write(headers: Headers, own_origin: str, settings: Settings) -> None:
    """Raise 403 in read-only mode or for a write from another site, 401
    when a configured token is missing or wrong. ``own_origin`` is the
    server's origin as the client addressed it (``http://host:port``).

    The token comes as ``Authorization: Bearer TOKEN`` or as the password of
    HTTP Basic credentials (any user name): SPARQL clients (SPARQLWrapper,
    Jena, Comunica, rdflib) can send only the latter."""
    if settings.read_only:
        raise ProtocolError(403, "this endpoint is read-only: updates and graph store writes are disabled")
    origin = _foreign_origin(headers, own_origin, settings)
    if origin is not None:
        raise ProtocolError(403, f"a write from another site ({origin}) is refused; start the server with "
                                 f"--cors {origin} to allow that site")
    if settings.update_token is None:
        return
    given = presented_token(headers.get("authorization") or "")
    if given is None or not hmac.compare_digest(given.encode(), settings.update_token.encode()):
        raise ProtocolError(401, "writes need the token: send 'Authorization: Bearer <token>', or HTTP "
                                 "Basic credentials with the token as the password", [challenge(headers)])


def challenge(headers: Headers) -> tuple[str, str]:
    """The one challenge to answer a refused write with: Basic, unless the
    request comes from a browser (``Sec-Fetch-Mode``) or presented a bearer token."""
    presented = (headers.get("authorization") or "").strip().lower()
    if headers.get("sec-fetch-mode") is not None or presented.startswith("bearer"):
        return BEARER_CHALLENGE
    return BASIC_CHALLENGE


def presented_token(authorization: str) -> str | None:
    """The token an ``Authorization`` header presents: a bearer token, or
    the password of Basic credentials; None for anything else."""
    scheme, _, value = authorization.strip().partition(" ")
    scheme = scheme.lower()
    if scheme == "bearer":
        return value.strip()
    if scheme == "basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        _, colon, password = decoded.partition(":")
        return password if colon else None
    return None


def _foreign_origin(headers: Headers, own_origin: str, settings: Settings) -> str | None:
    """The origin of a browser request from another site that CORS does not
    allow; None for same-origin requests and for clients that are not browsers."""
    origin = headers.get("origin")
    fetch_site = headers.get("sec-fetch-site")
    if origin is None and fetch_site is None:
        return None
    if fetch_site in ("same-origin", "none"):
        return None
    if origin == own_origin or "*" in settings.cors_origins or origin in settings.cors_origins:
        return None
    return origin or "another site"
