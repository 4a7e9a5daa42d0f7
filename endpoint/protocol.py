"""Reading a SPARQL 1.1 Protocol request: which operation, with which dataset.

The protocol allows three shapes (GET with a query string, POST of an
url-encoded form, POST of the bare query or update text); this module turns
all three into one :class:`Operation` or refuses the request with the
status code the protocol asks for, so the route itself stays a few lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl

from starlette.exceptions import HTTPException
from starlette.requests import Request

FORM = "application/x-www-form-urlencoded"
QUERY_TYPE = "application/sparql-query"
UPDATE_TYPE = "application/sparql-update"


@dataclass(frozen=True)
class Operation:
    """A query or an update; ``graphs``/``named_graphs`` are None when the
    request names no dataset (then the text's own FROM / USING apply)."""

    kind: str  # "query" or "update"
    text: str
    graphs: list[str] | None
    named_graphs: list[str] | None
    #: the ``format`` parameter (a result format chosen without ``Accept``)
    format: str | None = None


def media_type_and_charset(header: str | None) -> tuple[str, str | None]:
    """``text/turtle; charset=UTF-8`` -> ("text/turtle", "utf-8")."""
    if not header:
        return "", None
    parts = header.split(";")
    charset = None
    for param in parts[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"').lower()
    return parts[0].strip().lower(), charset


def decode_utf8(body: bytes, charset: str | None) -> str:
    """The body as text; the protocol only allows UTF-8."""
    if charset not in (None, "utf-8", "utf8"):
        raise HTTPException(415, f"unsupported charset {charset!r}: SPARQL requests must be UTF-8")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPException(400, f"request body is not valid UTF-8 (byte {exc.start})") from exc


def _single(params: list[tuple[str, str]], name: str) -> str | None:
    values = [v for k, v in params if k == name]
    if len(values) > 1:
        raise HTTPException(400, f"the request has {len(values)} '{name}' parameters; exactly one is allowed")
    return values[0] if values else None


def _graphs(params: list[tuple[str, str]], name: str) -> list[str]:
    return [v for k, v in params if k == name]


def operation_from_params(params: list[tuple[str, str]], direct: tuple[str, str] | None) -> Operation | None:
    """The operation named by URL or form parameters (or carried ``direct``ly
    in the body as (kind, text)); None when there is none."""
    if direct is not None:
        kind, text = direct
        for other in ("query", "update"):
            if _single(params, other) is not None:
                raise HTTPException(400, f"a direct POST carries the {kind} in the body; "
                                         f"a '{other}' parameter is not allowed beside it")
    else:
        query, update = _single(params, "query"), _single(params, "update")
        if query is not None and update is not None:
            raise HTTPException(400, "a request carries either 'query' or 'update', not both")
        if query is None and update is None:
            return None
        kind, text = ("query", query) if query is not None else ("update", update)
    if kind == "query":
        graphs, named = _graphs(params, "default-graph-uri"), _graphs(params, "named-graph-uri")
    else:
        graphs, named = _graphs(params, "using-graph-uri"), _graphs(params, "using-named-graph-uri")
    fmt = _single(params, "format")
    if not graphs and not named:
        return Operation(kind, text, None, None, fmt)
    return Operation(kind, text, graphs, named, fmt)


async def read_operation(request: Request) -> Operation | None:
    """The request's operation; None for a GET without one (the caller sends
    the service description). Raises HTTPException 400/405/415 on bad input."""
    url_params = request.query_params.multi_items()
    if request.method in ("GET", "HEAD"):
        if any(k == "update" for k, _ in url_params):
            raise HTTPException(405, "an update must be sent by POST", headers={"Allow": "GET, POST"})
        return operation_from_params(url_params, None)
    media_type, charset = media_type_and_charset(request.headers.get("content-type"))
    if media_type == FORM:
        body = decode_utf8(await request.body(), charset)
        params = url_params + parse_qsl(body, keep_blank_values=True)
        operation = operation_from_params(params, None)
        if operation is None:
            raise HTTPException(400, "the form has neither a 'query' nor an 'update' parameter")
        return operation
    if media_type in (QUERY_TYPE, UPDATE_TYPE):
        text = decode_utf8(await request.body(), charset)
        kind = "query" if media_type == QUERY_TYPE else "update"
        return operation_from_params(url_params, (kind, text))
    shown = media_type or "none"
    raise HTTPException(
        415,
        f"unsupported Content-Type {shown}: POST {FORM}, {QUERY_TYPE} or {UPDATE_TYPE}",
    )
