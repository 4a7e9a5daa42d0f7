"""Reading what the shared protocol code needs from a Starlette request.

The protocol, negotiation and access modules know no web framework; these
few functions hand them a Starlette request's method, parameters, headers
and body (the Flask blueprint has its own equivalents, over Werkzeug's
request).
"""

from __future__ import annotations

from starlette.requests import Request

from endpoint import protocol
from endpoint.access import check_write
from endpoint.negotiation import combined_accept
from endpoint.protocol import Operation
from endpoint.settings import Settings


def accept(request: Request) -> str | None:
    """The ``Accept`` header, its repeated lines combined."""
    return combined_accept(request.headers.getlist("accept"))


def own_origin(request: Request) -> str:
    """The origin the client addressed this server by."""
    return f"{request.url.scheme}://{request.headers.get('host', '')}"


def require_write(request: Request, settings: Settings) -> None:
    """Refuse the write unless :func:`endpoint.access.check_write` allows it."""
    check_write(request.headers, own_origin(request), settings)


async def read_operation(request: Request) -> Operation | None:
    """The SPARQL operation of a request to ``/sparql`` (None: a GET without one)."""
    body = b"" if request.method in ("GET", "HEAD") else await request.body()
    return read_operation_with(request, body)


def read_operation_with(request: Request, body: bytes) -> Operation | None:
    """The SPARQL operation of a request to ``/sparql`` whose body was read
    already (a POST's URL mostly has no parameters: Starlette's parse of
    them is skipped then)."""
    url_params = request.query_params.multi_items() if request.scope["query_string"] else []
    return protocol.read_operation(request.method, url_params, request.headers.get("content-type"), body)
