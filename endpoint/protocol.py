"""Reading a SPARQL 1.1 Protocol request: which operation, with which dataset.

The protocol allows three shapes (GET with a query string, POST of an
url-encoded form, POST of the bare query or update text); this module turns
all three into one :class:`Operation` or refuses the request with the
status code the protocol asks for, so the route itself stays a few lines.

It knows no web framework: the Starlette application and the Flask
blueprint hand it the method, the parameters, the Content-Type and the body,
and answer the :class:`~endpoint.problems.ProtocolError` it raises.
"""

from __future__ import annotations

import re
from codecs import escape_decode  # type: ignore[attr-defined]
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote_plus

from endpoint.problems import ProtocolError
from engine.sparql.exec import DEPTH_HEADER
from engine.sparql.syntax import is_registration

FORM = "application/x-www-form-urlencoded"
#: the parameters clients choose a result format by: ``format`` (Virtuoso, Fuseki),
#: ``output`` (Fuseki, Joseki), ``results``; SPARQLWrapper sends all three
FORMAT_PARAMETERS = ("format", "output", "results")
#: IRIs clients use to name the service's default graph in a dataset description:
#: rdflib's ``Dataset`` sends its own default graph's name as ``default-graph-uri``,
#: Jena's its ``urn:x-arq:DefaultGraph``
DEFAULT_GRAPH_NAMES = frozenset({"urn:x-rdflib:default", "urn:x-arq:DefaultGraph"})
QUERY_TYPE = "application/sparql-query"
#: a SERVICE depth: ASCII digits (str.isdigit() also takes superscripts and
#: other scripts' digits, which int() refuses)
DEPTH = re.compile(r"[0-9]{1,9}")
UPDATE_TYPE = "application/sparql-update"
#: a ``timeout`` parameter: seconds as a plain decimal number (no exponent, sign, inf or nan)
TIMEOUT = re.compile(r"[0-9]{1,9}(?:\.[0-9]{0,9})?|\.[0-9]{1,9}")
#: the values of the ``explain`` parameter: the plan with estimates, or run with actual counts too
EXPLAIN_MODES = ("plan", "analyze")


@dataclass(frozen=True)
class Operation:
    """A query or an update; ``graphs``/``named_graphs`` are None when the
    request names no dataset (then the text's own FROM / USING apply)."""

    kind: str  # "query" or "update"
    text: str
    graphs: list[str] | None
    named_graphs: list[str] | None
    #: the values of the format parameters (a result format chosen without
    #: ``Accept``), in request order; see :func:`format_values`
    formats: tuple[str, ...] = ()
    #: the request's own time limit in seconds (``timeout=``), None without one;
    #: the server's limit still caps it
    timeout: float | None = None
    #: ``explain=plan`` (the plan, not run) or ``explain=analyze`` (run, with
    #: each step's actual rows and time); None: answer the query
    explain: str | None = None


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
        raise ProtocolError(415, f"unsupported charset {charset!r}: SPARQL requests must be UTF-8")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(400, f"request body is not valid UTF-8 (byte {exc.start})") from exc


def _single(params: list[tuple[str, str]], name: str) -> str | None:
    values = [v for k, v in params if k == name]
    if len(values) > 1:
        raise ProtocolError(400, f"the request has {len(values)} '{name}' parameters; exactly one is allowed")
    return values[0] if values else None


def _graphs(params: list[tuple[str, str]], name: str) -> list[str]:
    return [v for k, v in params if k == name]


def format_values(params: list[tuple[str, str]]) -> tuple[str, ...]:
    """The non-empty values of every format parameter, in request order:
    clients repeat their choice under several names and spellings
    (``format=tsv&format=text/tab-separated-values&output=tsv``), so each
    may appear more than once; negotiation decides whether they agree."""
    return tuple(v for k, v in params if k in FORMAT_PARAMETERS and v.strip())


def _dataset(graphs: list[str], named: list[str]) -> tuple[list[str] | None, list[str] | None]:
    """The dataset a request describes; (None, None) when it describes none.
    A description that names only the service's default graph (by one of
    :data:`DEFAULT_GRAPH_NAMES`) is the service's own dataset: that is what
    the client means, and what it gets from Fuseki."""
    if named or any(g not in DEFAULT_GRAPH_NAMES for g in graphs):
        if any(g in DEFAULT_GRAPH_NAMES for g in graphs):
            raise ProtocolError(400, "a dataset description naming the service's default graph "
                                     f"({', '.join(sorted(DEFAULT_GRAPH_NAMES & set(graphs)))}) cannot name "
                                     "other graphs beside it")
        return graphs, named
    return None, None


def operation_from_params(params: list[tuple[str, str]], direct: tuple[str, str] | None) -> Operation | None:
    """The operation named by URL or form parameters (or carried ``direct``ly
    in the body as (kind, text)); None when there is none."""
    if direct is not None:
        kind, text = direct
        for other in ("query", "update"):
            if _single(params, other) is not None:
                raise ProtocolError(400, f"a direct POST carries the {kind} in the body; "
                                         f"a '{other}' parameter is not allowed beside it")
    else:
        query, update = _single(params, "query"), _single(params, "update")
        if query is not None and update is not None:
            raise ProtocolError(400, "a request carries either 'query' or 'update', not both")
        if query is None and update is None:
            return None
        kind, text = ("query", query) if query is not None else ("update", update)
    if kind == "query":
        graphs, named = _graphs(params, "default-graph-uri"), _graphs(params, "named-graph-uri")
    else:
        graphs, named = _graphs(params, "using-graph-uri"), _graphs(params, "using-named-graph-uri")
    default, named_graphs = _dataset(graphs, named)
    explain = requested_explain(params)
    if explain is not None and kind != "query":
        raise ProtocolError(400, "'explain' applies to a query, not to an update")
    return Operation(kind, text, default, named_graphs, format_values(params), requested_timeout(params),
                     explain)


def requested_timeout(params: list[tuple[str, str]]) -> float | None:
    """The seconds a ``timeout`` parameter asks for (None without one): a
    decimal number above 0, as Fuseki takes it (``timeout=2.5``). Anything
    else is a 400 naming the value: a limit silently ignored would be worse."""
    value = _single(params, "timeout")
    if value is None:
        return None
    if not TIMEOUT.fullmatch(value) or float(value) <= 0:
        raise ProtocolError(400, f"'timeout' must be a number of seconds above 0, such as 2.5 or 0.25, "
                                 f"not {value[:40]!r}")
    return float(value)


def requested_explain(params: list[tuple[str, str]]) -> str | None:
    """What an ``explain`` parameter asks for: "plan", "analyze", or None without one."""
    value = _single(params, "explain")
    if value is None:
        return None
    if value not in EXPLAIN_MODES:
        raise ProtocolError(400, f"'explain' must be one of {', '.join(EXPLAIN_MODES)}, not {value[:40]!r}")
    return value


def form_pairs(text: str) -> list[tuple[str, str]]:
    """``urllib.parse.parse_qsl(text, keep_blank_values=True)``, faster on the
    ASCII text of a query string or a form: the escapes of a query (its
    spaces, brackets and angle brackets) are most of its characters, and
    ``unquote`` handles each one in Python. Other text is left to ``parse_qsl``."""
    if not text.isascii():
        return parse_qsl(text, keep_blank_values=True)
    pairs = []
    for field in text.split("&"):
        if not field:
            continue
        name, _, value = field.partition("=")
        pairs.append((_unquote(name), _unquote(value)))
    return pairs


def _unquote(text: str) -> str:
    """``unquote_plus`` of ASCII text: the escaped bytes read as UTF-8, errors
    replaced. The escapes are decoded in C, as ``\\x`` escapes, by
    ``codecs.escape_decode`` (CPython's, which pickle uses; undocumented, so
    tests/endpoint/test_form_pairs.py holds it to ``parse_qsl``). A text with a
    malformed escape, which ``unquote`` keeps as it is, goes to ``unquote_plus``."""
    if "%" not in text:
        return text.replace("+", " ")
    try:
        escaped = text.replace("\\", "\\\\").replace("%", "\\x").replace("+", " ")
        raw = escape_decode(escaped.encode("ascii"))[0]
    except ValueError:
        return unquote_plus(text)
    return raw.decode("utf-8", "replace")


def read_operation(method: str, url_params: list[tuple[str, str]], content_type: str | None,
                   body: bytes) -> Operation | None:
    """The request's operation; None for a GET without one (the caller sends
    the service description). ``body`` is ignored for GET and HEAD. Raises
    :class:`ProtocolError` 400/405/415 on bad input."""
    if method in ("GET", "HEAD"):
        if any(k == "update" for k, _ in url_params):
            raise ProtocolError(405, "an update must be sent by POST", [("Allow", "GET, POST")])
        return operation_from_params(url_params, None)
    media_type, charset = media_type_and_charset(content_type)
    if media_type == FORM:
        params = url_params + form_pairs(decode_utf8(body, charset))
        operation = operation_from_params(params, None)
        if operation is None:
            raise ProtocolError(400, "the form has neither a 'query' nor an 'update' parameter")
        return operation
    if media_type in (QUERY_TYPE, UPDATE_TYPE):
        kind = "query" if media_type == QUERY_TYPE else "update"
        return operation_from_params(url_params, (kind, decode_utf8(body, charset)))
    raise ProtocolError(
        415,
        f"unsupported Content-Type {media_type or 'none'}: POST {FORM}, {QUERY_TYPE} or {UPDATE_TYPE}",
    )


def refuse_registration_as_query(operation: Operation) -> None:
    """A continuous-query registration sent as a query (SPARQL clients call
    any text that ends in a SELECT a query) is refused with the way to send
    it: it changes the server, so it is an update, or a POST to ``/queries``."""
    if is_registration(operation.text):
        raise ProtocolError(400, "a REGISTER is a continuous-query registration, which changes the server: "
                                 "send it as an update (the 'update' parameter, or a POST of "
                                 "application/sparql-update to /sparql) or POST it to /queries")


def service_depth(header: str | None) -> int:
    """How many SERVICE calls through servers led to this request (0: none),
    from the depth header a calling server sets; anything but a count is a 400."""
    text = (header or "0").strip()
    if not DEPTH.fullmatch(text):
        raise ProtocolError(400, f"{DEPTH_HEADER} must be a count of SERVICE calls, 1 to 9 digits 0-9, "
                                 f"not {text[:40]!r}")
    return int(text)
