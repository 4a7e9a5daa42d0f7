"""The wire form of window events: one Server-Sent Event per reported window.

The data field is one line of JSON: the window's bounds and timings and its
answer as SPARQL 1.1 JSON results (CONSTRUCT: ?subject ?predicate ?object
rows). A window whose evaluation failed is a ``window-error`` event instead
(not ``error``, which a browser's EventSource also fires for a lost
connection): the same id and bounds, and ``error`` (``reason``, ``message``)
in place of the answer. The data is written once per event however many
subscribers send it: the payloads are cached per event, for as long as the
engine retains the event. The answer is written from the event's rows as
positions in their distinct terms (each term's JSON spelled once, the rows
assembled from the pieces). :func:`window_sse` gives it to sse-starlette
(the Starlette application), :func:`sse_text` spells the whole event (the
Flask blueprint), :func:`event_json` gives the data as bytes (for other
sinks, such as a message broker's).
"""

from __future__ import annotations

import threading
import weakref

import orjson
from sse_starlette.sse import ServerSentEvent

from engine.sparql.results import write_boolean, write_json_indexed
from engine.stream import WindowEvent
from engine.stream.reported_rows import ReportedRows

#: payloads of the events still alive; read by the event loop and by WSGI threads
_payloads: weakref.WeakKeyDictionary[WindowEvent, str] = weakref.WeakKeyDictionary()
_payloads_lock = threading.Lock()

#: the variables of a CONSTRUCT window's rows
TRIPLE_VARIABLES = ["subject", "predicate", "object"]


#: the SSE event types: a window's answer, and a window whose evaluation failed
WINDOW, WINDOW_ERROR = "window", "window-error"


def event_type(event: WindowEvent) -> str:
    """``window``, or ``window-error`` for a window that has no answer."""
    return WINDOW if event.error is None else WINDOW_ERROR


def window_sse(event: WindowEvent) -> ServerSentEvent:
    """The SSE of a window; its id is the sequence number a client resumes after."""
    return ServerSentEvent(data=event_payload(event), event=event_type(event), id=str(event.sequence))


def sse_text(event: WindowEvent) -> str:
    """The whole Server-Sent Event of a window, as sent on the wire."""
    return f"event: {event_type(event)}\nid: {event.sequence}\ndata: {event_payload(event)}\n\n"


def event_json(event: WindowEvent) -> bytes:
    """The event's data (its JSON, one line) as bytes, as an SSE carries it."""
    return event_payload(event).encode()


def event_payload(event: WindowEvent) -> str:
    """The event's JSON, written on first use and then shared."""
    with _payloads_lock:
        payload = _payloads.get(event)
    if payload is None:
        payload = _write(event)
        with _payloads_lock:
            _payloads[event] = payload
    return payload


def _write(event: WindowEvent) -> str:
    if event.error is not None:
        return orjson.dumps({
            "query": event.query,
            "sequence": event.sequence,
            "window": {"start_ms": event.start_ms, "end_ms": event.end_ms},
            "windows": _windows(event),
            "error": {"reason": event.error.reason, "message": event.error.message},
            "closed_at_ms": round(event.closed_at * 1000),
            "reported_at_ms": round(event.reported_at * 1000),
        }).decode()
    head = orjson.dumps(
        {
            "query": event.query,
            "sequence": event.sequence,
            "window": {"start_ms": event.start_ms, "end_ms": event.end_ms},
            "windows": _windows(event),
            "rows": event.count,
            "closed_at_ms": round(event.closed_at * 1000),
            "reported_at_ms": round(event.reported_at * 1000),
        }
    )
    # no newline inside: an SSE data field is one line
    return (head[:-1] + b',"results":' + results_json(event).strip() + b"}").decode()


def _windows(event: WindowEvent) -> list[dict]:
    """Each stream window's bounds: ``window`` bounds the evaluation as a
    whole (its instant, the earliest start), these each window on its own."""
    return [{"stream": w.stream, "name": w.name, "start_ms": w.start_ms, "end_ms": w.end_ms}
            for w in event.windows]


def results_json(event: WindowEvent) -> bytes:
    """The SPARQL 1.1 JSON results of the window (CONSTRUCT: ?s ?p ?o rows)."""
    if event.form == "ASK":
        return write_boolean("json", bool(event.boolean))
    variables = TRIPLE_VARIABLES if event.form == "CONSTRUCT" else event.variables
    reported = event.reported or ReportedRows.empty(len(variables))
    return write_json_indexed(variables, reported.terms, reported.index)
