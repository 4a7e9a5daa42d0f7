"""Turning engine answers into HTTP responses, streamed where the writer can.

SELECT solutions and N-Triples go out chunk by chunk (rows are decoded a
chunk at a time by the engine), so a large answer is never built whole in
memory; a small SELECT answer is written at once. Turtle, RDF/XML and
JSON-LD are written by rdflib, which needs the whole graph first.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from starlette.responses import Response, StreamingResponse

from endpoint import negotiation
from endpoint.negotiation import Offer
from endpoint.workers import Workers
from engine.api import QueryResult
from engine.rdf import Term, format_term, serialize_triples
from engine.sparql.results import write_boolean, write_select_ids

#: triples per chunk when N-Triples are streamed
NT_CHUNK = 2048
#: SELECT answers up to this many rows are written whole, without a worker thread
INLINE_ROWS = 256

Triple = tuple[Term, Term, Term]

_OFFERS = {
    "SELECT": negotiation.SOLUTIONS,
    "ASK": negotiation.BOOLEAN,
    "CONSTRUCT": negotiation.GRAPH,
    "DESCRIBE": negotiation.GRAPH,
}


def offers_for(form: str) -> tuple[Offer, ...]:
    """The formats a query form's answer can be sent in."""
    return _OFFERS[form]


async def query_response(result: QueryResult, offer: Offer, workers: Workers) -> Response:
    """The answer of a query, in the negotiated format. A small SELECT
    answer is written at once on the event loop; a larger one is streamed,
    written chunk by chunk in worker threads."""
    if result.form == "ASK" or (result.form == "SELECT" and len(result) <= INLINE_ROWS):
        return small_query_response(result, offer)
    headers = {"Vary": "Accept"}
    if result.form == "SELECT":
        chunks = write_select_ids(offer.format, result.variables, result.id_chunks(), result.decode_ids)
        return StreamingResponse(await workers.stream(chunks), headers=headers, media_type=offer.content_type)
    return await graph_response(result.triples(), offer, workers, headers)


def small_query_response(result: QueryResult, offer: Offer) -> Response:
    """The whole answer of an ASK or of a small SELECT, written at once."""
    if result.form == "ASK":
        body = write_boolean(offer.format, bool(result.boolean))
    else:
        chunks = write_select_ids(offer.format, result.variables, result.id_chunks(), result.decode_ids)
        body = b"".join(chunks)
    return Response(body, headers={"Vary": "Accept"}, media_type=offer.content_type)


async def graph_response(triples: Iterable[Triple], offer: Offer, workers: Workers,
                         headers: dict[str, str] | None = None) -> Response:
    """A graph in the negotiated RDF syntax."""
    if offer.format == "nt":
        return StreamingResponse(await workers.stream(_ntriples(triples)), headers=headers,
                                 media_type=offer.content_type)
    body = await workers.call(serialize_triples, triples, offer.format)
    return Response(body, headers=headers, media_type=offer.content_type)


def _ntriples(triples: Iterable[Triple]) -> Iterator[bytes]:
    batch: list[str] = []
    for s, p, o in triples:
        batch.append(f"{format_term(s)} {format_term(p)} {format_term(o)} .\n")
        if len(batch) >= NT_CHUNK:
            yield "".join(batch).encode()
            batch.clear()
    if batch:
        yield "".join(batch).encode()
