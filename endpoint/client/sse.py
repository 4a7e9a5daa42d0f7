"""A Server-Sent Events parser: the lines of a ``text/event-stream`` body to events.

It follows the event stream interpretation of the HTML standard, which is
what a browser's ``EventSource`` does: ``field: value`` lines (one optional
space after the colon), ``data`` lines joined with newlines, an event
dispatched at a blank line, comment lines (``: ping``) ignored, an ``id``
with a NUL ignored, ``retry`` in milliseconds. It is small enough that the
client needs no library for it, and it takes any iterable of lines, so the
same code reads a live HTTP response and a test's text.

A line of an event stream ends at CR LF, LF or CR only
(:func:`event_stream_lines`): Python's ``str.splitlines`` (and HTTP
libraries' line iterators built on it) also split at U+2028, U+0085 and
other separators that a result's literal may hold raw in a ``data`` line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event; ``id`` is the last event id in force when it was dispatched."""

    event: str
    data: str
    id: str | None
    retry_ms: int | None = None


def parse_events(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """The events of an event stream given as lines without their line endings.
    An event not ended by a blank line before the stream ends is dropped, as
    a browser drops it: it may be cut short."""
    event_type = ""
    data: list[str] = []
    last_id: str | None = None
    retry: int | None = None
    for line in lines:
        if not line:
            if data:
                yield ServerSentEvent(event_type or "message", "\n".join(data), last_id, retry)
            event_type, data, retry = "", [], None
            continue
        if line.startswith(":"):
            continue
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "event":
            event_type = value
        elif field == "data":
            data.append(value)
        elif field == "id":
            if "\0" not in value:
                last_id = value
        elif field == "retry" and value.isascii() and value.isdigit() and len(value) < 10:
            retry = int(value)


def event_stream_lines(chunks: Iterable[str]) -> Iterator[str]:
    """The lines (without their ends) of an event stream read as text
    chunks cut anywhere: a CR ending a chunk is held back, since the next
    chunk may begin with the LF of the same line end."""
    pending = ""
    for chunk in chunks:
        pending += chunk
        held = pending.endswith("\r")
        parts = _LINE_END.split(pending[:-1] if held else pending)
        pending = parts.pop() + ("\r" if held else "")
        yield from parts
    if pending:
        yield pending.removesuffix("\r")  # a CR held back ended its line
