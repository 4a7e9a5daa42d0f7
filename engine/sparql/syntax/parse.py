"""The entry points of the SPARQL 1.1 parser: query text and update text to algebra."""

from __future__ import annotations

from engine.sparql.algebra import Query, Update
from engine.sparql.syntax.update_parser import UpdateParser


def parse_query(text: str, base: str | None = None) -> Query:
    """Parse a query; relative IRIs are resolved against ``base`` (or BASE)."""
    return UpdateParser(text, base).query()


def parse_update(text: str, base: str | None = None) -> Update:
    """Parse an update request of one or more ';'-separated operations."""
    return UpdateParser(text, base).update()
