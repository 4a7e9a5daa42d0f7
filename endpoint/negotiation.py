"""Choosing a response format from the ``Accept`` header or a ``format`` parameter.

A result kind (solutions, a boolean, a graph) has a list of offers in the
server's order of preference, taken from the media type registry
(:mod:`engine.rdf.media_types`); the client's media ranges and q-values pick
one. The first offer of each list is what a client that says nothing (or
``*/*``) gets. A wildcard (``text/*``) matches proper media types only: an
alias (``text/xml`` for SPARQL XML) is chosen when a client names it.
Nothing acceptable is a 406 with the formats available.

It knows no web framework; the routes of both the Starlette application and
the Flask blueprint call :func:`pick_offer`.
"""

from __future__ import annotations

from endpoint.problems import ProtocolError
from engine.rdf import FORMAT_NAMES, MediaType, offered_for

#: an offer is a registry entry: its media type, the writer's format name and
#: the Content-Type header sent with it
Offer = MediaType

#: SELECT results; names are those of engine.sparql.results
SOLUTIONS = offered_for("solutions")

#: ASK results: CSV and TSV define no boolean (we write one line), so the
#: formats whose specification has one come first
BOOLEAN = tuple(sorted(offered_for("boolean"), key=lambda offer: offer.format in ("csv", "tsv")))

#: CONSTRUCT, DESCRIBE, the service description and graph store GETs;
#: names are those of engine.rdf.write_graph
GRAPH = offered_for("graph")

#: the whole store (a graph store GET naming no graph); names are those of engine.rdf.write_dataset
DATASET = offered_for("dataset")


_OFFERS = {"SELECT": SOLUTIONS, "ASK": BOOLEAN, "CONSTRUCT": GRAPH, "DESCRIBE": GRAPH}


def offers_for(form: str) -> tuple[Offer, ...]:
    """The formats a query form's answer can be sent in."""
    return _OFFERS[form]


def combined_accept(lines: list[str]) -> str | None:
    """The ``Accept`` header from all its lines (HTTP allows a list header
    to be sent as several lines, and some clients do); None without one."""
    return ", ".join(lines) if lines else None


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


def _quality(offer: Offer, ranges: list[tuple[str, float]]) -> float:
    """q of the most specific range matching the offer (RFC 9110 12.5.1);
    an alias matches only a range that names it."""
    media_type = offer.media_type
    kind = media_type.split("/", 1)[0]
    best: tuple[int, float] | None = None
    for media, q in ranges:
        if media == media_type:
            specificity = 2
        elif offer.alias_of:
            continue
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
        q = _quality(offer, ranges)
        if q > best_q:
            best, best_q = offer, q
    return best


def from_format_parameter(offers: tuple[Offer, ...], value: str) -> Offer | None:
    """The offer a ``format`` parameter names: a short name or a media type."""
    name = value.strip().lower()
    wanted = FORMAT_NAMES.get(name, name)
    for offer in offers:
        if offer.media_type == wanted:
            return offer
    return None


def pick_offer(offers: tuple[Offer, ...], accept: str | None, formats: tuple[str, ...] = ()) -> Offer:
    """The format to answer in: the one the format parameters name (their
    values may repeat one choice under several spellings, and those naming
    nothing offered here are passed over, as clients send them for other
    servers), else the ``Accept`` header's choice. 400 when the parameters
    name two different formats, 406 when nothing fits."""
    if formats:
        named = {offer.content_type: offer for value in formats
                 if (offer := from_format_parameter(offers, value)) is not None}
        if len(named) > 1:
            raise ProtocolError(400, "the format parameters name different formats: "
                                     + ", ".join(repr(v) for v in dict.fromkeys(formats)))
        if not named:
            shown = ", ".join(repr(v) for v in dict.fromkeys(formats))
            raise ProtocolError(406, f"format {shown} is not available here; available: {_listing(offers)}")
        return next(iter(named.values()))
    offer = choose(offers, accept)
    if offer is None:
        raise ProtocolError(406, f"no format acceptable to Accept: {accept}; available: {_listing(offers)}")
    return offer


def _listing(offers: tuple[Offer, ...]) -> str:
    return ", ".join(dict.fromkeys(o.content_type.split(";")[0] for o in offers))
