"""The OpenAPI 3.1 description of the routes that are Rivulet's own, served at ``GET /openapi.json``.

``/sparql`` and ``/store`` follow the W3C SPARQL 1.1 Protocol and Graph
Store Protocol, which their own documents describe; this covers the rest:
streams, continuous queries and their Server-Sent Events, the probes, the
metrics and this document. It is written by hand from the handlers
(:mod:`endpoint.stream_routes`, :mod:`endpoint.continuous_routes`,
:mod:`endpoint.health`, :mod:`endpoint.metrics`, :mod:`endpoint.admin_routes`) and the JSON they answer
with (``to_json`` of the engine's stream and query states);
tests/endpoint/test_openapi.py checks it against the application's routes,
the OpenAPI 3.1 schema and the server's real answers.
"""

from __future__ import annotations

from importlib.metadata import version

import orjson
from starlette.requests import Request
from starlette.responses import Response

TEXT = {"text/plain": {"schema": {"type": "string"}}}
MAYBE_INT = {"type": ["integer", "null"]}
IRI = {"type": "string", "format": "iri"}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict, description: str, headers: dict | None = None) -> dict:
    answer = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        answer["headers"] = headers
    return answer


def _error(description: str) -> dict:
    """An error answer: one line of text saying what was wrong."""
    return {"description": description, "content": TEXT}


#: a window event's id, as a client resumes after it
EVENT_ID = {"type": "string", "pattern": "^[0-9]{1,19}$"}


def _errors(*codes: str) -> dict:
    return {code: {"$ref": f"#/components/responses/{code}"} for code in codes}


def _object(properties: dict, required: bool = True) -> dict:
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(properties)
    return schema


STREAM_NAME = {"name": "name", "in": "path", "required": True, "description": "the stream's name",
               "schema": {"type": "string", "pattern": "^[A-Za-z0-9._~-]{1,200}$"}}
QUERY_NAME = {"name": "name", "in": "path", "required": True,
              "description": "the name given in the registration", "schema": {"type": "string"}}
#: an event's ``window``: the evaluation as a whole (its instant, the earliest start of its windows)
EVALUATION_BOUNDS = {**_object({"start_ms": {"type": "integer"}, "end_ms": {"type": "integer"}}),
                     "description": "end_ms: the instant of the evaluation (the close); start_ms: the "
                                    "earliest start of its windows"}
#: an event's ``windows``: each stream window's own bounds
EVENT_WINDOWS = {"type": "array", "items": _ref("EventWindow"),
                 "description": "each stream window's bounds at the instant (its latest window closed "
                                "by then), in registration order"}
LOCATION = {"Location": {"description": "the URL of what was created", "schema": {"type": "string"}}}
TIMESTAMP_FORMAT = ("milliseconds since the Unix epoch, or an xsd:dateTime (UTC when it has no zone); "
                    "the arrival time when neither the header nor the parameter is given")

def _with_optional(schema: dict, properties: dict) -> dict:
    """``schema`` with more properties, not required."""
    return {**schema, "properties": {**schema["properties"], **properties}}


#: a broker connection's fields, shared by a stream's source and a query's sink
BROKER_FIELDS = {
    "broker": {"type": "string", "description": "mqtt://HOST[:PORT]"},
    "qos": {"enum": [0, 1], "default": 1},
    "client_id": {"type": "string"},
    "username": {"type": "string"},
    "password_file": {"type": "string", "description": "a file holding the password (read at connect)"},
    "password_env": {"type": "string", "description": "an environment variable holding the password"},
}
#: a broker connection's state, shared by a stream's source and a query's sink
LINK_STATE = {"connected": {"type": "boolean"}, "connects": {"type": "integer"},
              "disconnects": {"type": "integer"}, "last_error": {"type": ["string", "null"]}}
SOURCE = {**_object({
    **BROKER_FIELDS,
    "topic": {"type": "string", "description": "the topic filter subscribed to"},
    "format": {"enum": ["application/n-triples", "text/turtle", "application/ld+json",
                        "application/x-timestamped-ntriples"]},
    "timestamp": {"enum": ["arrival", "property", "payload"]},
    "timestamp_property": {"type": "string", "default": "timestamp"},
    "id_property": {"type": "string", "default": "rivulet-id"},
    "inflight": {"type": "integer", "minimum": 1, "maximum": 65535, "default": 100},
}, required=False), "required": ["broker", "topic"],
    "description": "the MQTT broker the stream reads its items from (docs/operations.md)"}

SCHEMAS = {
    "StreamDefinition": _object({
        "iri": {**IRI, "description": "default: the stream's URL under --base-url (or the address the "
                                      "client connected to)"},
        "timing": {"type": "array", "items": IRI,
                   "description": "predicates kept only while a window needs them"},
        "timeless": {"type": ["array", "null"], "items": IRI,
                     "description": "if given, only these predicates are absorbed into the stored graph"},
        "graph": {**IRI, "description": "the stored graph absorbing timeless triples (default: the IRI)"},
        "idle": {"enum": ["none", "wallclock"], "default": "none"},
        "idle_lag_ms": {"type": "integer", "minimum": 0, "default": 1000},
        "source": SOURCE,
    }, required=False),
    "StreamDescription": _with_optional(_object({
        "name": {"type": "string"},
        "iri": IRI,
        "timing": {"type": "array", "items": IRI},
        "timeless": {"type": ["array", "null"], "items": IRI},
        "graph": IRI,
        "idle": {"enum": ["none", "wallclock"]},
        "idle_lag_ms": {"type": "integer"},
        "watermark_ms": {**MAYBE_INT, "description": "null until the first item or heartbeat"},
        "items": {"type": "integer"},
        "triples": {"type": "integer"},
        "rate_triples_per_s": {"type": "number", "description": "over the last 10 s"},
        "transient_triples": {"type": "integer"},
    }), {
        "source": SOURCE,
        "source_state": {"type": ["object", "null"], "properties": {
            **LINK_STATE, "messages": {"type": "integer"}, "items": {"type": "integer"},
            "bad_messages": {"type": "integer"}, "duplicates": {"type": "integer"},
            "acknowledged": {"type": "integer"}, "waiting": {"type": "integer"},
            "lag_s": {"type": "number"}, "last_bad_message": {"type": ["string", "null"]}},
            "description": "the source's connection and traffic (streams with a source)"},
    }),
    "IngestSummary": _object({
        "stream": {"type": "string"},
        "items": {"type": "integer"},
        "triples": {"type": "integer"},
        "watermark_ms": MAYBE_INT,
        "windows_fired": {"type": "integer"},
        "windows_failed": {"type": "integer", "description": "of the windows fired, those reported as "
                                                             "failed (over --timeout or --max-rows)"},
    }),
    "QueryWindow": _object({
        "stream": IRI,
        "name": {"type": ["string", "null"], "description": "the RSP-QL window's IRI"},
        "range_ms": MAYBE_INT,
        "step_ms": MAYBE_INT,
        "triples": {**MAYBE_INT, "description": "the count of a [TRIPLES n] window"},
    }),
    "QueryDescription": _object({
        "name": {"type": "string"},
        "language": {"enum": ["csparql", "rspql"]},
        "report": {"enum": ["RSTREAM", "ISTREAM", "DSTREAM"]},
        "report_strategy": _object({
            "name": {"enum": ["window-close", "non-empty", "content-change", "periodic"]},
            "period_ms": {**MAYBE_INT, "description": "the period of the periodic strategy"},
            "windows_skipped": {"type": "integer", "description": "window closes not reported (the "
                                                                  "strategy passed over them) since the "
                                                                  "server started"},
        }),
        "form": {"enum": ["SELECT", "ASK", "CONSTRUCT"]},
        "output_stream": {"type": ["string", "null"], "description": "REGISTER STREAM's output"},
        "windows": {"type": "array", "items": _ref("QueryWindow")},
        "next_window_close": {**MAYBE_INT, "description": "ms; null until the query's streams have data"},
        "windows_reported": {"type": "integer", "description": "the sequence number of the last window"},
        "windows_failed": {"type": "integer", "description": "windows reported as failed since the server "
                                                             "started"},
        "last_error": {"oneOf": [{"type": "null"}, _object({
            "sequence": {"type": "integer"},
            "window": _object({"start_ms": {"type": "integer"}, "end_ms": {"type": "integer"}}),
            "reason": {"enum": ["time_limit", "row_limit", "error"]},
            "message": {"type": "string"},
            "reported_at_ms": {"type": "integer"},
        })], "description": "the last window reported as failed"},
        "last_evaluation_ms": {"type": ["number", "null"]},
        "evaluation": {"type": "object", "properties": {"incremental": {"type": "boolean"}},
                       "required": ["incremental"],
                       "description": "in full, or from the windows' change (with its costs)"},
        "subscribers": {"type": "integer"},
        "query": {"type": "string", "description": "the registration's text"},
    }),
    "SinkDefinition": {**_object({
        **BROKER_FIELDS,
        "topic": {"type": "string", "description": "the topic each window is published to"},
        "format": {"enum": ["event", "triples"], "default": "event",
                   "description": "event: the window's SSE JSON; triples: a CONSTRUCT's N-Triples"},
    }, required=False), "required": ["broker", "topic"]},
    "SinkState": _object({
        "query": {"type": "string"}, "broker": {"type": "string"}, "topic": {"type": "string"},
        "qos": {"type": "integer"}, "format": {"enum": ["event", "triples"]}, "client_id": {"type": "string"},
        **LINK_STATE,
        "published": {"type": "integer", "description": "windows the broker acknowledged"},
        "last_sequence": {**MAYBE_INT, "description": "the sequence of the last window published"},
        "skipped": {"type": "integer", "description": "windows no longer retained when the broker came back"},
    }),
    "CheckpointReport": _object({
        "lsn": {"type": "integer", "description": "the last log record the checkpoint holds"},
        "triples": {"type": "integer"},
        "seconds": {"type": "number"},
        "taken": {"type": "boolean", "description": "false: nothing was logged since the last checkpoint, "
                                                    "which this names"},
    }),
    "EventWindow": _object({
        "stream": IRI,
        "name": {"type": ["string", "null"], "description": "the RSP-QL window's IRI"},
        "start_ms": {"type": "integer"},
        "end_ms": {"type": "integer"},
    }),
    "WindowEvent": {
        **_object({
            "query": {"type": "string"},
            "sequence": {"type": "integer", "minimum": 1, "description": "also the event's id"},
            "window": EVALUATION_BOUNDS,
            "windows": EVENT_WINDOWS,
            "rows": {"type": "integer"},
            "closed_at_ms": {"type": "integer"},
            "reported_at_ms": {"type": "integer"},
            "results": {"type": "object", "description": "SPARQL 1.1 JSON results; CONSTRUCT as "
                                                         "subject/predicate/object rows"},
        }),
        "description": "the data of one `window` event: one line of JSON",
    },
    "WindowErrorEvent": {
        **_object({
            "query": {"type": "string"},
            "sequence": {"type": "integer", "minimum": 1, "description": "also the event's id"},
            "window": EVALUATION_BOUNDS,
            "windows": EVENT_WINDOWS,
            "error": _object({"reason": {"enum": ["time_limit", "row_limit", "error"]},
                              "message": {"type": "string"}}),
            "closed_at_ms": {"type": "integer"},
            "reported_at_ms": {"type": "integer"},
        }),
        "description": "the data of one `window-error` event (a window whose evaluation failed): one line "
                       "of JSON",
    },
}

RESPONSES = {
    "400": _error("malformed: the message names the problem (and the line of a body)"),
    "401": _error("a write without the bearer token the server was started with (--update-token)"),
    "403": _error("a write to a read-only server, or from a site CORS does not allow"),
    "404": _error("no such stream or query"),
    "409": _error("a late item (its timestamp and the watermark in the message), a name or a stream IRI "
                  "already taken, or a stream that registered queries read or write (the message names "
                  "them)"),
    "413": _error("a body over the server's limit (--max-body)"),
    "415": _error("a body type the route does not take"),
    "422": _error("a timestamp that would make the queries report more than 100,000 windows in all at "
                  "once"),
}

ITEM_BODY = {"schema": {"type": "string"}}

PATHS = {
    "/streams": {
        "get": {
            "operationId": "listStreams", "summary": "Every declared stream", "tags": ["streams"],
            "responses": {"200": _json(_object({"streams": {"type": "array",
                                                              "items": _ref("StreamDescription")}}),
                                       "the streams")},
        },
    },
    "/streams/{name}": {
        "parameters": [STREAM_NAME],
        "put": {
            "operationId": "declareStream", "summary": "Declare or re-declare a stream", "tags": ["streams"],
            "requestBody": {"required": False, "content": {"application/json": {
                "schema": _ref("StreamDefinition")}}},
            "description": "A stream's IRI never changes: a name declared with another IRI, or an IRI "
                           "another stream has, is a 409. While registered queries read the stream or "
                           "write into it, a re-declaration may change `idle` and `idle_lag_ms` only.",
            "responses": {
                "200": _json(_ref("StreamDescription"), "re-declared", LOCATION),
                "201": _json(_ref("StreamDescription"), "declared", LOCATION),
                **_errors("400", "401", "403", "409", "413"),
            },
        },
        "delete": {
            "operationId": "dropStream", "summary": "Drop a stream",
            "description": "Its transient data is freed; what it absorbed stays in its stored graph. "
                           "Refused (409) while a registered query reads it or writes into it "
                           "(`REGISTER STREAM`): unregister them first. The name may then be declared "
                           "again, as a new stream.",
            "tags": ["streams"],
            "responses": {"204": {"description": "dropped"}, **_errors("401", "403", "404", "409")},
        },
        "get": {
            "operationId": "describeStream", "summary": "One stream", "tags": ["streams"],
            "responses": {"200": _json(_ref("StreamDescription"), "the stream"), **_errors("404")},
        },
        "post": {
            "operationId": "ingest", "summary": "Post one item, a heartbeat or a batch of items",
            "description": "One item in an RDF syntax at the timestamp of `X-Timestamp` or `timestamp` "
                           "(an empty body is a heartbeat), or many items as timestamped N-Triples "
                           "(`TIMESTAMP <s> <p> <o> .` per line; a timestamp alone is a heartbeat; "
                           "timestamps must not decrease). All or nothing of a request is ingested.",
            "tags": ["streams"],
            "parameters": [
                {"name": "X-Timestamp", "in": "header", "description": TIMESTAMP_FORMAT,
                 "schema": {"type": "string"}},
                {"name": "timestamp", "in": "query", "description": TIMESTAMP_FORMAT,
                 "schema": {"type": "string"}},
            ],
            "requestBody": {"required": False, "content": {
                "application/n-triples": ITEM_BODY, "text/turtle": ITEM_BODY,
                "application/ld+json": ITEM_BODY, "application/rdf+xml": ITEM_BODY,
                "application/x-timestamped-ntriples": ITEM_BODY,
            }},
            "responses": {"202": _json(_ref("IngestSummary"), "ingested; windows it closed have fired"),
                          **_errors("400", "401", "403", "404", "409", "413", "415", "422")},
        },
    },
    "/queries": {
        "get": {
            "operationId": "listQueries", "summary": "Every registered continuous query", "tags": ["queries"],
            "responses": {"200": _json(_object({"queries": {"type": "array",
                                                              "items": _ref("QueryDescription")}}),
                                       "the queries")},
        },
        "post": {
            "operationId": "registerQuery", "summary": "Register a C-SPARQL or RSP-QL query",
            "tags": ["queries"],
            "parameters": [
                {"name": "report", "in": "query", "description": "when windows are reported (also a form "
                 "field; written into the text as its REPORT clause)",
                 "schema": {"enum": ["window-close", "non-empty", "content-change", "periodic"]}},
                {"name": "period", "in": "query", "description": "the period of report=periodic, like 5s "
                 "or PT5S (a multiple of the windows' STEP)", "schema": {"type": "string"}},
            ],
            "requestBody": {"required": True, "content": {
                "application/sparql-query": ITEM_BODY, "text/plain": ITEM_BODY,
                "application/x-www-form-urlencoded": {"schema": _object({"query": {"type": "string"}})},
            }},
            "responses": {"201": _json(_ref("QueryDescription"), "registered", LOCATION),
                          **_errors("400", "401", "403", "404", "409", "413", "415")},
        },
    },
    "/queries/{name}": {
        "parameters": [QUERY_NAME],
        "get": {
            "operationId": "describeQuery", "summary": "One query", "tags": ["queries"],
            "responses": {"200": _json(_ref("QueryDescription"), "the query"), **_errors("404")},
        },
        "delete": {
            "operationId": "unregisterQuery", "summary": "Unregister a query; its event streams end",
            "tags": ["queries"],
            "responses": {"204": {"description": "unregistered"}, **_errors("401", "403", "404")},
        },
    },
    "/queries/{name}/events": {
        "parameters": [QUERY_NAME],
        "get": {
            "operationId": "queryEvents", "summary": "The query's windows as Server-Sent Events",
            "description": "One `window` event per window: `id` its sequence number, `data` one line of "
                           "JSON (#/components/schemas/WindowEvent); a window whose evaluation failed is a "
                           "`window-error` event instead, numbered the same way "
                           "(#/components/schemas/WindowErrorEvent). A `: ping` comment every 15 s. "
                           "After `Last-Event-ID: n` (or `last_event_id=n`) the retained events after n "
                           "come first (the last 1000 per query).",
            "tags": ["queries"],
            "parameters": [
                {"name": "Last-Event-ID", "in": "header", "schema": EVENT_ID,
                 "description": "resume after this sequence number (anything else: 400)"},
                {"name": "last_event_id", "in": "query", "schema": EVENT_ID,
                 "description": "the same, for clients that cannot set the header"},
            ],
            "responses": {"200": {"description": "the event stream, open until the query is unregistered",
                                  "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                          **_errors("400", "404")},
        },
    },
    "/queries/{name}/sink": {
        "parameters": [QUERY_NAME],
        "put": {
            "operationId": "attachSink", "summary": "Publish the query's windows to an MQTT broker",
            "description": "One message per window, in window order, QoS 1 retried while the broker is "
                           "away (docs/operations.md).",
            "tags": ["queries"],
            "requestBody": {"required": True,
                            "content": {"application/json": {"schema": _ref("SinkDefinition")}}},
            "responses": {"200": _json(_ref("SinkState"), "replaced"),
                          "201": _json(_ref("SinkState"), "attached"),
                          **_errors("400", "401", "403", "404")},
        },
        "get": {
            "operationId": "describeSink", "summary": "The query's sink and where it stands",
            "tags": ["queries"],
            "responses": {"200": _json(_ref("SinkState"), "the sink"), **_errors("404")},
        },
        "delete": {
            "operationId": "detachSink", "summary": "Stop publishing the query's windows",
            "tags": ["queries"],
            "responses": {"204": {"description": "detached"}, **_errors("401", "403", "404")},
        },
    },
    "/admin/checkpoint": {
        "post": {
            "operationId": "checkpoint", "summary": "Take a checkpoint now", "tags": ["operations"],
            "description": "Folds the write-ahead log into a new checkpoint of the data directory and "
                           "answers once the catalog records it (queries and writes go on meanwhile). A "
                           "write: needs the --update-token when there is one, refused on --read-only.",
            "responses": {
                "200": _json(_ref("CheckpointReport"), "the checkpoint in force"),
                **_errors("401", "403"),
                "409": _error("the server has no data directory (--data-dir)"),
                "500": _error("the checkpoint failed; the log still holds every write"),
            },
        },
    },
    "/healthz": {
        "get": {"operationId": "healthz", "summary": "Liveness: the process serves", "tags": ["operations"],
                "responses": {"200": {"description": "`ok`", "content": TEXT}}},
        "head": {"operationId": "healthzHead", "summary": "Liveness, without a body", "tags": ["operations"],
                 "responses": {"200": {"description": "serving"}}},
    },
    "/readyz": {
        "get": {"operationId": "readyz", "summary": "Readiness: send it traffic", "tags": ["operations"],
                "responses": {"200": {"description": "`ready`", "content": TEXT},
                              "503": {"description": "`shutting down`", "content": TEXT}}},
        "head": {"operationId": "readyzHead", "summary": "Readiness, without a body", "tags": ["operations"],
                 "responses": {"200": {"description": "ready"}, "503": {"description": "shutting down"}}},
    },
    "/metrics": {
        "get": {"operationId": "metrics", "summary": "Prometheus metrics", "tags": ["operations"],
                "description": "The Prometheus text format, or OpenMetrics when `Accept` asks for it.",
                "responses": {"200": {"description": "the current values", "content": {
                    "text/plain": {"schema": {"type": "string"}},
                    "application/openmetrics-text": {"schema": {"type": "string"}}}}}},
    },
    "/openapi.json": {
        "get": {"operationId": "openapi", "summary": "This document", "tags": ["operations"],
                "responses": {"200": _json({"type": "object"}, "the OpenAPI 3.1 description")}},
    },
}


DOCUMENT = {
    "openapi": "3.1.0",
    "info": {
        "title": "Rivulet: streams and continuous queries",
        "version": version("rivulet"),
        "description": "RDF streams, C-SPARQL / RSP-QL continuous queries and their windows over "
                       "Server-Sent Events, and the operations routes. `/sparql` and `/store` follow "
                       "the W3C SPARQL 1.1 Protocol and Graph Store HTTP Protocol (docs/http-api.md). "
                       "Writes need `Authorization: Bearer TOKEN` on a server started with "
                       "--update-token. Errors are one line of text/plain.",
    },
    "tags": [{"name": "streams"}, {"name": "queries"}, {"name": "operations"}],
    "paths": PATHS,
    "components": {"schemas": SCHEMAS, "responses": RESPONSES},
}

#: the document as served, encoded once
_ENCODED = orjson.dumps(DOCUMENT)


async def openapi_json(request: Request) -> Response:
    """``GET /openapi.json``."""
    return Response(_ENCODED, media_type="application/json")
