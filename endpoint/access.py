"""Who may change the data: read-only mode and the bearer token for writes.

Queries are always open; updates and graph store writes pass through
:func:`require_write`, the one place that decides.
"""

from __future__ import annotations

import hmac

from starlette.exceptions import HTTPException
from starlette.requests import Request

from endpoint.settings import Settings


def require_write(request: Request, settings: Settings) -> None:
    """Raise 403 in read-only mode, 401 when a configured token is missing or wrong."""
    if settings.read_only:
        raise HTTPException(403, "this endpoint is read-only: updates and graph store writes are disabled")
    if settings.update_token is None:
        return
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(),
                                                             settings.update_token.encode()):
        raise HTTPException(401, "writes need the header 'Authorization: Bearer <token>'",
                            headers={"WWW-Authenticate": 'Bearer realm="rivulet"'})
