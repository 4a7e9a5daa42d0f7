"""Syntax: SPARQL text to the algebra of :mod:`engine.sparql.algebra`.

``parse_query`` and ``parse_update`` read SPARQL 1.1; ``parse_registration``
reads a C-SPARQL / RSP-QL continuous query (``REGISTER ...``) into a
:class:`ContinuousQuery` with its :class:`WindowSpec` windows, and
``is_registration`` tells the two kinds of request apart without parsing.
The parser is a layered recursive descent over one token list (tokenizer,
terms, expressions, triples and paths, graph patterns, queries, updates,
registrations); every syntax or static-semantics problem is a
:class:`SparqlSyntaxError` carrying the line and column of the culprit.
"""

from engine.sparql.syntax.errors import SparqlSyntaxError
from engine.sparql.syntax.parse import parse_query, parse_update
from engine.sparql.syntax.registration import (
    BARE_NAME_NAMESPACE,
    REPORT_STRATEGIES,
    ContinuousQuery,
    ReportStrategy,
    WindowSpec,
    is_registration,
    parse_registration,
    with_report_clause,
)

__all__ = [
    "BARE_NAME_NAMESPACE",
    "REPORT_STRATEGIES",
    "ContinuousQuery",
    "ReportStrategy",
    "SparqlSyntaxError",
    "WindowSpec",
    "is_registration",
    "parse_query",
    "parse_registration",
    "parse_update",
    "with_report_clause",
]
