"""Reading the body of ``POST /streams/{name}`` into stream items.

One body is one batch: a single item in N-Triples, Turtle or JSON-LD (its
timestamp given beside the body, arrival time when absent), a heartbeat (an
empty body with a timestamp), or many items in timestamped N-Triples
(:mod:`~engine.stream.batch_format`). The whole body is read before anything
is ingested, so a malformed one changes nothing: :class:`BadItem` (400) or
:class:`UnsupportedItemType` (415).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.rdf import NTriplesError, Term, parse_lines, parse_rdf, rdf_format
from engine.stream.batch_format import MEDIA_TYPE as BATCH_MEDIA_TYPE
from engine.stream.batch_format import parse_batch, parse_timestamp
from engine.stream.batch_scan import scan_body
from engine.stream.errors import BadItem, UnsupportedItemType
from engine.stream.spelled_batch import SpelledBatch

#: an item: (timestamp in ms or None for arrival time, its triples)
Item = tuple[int | None, Sequence[tuple[Term, Term, Term]]]

NTRIPLES_TYPES = ("application/n-triples", "text/plain")
#: RDF syntaxes that name graphs: an item is triples
QUAD_FORMATS = ("nquads", "trig")


def read_batch(body: bytes, media_type: str, timestamp: str | None = None) -> SpelledBatch:
    """The items of a body of ``media_type`` as :func:`parse_items` reads
    them, as arrays: a body of (timestamped) N-Triples in the plain form a
    producer writes is scanned in whole-array steps
    (:mod:`~engine.stream.batch_scan`), any other is parsed."""
    ms = _milliseconds(timestamp)
    text = _text(body)
    scanned = None
    if media_type == BATCH_MEDIA_TYPE and ms is None:
        scanned = scan_body(body, timestamped=True)
    elif media_type in NTRIPLES_TYPES:
        scanned = scan_body(body, timestamped=False)
    if scanned is None:
        return SpelledBatch.of_items(_items(body, text, media_type, ms))
    times, counts, terms = scanned
    if media_type != BATCH_MEDIA_TYPE and ms is not None:
        times = np.array([ms], dtype=np.int64)
    arrival = media_type != BATCH_MEDIA_TYPE and ms is None
    return SpelledBatch(times, counts, terms, np.full(len(times), arrival))


def parse_items(body: bytes, media_type: str, timestamp: str | None = None) -> list[Item]:
    """The items of a body of ``media_type``; ``timestamp`` is the text of the
    single item's timestamp (ms or xsd:dateTime), None for arrival time."""
    ms = _milliseconds(timestamp)
    return _items(body, _text(body), media_type, ms)


def _text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadItem(f"the body is not UTF-8: {exc}") from exc


def _items(body: bytes, text: str, media_type: str, ms: int | None) -> list[Item]:
    if media_type == BATCH_MEDIA_TYPE:
        if ms is not None:
            raise BadItem("timestamped N-Triples carry their own timestamps: "
                          "drop the X-Timestamp header / timestamp parameter")
        return parse_batch(text)
    if not text.strip():
        if ms is None:
            raise BadItem("an empty item (heartbeat) needs a timestamp")
        return [(ms, [])]
    return [(ms, _triples(body, text, media_type))]


def _milliseconds(timestamp: str | None) -> int | None:
    if timestamp is None:
        return None
    try:
        return parse_timestamp(timestamp)
    except ValueError as exc:
        raise BadItem(str(exc)) from exc


def _triples(body: bytes, text: str, media_type: str) -> list[tuple[Term, Term, Term]]:
    """The triples of a single item."""
    if media_type in NTRIPLES_TYPES:
        try:
            return [(s, p, o) for _, (s, p, o, g) in parse_lines(text)]
        except NTriplesError as exc:
            raise BadItem(f"malformed N-Triples, nothing was ingested: {exc}") from exc
    fmt = rdf_format(media_type)
    if fmt is None or fmt in QUAD_FORMATS:
        raise UnsupportedItemType(f"unsupported item type {media_type!r}; use application/n-triples, "
                                  f"text/turtle, application/ld+json or {BATCH_MEDIA_TYPE}")
    try:
        return [(s, p, o) for s, p, o, _ in parse_rdf(body, fmt)]
    except Exception as exc:  # rdflib raises many kinds; all mean a malformed body
        raise BadItem(f"malformed {media_type} item, nothing was ingested: {exc}") from exc
