"""The body of a query's answer in the negotiated format, chunk by chunk.

It knows no web framework: the Starlette application sends the chunks from
worker threads (:mod:`endpoint.responses`), the Flask blueprint from its
WSGI server's thread. SELECT rows are decoded a chunk at a time from ID
columns, and graphs are written incrementally with the query's prefixes
(:func:`engine.rdf.write_graph`), so no answer is built whole in memory.
"""

from __future__ import annotations

from collections.abc import Iterator

from endpoint.negotiation import Offer
from engine.api import QueryResult
from engine.rdf import write_graph
from engine.sparql.results import write_boolean, write_select_ids


def answer_chunks(result: QueryResult, offer: Offer) -> Iterator[bytes]:
    """The answer of ``result`` in ``offer``'s format; nothing is written
    until the first chunk is asked for."""
    if result.form == "ASK":
        return iter([write_boolean(offer.format, bool(result.boolean))])
    if result.form == "SELECT":
        return write_select_ids(offer.format, result.variables, result.id_chunks(), result.decode_ids,
                                result.spell_ids)
    return write_graph(offer.format, result.triples(), result.prefixes)
