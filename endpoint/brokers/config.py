"""Reading and checking where a stream's items come from and where a query's windows go.

A stream's ``source`` (in the JSON of ``PUT /streams/{name}``) and a query's
sink (the body of ``PUT /queries/{name}/sink``) name a broker by URL; the
URL's scheme picks the connector (:mod:`endpoint.brokers.connector`). A
password is never part of either: it is read, when the connection is made,
from the file (``password_file``) or the environment variable
(``password_env``) the definition names, so the catalog and the log never
hold it. Anything wrong is a :class:`~endpoint.problems.ProtocolError` (400)
naming the field, and nothing is declared.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from endpoint.problems import ProtocolError
from engine.stream import BATCH_MEDIA_TYPE

#: the item formats a source reads a message's payload as
SOURCE_FORMATS = ("application/n-triples", "text/turtle", "application/ld+json", BATCH_MEDIA_TYPE)
#: where a single item's timestamp comes from (a batch's items carry their own)
TIMESTAMP_SOURCES = ("arrival", "property")
#: what a sink publishes per window: the SSE event's JSON, or a CONSTRUCT's triples
SINK_FORMATS = ("event", "triples")
#: broker URL schemes a connector exists for
SCHEMES = ("mqtt",)
DEFAULT_PORTS = {"mqtt": 1883}
#: messages a source may have received and not yet acknowledged (the broker holds the rest)
DEFAULT_INFLIGHT = 100
MAX_INFLIGHT = 65535
#: MQTT v5 user properties a message may carry: its item's timestamp, its identity
DEFAULT_TIMESTAMP_PROPERTY = "timestamp"
DEFAULT_ID_PROPERTY = "rivulet-id"
SOURCE_FIELDS = {"broker", "topic", "qos", "client_id", "username", "password_file", "password_env",
                 "format", "timestamp", "timestamp_property", "id_property", "inflight"}
SINK_FIELDS = {"broker", "topic", "qos", "client_id", "username", "password_file", "password_env", "format"}


@dataclass(frozen=True)
class Broker:
    """A broker's address and the credentials a client logs in with."""

    scheme: str
    host: str
    port: int
    client_id: str
    username: str | None = None
    password_file: str | None = None
    password_env: str | None = None

    def password(self) -> str | None:
        """The password, read now from where the definition says (None: no password)."""
        if self.password_file:
            try:
                return Path(self.password_file).read_text().rstrip("\r\n")
            except OSError as exc:
                raise BrokerUnreachable(f"cannot read password_file {self.password_file!r}: {exc}") from exc
        if self.password_env:
            value = os.environ.get(self.password_env)
            if value is None:
                raise BrokerUnreachable(f"password_env: ${self.password_env} is not set")
            return value
        return None

    def describe(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"


class BrokerUnreachable(Exception):
    """The connection cannot be made now (the connector retries with back-off)."""


@dataclass(frozen=True)
class SourceConfig:
    """A stream's source: the messages of ``topic`` (a filter) at ``broker``."""

    broker: Broker
    topic: str
    qos: int
    format: str
    timestamp: str
    timestamp_property: str
    id_property: str
    inflight: int


@dataclass(frozen=True)
class SinkConfig:
    """A query's sink: each window published to ``topic`` at ``broker``."""

    broker: Broker
    topic: str
    qos: int
    format: str


def source_config(stream: str, spec: object) -> SourceConfig:
    """The source a stream definition's ``source`` object describes."""
    spec = _object("source", spec, SOURCE_FIELDS)
    fmt = _choice("source.format", spec.get("format", "application/n-triples"), SOURCE_FORMATS)
    stamp = spec.get("timestamp", "payload" if fmt == BATCH_MEDIA_TYPE else "arrival")
    if fmt == BATCH_MEDIA_TYPE:
        if stamp != "payload":
            raise ProtocolError(400, f"source.timestamp: {BATCH_MEDIA_TYPE} payloads carry their items' "
                                     f"timestamps ('payload'), not {stamp!r}")
    else:
        _choice("source.timestamp", stamp, TIMESTAMP_SOURCES)
    inflight = _integer("source.inflight", spec.get("inflight", DEFAULT_INFLIGHT), 1, MAX_INFLIGHT)
    return SourceConfig(
        broker=_broker("source", spec, f"rivulet-{stream}"),
        topic=_topic("source.topic", spec.get("topic"), wildcards=True),
        qos=_integer("source.qos", spec.get("qos", 1), 0, 1),
        format=fmt,
        timestamp=stamp,
        timestamp_property=_text("source.timestamp_property",
                                 spec.get("timestamp_property", DEFAULT_TIMESTAMP_PROPERTY)),
        id_property=_text("source.id_property", spec.get("id_property", DEFAULT_ID_PROPERTY)),
        inflight=inflight,
    )


def sink_config(query: str, spec: object, construct: bool) -> SinkConfig:
    """The sink a ``PUT /queries/{name}/sink`` body describes; ``construct``:
    the query constructs triples (only then may it publish them alone)."""
    spec = _object("sink", spec, SINK_FIELDS)
    fmt = _choice("sink.format", spec.get("format", "event"), SINK_FORMATS)
    if fmt == "triples" and not construct:
        raise ProtocolError(400, "sink.format 'triples' needs a CONSTRUCT query (REGISTER STREAM or "
                                 "REGISTER QUERY ... CONSTRUCT); publish 'event' otherwise")
    return SinkConfig(
        broker=_broker("sink", spec, f"rivulet-sink-{query}"),
        topic=_topic("sink.topic", spec.get("topic"), wildcards=False),
        qos=_integer("sink.qos", spec.get("qos", 1), 0, 1),
        format=fmt,
    )


def _object(field: str, spec: object, allowed: set[str]) -> dict:
    if not isinstance(spec, dict):
        raise ProtocolError(400, f"{field} must be a JSON object")
    unknown = set(spec) - allowed
    if "password" in unknown:
        raise ProtocolError(400, f"{field}.password: a password is not stored with the definition; "
                                 "name a file holding it (password_file) or an environment variable "
                                 "(password_env)")
    if unknown:
        raise ProtocolError(400, f"unknown fields in {field}: {sorted(unknown)}")
    return spec


def _broker(field: str, spec: dict, default_client: str) -> Broker:
    url = spec.get("broker")
    if not isinstance(url, str) or not url:
        raise ProtocolError(400, f"{field}.broker: give the broker's URL, e.g. mqtt://127.0.0.1:1883")
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise ProtocolError(400, f"{field}.broker: unsupported scheme {parts.scheme!r} in {url[:80]!r}; "
                                 f"supported: {', '.join(SCHEMES)}")
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError as exc:
        raise ProtocolError(400, f"{field}.broker: bad port in {url[:80]!r}: {exc}") from exc
    if not parts.hostname or parts.path not in ("", "/") or parts.query or parts.username or parts.password:
        raise ProtocolError(400, f"{field}.broker: expected {parts.scheme}://HOST[:PORT], not {url[:80]!r} "
                                 "(credentials go in username and password_file or password_env)")
    if spec.get("password_file") is not None and spec.get("password_env") is not None:
        raise ProtocolError(400, f"{field}: give password_file or password_env, not both")
    optional = {key: _text(f"{field}.{key}", spec[key]) if spec.get(key) is not None else None
                for key in ("username", "password_file", "password_env")}
    client_id = _text(f"{field}.client_id", spec.get("client_id", default_client))
    if len(client_id.encode()) > 65535:
        raise ProtocolError(400, f"{field}.client_id is too long")
    return Broker(parts.scheme, parts.hostname, port, client_id, **optional)


def _topic(field: str, value: object, wildcards: bool) -> str:
    """A topic (a sink's) or a topic filter (a source's), checked as MQTT does."""
    topic = _text(field, value)
    if "\0" in topic or len(topic.encode()) > 65535:
        raise ProtocolError(400, f"{field}: a topic holds no NUL and at most 65535 bytes")
    levels = topic.split("/")
    for at, level in enumerate(levels):
        if not wildcards and ("+" in level or "#" in level):
            raise ProtocolError(400, f"{field}: a published topic has no wildcards (+, #): {topic[:80]!r}")
        if ("+" in level and level != "+") or ("#" in level and (level != "#" or at != len(levels) - 1)):
            raise ProtocolError(400, f"{field}: level {at + 1} of {topic[:80]!r}: a wildcard is a whole "
                                     "level, and # only the last one")
    return topic


def _text(field: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ProtocolError(400, f"{field} must be a non-empty string")
    return value


def _choice(field: str, value: object, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ProtocolError(400, f"{field} must be one of {list(choices)}, not {value!r}")
    return value


def _integer(field: str, value: object, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ProtocolError(400, f"{field} must be an integer from {low} to {high}, not {value!r}")
    return value

