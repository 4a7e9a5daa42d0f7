"""Reading the requests of the streams and continuous-query API: a stream
definition, an item's type and timestamp, a registration's text, where an
event stream resumes.

It knows no web framework (the Starlette routes and the Flask blueprint
both call it) and raises :class:`~endpoint.problems.ProtocolError` for bad
input, so both answer it with the same status and message.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

import orjson

from endpoint.brokers.config import source_config
from endpoint.problems import ProtocolError
from endpoint.protocol import FORM, decode_utf8, media_type_and_charset
from engine.rdf import IRI, iri_problem
from engine.sparql.syntax import SparqlSyntaxError, with_report_clause
from engine.stream import StreamDefinition
from engine.stream.stream_names import STREAM_NAME

IDLE_POLICIES = ("none", "wallclock")
#: the type of an item sent without Content-Type
DEFAULT_ITEM_TYPE = "application/n-triples"
#: the types a registration's text may be sent as, besides a form
REGISTRATION_TYPES = ("application/sparql-query", "application/sparql-update", "text/plain", "")
#: an event id a client resumes after: ASCII digits (str.isdigit() also takes
#: superscripts and other scripts' digits, which int() refuses), below 10^19
SEQUENCE_NUMBER = re.compile(r"[0-9]{1,19}")


def item_media_type(content_type: str | None) -> str:
    """The media type of a posted item (N-Triples when the client names none)."""
    return (content_type or DEFAULT_ITEM_TYPE).split(";")[0].strip().lower()


def registration_text(content_type: str | None, body: bytes) -> str:
    """The C-SPARQL / RSP-QL text of a ``POST /queries``: the body itself, or
    the ``query`` field of a form."""
    media, charset = media_type_and_charset(content_type)
    if media == FORM:
        fields = dict(parse_qsl(decode_utf8(body, charset), keep_blank_values=True))
        if not fields.get("query"):
            raise ProtocolError(400, "the form has no 'query' field")
        return fields["query"]
    if media in REGISTRATION_TYPES:
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(400, f"the registration is not UTF-8: {exc}") from exc
    raise ProtocolError(415, f"unsupported registration type {media!r}; "
                             "send the query as application/sparql-query")


def with_report_parameters(text: str, content_type: str | None, body: bytes, url_params) -> str:
    """The registration ``text`` with the report strategy the request's
    ``report`` (and ``period``) parameters choose, from the URL or a form
    body, written into its head (``REPORT ...``) so that it is kept with the
    text; the text unchanged without them. A bad value is a 400."""
    params = dict(url_params)
    media, charset = media_type_and_charset(content_type)
    if media == FORM:
        params.update((k, v) for k, v in parse_qsl(decode_utf8(body, charset), keep_blank_values=True)
                      if k in ("report", "period"))
    name, period = params.get("report"), params.get("period")
    if name is None:
        if period is not None:
            raise ProtocolError(400, "the 'period' parameter needs report=periodic")
        return text
    try:
        return with_report_clause(text, name, period)
    except SparqlSyntaxError:  # a 400 with its position, as any registration's
        raise
    except ValueError as exc:
        raise ProtocolError(400, str(exc)) from exc


def resume_after(last_event_id: str | None) -> int | None:
    """The sequence number an event stream resumes after (``Last-Event-ID``
    header or ``last_event_id`` parameter); None: from the live events on.
    Anything but a sequence number is a 400."""
    text = (last_event_id or "").strip()
    if not text:
        return None
    if not SEQUENCE_NUMBER.fullmatch(text):
        raise ProtocolError(400, "Last-Event-ID (or the last_event_id parameter) must be the id of a "
                                 f"window event, 1 to 19 digits 0-9, not {text[:40]!r}")
    return int(text)


def stream_definition(name: str, body: bytes, url: str) -> StreamDefinition:
    """A stream definition from the PUT body (JSON; every field optional);
    the stream's IRI defaults to its URL."""
    if not STREAM_NAME.fullmatch(name):
        raise ProtocolError(400, f"a stream name is 1 to 200 of the characters A-Z a-z 0-9 . _ ~ -, "
                                 f"not {name[:60]!r}")
    try:
        spec = orjson.loads(body) if body.strip() else {}
    except orjson.JSONDecodeError as exc:
        raise ProtocolError(400, f"the stream definition is not JSON: {exc}") from exc
    if not isinstance(spec, dict):
        raise ProtocolError(400, "the stream definition must be a JSON object")
    unknown = set(spec) - {"iri", "timing", "timeless", "graph", "idle", "idle_lag_ms", "source"}
    if unknown:
        raise ProtocolError(400, f"unknown fields in the stream definition: {sorted(unknown)}")
    idle = spec.get("idle", "none")
    if idle not in IDLE_POLICIES:
        raise ProtocolError(400, f"idle must be one of {IDLE_POLICIES}, not {idle!r}")
    lag = spec.get("idle_lag_ms", 1000)
    if not isinstance(lag, int) or isinstance(lag, bool) or lag < 0:
        raise ProtocolError(400, "idle_lag_ms must be a non-negative integer")
    for key in ("iri", "graph"):
        if spec.get(key) is not None:
            _check_iri(key, spec[key])
    for key in ("timing", "timeless"):
        value = spec.get(key)
        if value is not None:
            if not isinstance(value, list):
                raise ProtocolError(400, f"{key} must be a list of predicate IRIs")
            for predicate in value:
                _check_iri(key, predicate)
    if spec.get("source") is not None:
        source_config(name, spec["source"])  # checked now: a bad source is a 400, nothing declared
    return StreamDefinition(
        name=name,
        iri=IRI(spec.get("iri") or url),
        timing=frozenset(spec.get("timing") or ()),
        timeless=None if spec.get("timeless") is None else frozenset(spec["timeless"]),
        graph=IRI(spec["graph"]) if spec.get("graph") else None,
        idle=idle,
        idle_lag_ms=lag,
        source=spec.get("source"),
    )


def _check_iri(field: str, value: object) -> None:
    """400 unless ``value`` is an absolute IRI a query could name."""
    problem = iri_problem(value)
    if problem:
        raise ProtocolError(400, f"{field}: {value!r} is not an IRI: {problem}")
