"""Timestamped N-Triples: the line-oriented format for many stream items in one body.

Each line is a timestamp, then optionally one N-Triples statement::

    # comments and blank lines are ignored
    1700000000000 <http://ex/s1> <http://ex/temp> "21.5"^^<http://www.w3.org/2001/XMLSchema#double> .
    1700000000000 <http://ex/s1> <http://ex/at> <http://ex/room1> .
    1700000000500 <http://ex/s2> <http://ex/temp> "19.0"^^<http://www.w3.org/2001/XMLSchema#double> .
    1700000001000

The timestamp is milliseconds since the Unix epoch or an ``xsd:dateTime``
(``2023-11-14T22:13:20Z``; without a zone, UTC). Consecutive lines with the
same timestamp form one item; a line with a timestamp alone is a heartbeat.
Timestamps must not decrease within a body. The format streams (a producer
appends lines) and is trivially produced by ``awk`` from N-Triples.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from engine.rdf import NTriplesError, parse_statement, statement_lines
from engine.stream.errors import StreamError

MEDIA_TYPE = "application/x-timestamped-ntriples"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class BatchFormatError(StreamError):
    """A malformed batch body; ``line`` is 1-based."""

    status = 400

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


#: timestamps the streams take: the years 1 to 9999 (xsd:dateTime's usual
#: range), in milliseconds since the epoch; anything outside is refused, so
#: that window arithmetic never leaves 64-bit integers
EARLIEST_MS = -62_135_596_800_000
LATEST_MS = 253_402_300_799_999
#: a timestamp in milliseconds: ASCII digits only (str.isdigit() and int()
#: also take superscripts and other scripts' digits)
_MILLISECONDS = re.compile(r"-?[0-9]+")


def parse_timestamp(text: str) -> int:
    """Milliseconds since the epoch from an integer or an xsd:dateTime,
    between :data:`EARLIEST_MS` and :data:`LATEST_MS`."""
    text = text.strip()
    if _MILLISECONDS.fullmatch(text):
        if len(text) > 16:  # refused before Python converts a long number
            raise ValueError(f"timestamp out of range (years 1 to 9999): {text[:20]!r}...")
        ms = int(text)
    else:
        try:
            if not text.isascii():  # Python reads other scripts' digits too
                raise ValueError(text)
            moment = datetime.fromisoformat(text)
        except ValueError as exc:
            raise ValueError(f"not a timestamp (milliseconds or xsd:dateTime): {text[:60]!r}") from exc
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        # integer arithmetic: float seconds * 1000 can land 1 ms early
        ms = (moment - _EPOCH) // timedelta(milliseconds=1)
    if not EARLIEST_MS <= ms <= LATEST_MS:
        raise ValueError(f"timestamp out of range (years 1 to 9999): {ms}")
    return ms


def parse_batch(text: str) -> list[tuple[int, list]]:
    """Items ``(timestamp, triples)`` in body order."""
    items: list[tuple[int, list]] = []
    last: int | None = None
    for number, line in enumerate(statement_lines(text), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        head, _, rest = stripped.partition(" ")
        if "\t" in head:
            head, _, tail = head.partition("\t")
            rest = tail + " " + rest
        try:
            ts = parse_timestamp(head)
        except ValueError as exc:
            raise BatchFormatError(str(exc), number) from exc
        if last is not None and ts < last:
            raise BatchFormatError(f"timestamp {ts} is older than the line before ({last})", number)
        if last != ts or not items:
            items.append((ts, []))
        last = ts
        rest = rest.strip()
        if rest:
            try:
                s, p, o, g = parse_statement(rest, number)
            except NTriplesError as exc:
                raise BatchFormatError(str(exc).split(": ", 1)[1], number) from exc
            if g is not None:
                raise BatchFormatError("a stream item holds triples, not quads", number)
            items[-1][1].append((s, p, o))
    return items
