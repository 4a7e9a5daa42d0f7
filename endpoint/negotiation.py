"""Choosing a response format from the ``Accept`` header or a ``format`` parameter.

A result kind (solutions, a boolean, a graph) has a list of offers in the
server's order of preference; the client's media ranges and q-values pick
one. The first offer of each list is what a client that says nothing (or
``*/*``) gets. ``None`` means nothing acceptable: the caller answers 406.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Offer:
    """A media type the server can send, the writer's format name, and the
    Content-Type header sent with it."""

    media_type: str
    format: str
    content_type: str


def _offer(media_type: str, fmt: str, canonical: str | None = None) -> Offer:
    content_type = canonical or media_type
    if content_type.startswith("text/"):
        content_type += "; charset=utf-8"
    return Offer(media_type, fmt, content_type)


_JSON = "application/sparql-results+json"
_XML = "application/sparql-results+xml"

#: SELECT results; names are those of engine.sparql.results.dispatch
SOLUTIONS = (
    _offer(_JSON, "json"),
    _offer(_XML, "xml"),
    _offer("text/csv", "csv"),
    _offer("text/tab-separated-values", "tsv"),
    _offer("application/json", "json", _JSON),
    _offer("application/xml", "xml", _XML),
    _offer("text/xml", "xml", _XML),
)

#: ASK results
BOOLEAN = (
    _offer(_JSON, "json"),
    _offer(_XML, "xml"),
    _offer("application/json", "json", _JSON),
    _offer("application/xml", "xml", _XML),
    _offer("text/xml", "xml", _XML),
    _offer("text/csv", "csv"),
    _offer("text/tab-separated-values", "tsv"),
)

#: CONSTRUCT, DESCRIBE, the service description and graph store GETs;
#: names are rdflib serialiser names (engine.rdf.documents.serialize_triples)
GRAPH = (
    _offer("text/turtle", "turtle"),
    _offer("application/n-triples", "nt"),
    _offer("application/rdf+xml", "xml"),
    _offer("application/ld+json", "json-ld"),
    _offer("application/x-turtle", "turtle", "text/turtle"),
    _offer("text/plain", "nt", "application/n-triples"),
    _offer("application/xml", "xml", "application/rdf+xml"),
    _offer("application/json", "json-ld", "application/ld+json"),
)

#: short names accepted by the ``format`` parameter -> a media type of the offers
FORMAT_NAMES = {
    "json": ("application/json",),
    "xml": ("application/xml",),
    "csv": ("text/csv",),
    "tsv": ("text/tab-separated-values",),
    "turtle": ("text/turtle",),
    "ttl": ("text/turtle",),
    "nt": ("application/n-triples",),
    "ntriples": ("application/n-triples",),
    "n-triples": ("application/n-triples",),
    "rdfxml": ("application/rdf+xml",),
    "rdf+xml": ("application/rdf+xml",),
    "jsonld": ("application/ld+json",),
    "json-ld": ("application/ld+json",),
}


def parse_accept(header: str) -> list[tuple[str, float]]:
    """Media ranges with their q-values, in header order; malformed q counts as 1."""
    ranges = []
    for item in header.split(","):
        parts = [p.strip() for p in item.split(";")]
        media = parts[0].lower()
        if not media:
            continue
        if "/" not in media:
            media = "*/*" if media == "*" else media + "/*"
        q = 1.0
        for param in parts[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = min(max(float(value), 0.0), 1.0)
                except ValueError:
                    q = 1.0
        ranges.append((media, q))
    return ranges


def _quality(media_type: str, ranges: list[tuple[str, float]]) -> float:
    """q of the most specific range matching ``media_type`` (RFC 9110 12.5.1)."""
    kind = media_type.split("/", 1)[0]
    best: tuple[int, float] | None = None
    for media, q in ranges:
        if media == media_type:
            specificity = 2
        elif media == f"{kind}/*":
            specificity = 1
        elif media == "*/*":
            specificity = 0
        else:
            continue
        if best is None or specificity > best[0]:
            best = (specificity, q)
    return best[1] if best else 0.0


def choose(offers: tuple[Offer, ...], accept: str | None) -> Offer | None:
    """The offer the client prefers most; ties go to the server's order."""
    if not accept or not accept.strip():
        return offers[0]
    ranges = parse_accept(accept)
    best, best_q = None, 0.0
    for offer in offers:
        q = _quality(offer.media_type, ranges)
        if q > best_q:
            best, best_q = offer, q
    return best


def from_format_parameter(offers: tuple[Offer, ...], value: str) -> Offer | None:
    """The offer a ``format`` parameter names: a short name or a media type."""
    wanted = FORMAT_NAMES.get(value.strip().lower(), (value.strip().lower(),))
    for offer in offers:
        if offer.media_type in wanted:
            return offer
    return None
