"""Turning engine answers into HTTP responses, streamed where the writer can.

SELECT solutions and N-Triples go out chunk by chunk (rows are decoded a
chunk at a time by the engine), so a large answer is never built whole in
memory; a small SELECT answer is written at once. Graphs go out chunk by
chunk in every syntax (``engine.rdf.write_graph``), with the query's prefixes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from starlette.responses import Response, StreamingResponse

from endpoint.answers import answer_chunks
from endpoint.negotiation import Offer
from endpoint.workers import Workers
from engine.api import QueryResult
from engine.rdf import Term, write_graph

#: SELECT answers up to this many rows are written whole, without a worker thread
INLINE_ROWS = 256

Triple = tuple[Term, Term, Term]


async def query_response(result: QueryResult, offer: Offer, workers: Workers) -> Response:
    """The answer of a query, in the negotiated format. A small SELECT
    answer is written at once on the event loop; a larger one is streamed,
    written chunk by chunk in worker threads."""
    if result.form == "ASK" or (result.form == "SELECT" and len(result) <= INLINE_ROWS):
        return small_query_response(result, offer)
    return StreamingResponse(await workers.stream(answer_chunks(result, offer)), headers={"Vary": "Accept"},
                             media_type=offer.content_type)


def small_query_response(result: QueryResult, offer: Offer) -> Response:
    """The whole answer of an ASK or of a small SELECT, written at once."""
    return Response(b"".join(answer_chunks(result, offer)), headers={"Vary": "Accept"},
                    media_type=offer.content_type)


async def graph_response(triples: Iterable[Triple], offer: Offer, workers: Workers,
                         headers: dict[str, str] | None = None,
                         prefixes: Mapping[str, str] | None = None) -> Response:
    """A graph in the negotiated RDF syntax, streamed; ``prefixes`` are the
    query's (None when there is no query: the writer's standard few)."""
    chunks = write_graph(offer.format, triples, prefixes)
    return StreamingResponse(await workers.stream(chunks), headers=headers, media_type=offer.content_type)
