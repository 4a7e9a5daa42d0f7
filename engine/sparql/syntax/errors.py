"""The error raised for malformed SPARQL text.

It lives in its own module so that the tokenizer and every part of the parser
can raise it without importing each other; callers import it from
:mod:`engine.sparql.syntax`.
"""

from __future__ import annotations


class SparqlSyntaxError(ValueError):
    """A syntax (or static-semantics) error with a 1-based line and column.

    ``str()`` reads ``line 3, column 7: expected '}' but found 'FILTER'`` so
    that the HTTP layer can hand it to the client unchanged.
    """

    status = 400

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.message = message
        self.line = line
        self.column = column


def error_at(text: str, pos: int, message: str) -> SparqlSyntaxError:
    """Build the error for offset ``pos`` of ``text``.

    Line and column are computed only here, when an error actually happens,
    so the tokenizer never has to track them on the hot path.
    """
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return SparqlSyntaxError(message, line, column)
