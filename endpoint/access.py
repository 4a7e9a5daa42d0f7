"""Who may change the data: read-only mode, cross-site requests, and the
bearer token for writes.

Queries are always open; updates, graph store writes, stream items and
registrations pass through :func:`require_write`, the one place that decides.

A web page on another site can make a visitor's browser send a form POST
(``update=DROP ALL``) or a ``text/plain`` POST without asking the server
first, and a server without a token would obey. Browsers say where such a
request comes from (``Origin``, ``Sec-Fetch-Site``); a write whose origin is
another site is refused unless ``--cors`` allows that origin. Clients that
are not browsers send neither header and are not affected.
"""

from __future__ import annotations

import hmac

from starlette.exceptions import HTTPException
from starlette.requests import Request

from endpoint.settings import Settings


def require_write(request: Request, settings: Settings) -> None:
    """Raise 403 in read-only mode or for a write from another site, 401
    when a configured token is missing or wrong."""
    if settings.read_only:
        raise HTTPException(403, "this endpoint is read-only: updates and graph store writes are disabled")
    origin = _foreign_origin(request, settings)
    if origin is not None:
        raise HTTPException(403, f"a write from another site ({origin}) is refused; start the server with "
                                 f"--cors {origin} to allow that site")
    if settings.update_token is None:
        return
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(),
                                                             settings.update_token.encode()):
        raise HTTPException(401, "writes need the header 'Authorization: Bearer <token>'",
                            headers={"WWW-Authenticate": 'Bearer realm="rivulet"'})


def _foreign_origin(request: Request, settings: Settings) -> str | None:
    """The origin of a browser request from another site that CORS does not
    allow; None for same-origin requests and for clients that are not browsers."""
    origin = request.headers.get("origin")
    fetch_site = request.headers.get("sec-fetch-site")
    if origin is None and fetch_site is None:
        return None
    if fetch_site in ("same-origin", "none"):
        return None
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    if origin == own or "*" in settings.cors_origins or origin in settings.cors_origins:
        return None
    return origin or "another site"
