"""Public entry points of the SPARQL 1.1 parser.

``parse_query`` and ``parse_update`` turn text into the algebra of
:mod:`engine.sparql.algebra`; every syntax or static-semantics problem is a
:class:`SparqlSyntaxError` carrying the line and column of the culprit.
"""

from __future__ import annotations

from engine.sparql.algebra import Query, Update
from engine.sparql.syntax.errors import SparqlSyntaxError
from engine.sparql.syntax.update_parser import UpdateParser

__all__ = ["SparqlSyntaxError", "parse_query", "parse_update"]


def parse_query(text: str, base: str | None = None) -> Query:
    """Parse a query; relative IRIs are resolved against ``base`` (or BASE)."""
    return UpdateParser(text, base).query()


def parse_update(text: str, base: str | None = None) -> Update:
    """Parse an update request of one or more ';'-separated operations."""
    return UpdateParser(text, base).update()
