"""A fast N-Triples / N-Quads line reader (our own: rdflib's parser is far too
slow for stream ingestion). One compiled regex matches a whole statement;
escapes are decoded only in the rare strings and IRIs that contain a backslash.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine.rdf.terms import IRI, BNode, Literal, Term

_IRI = r"<([^<>\"{}|^`\\\x00-\x20]*(?:\\[uU][0-9A-Fa-f]{4,8}[^<>\"{}|^`\\\x00-\x20]*)*)>"
_BNODE = r"_:([A-Za-z0-9_\u00C0-\uFFFF](?:[A-Za-z0-9_.\-\u00B7-\uFFFF]*[A-Za-z0-9_\-\u00B7-\uFFFF])?)"
_LITERAL = r'"((?:[^"\\\n\r]|\\.)*)"(?:@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*)|\^\^' + _IRI + ")?"

_SUBJECT = "(?:" + _IRI + "|" + _BNODE + ")"
_OBJECT = "(?:" + _IRI + "|" + _BNODE + "|" + _LITERAL + ")"
_GRAPH = "(?:[ \t]+(?:" + _IRI + "|" + _BNODE + "))?"
STATEMENT = re.compile(
    r"[ \t]*" + _SUBJECT + r"[ \t]+" + _IRI + r"[ \t]+" + _OBJECT + _GRAPH + r"[ \t]*\.[ \t]*(?:#.*)?$"
)

_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")


class NTriplesError(ValueError):
    """A line that is not a valid statement; ``line`` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text

    def replace(match: re.Match) -> str:
        code = match.group(1) or match.group(2)
        if code:
            return chr(int(code, 16))
        char = match.group(3)
        if char not in _ESCAPES:
            raise ValueError(f"bad escape \\{char}")
        return _ESCAPES[char]

    return _ESCAPE.sub(replace, text)


def parse_statement(text: str, line: int = 1) -> tuple[Term, Term, Term, Term | None]:
    """One statement (triple or quad) from one line."""
    m = STATEMENT.match(text)
    if m is None:
        raise NTriplesError(f"not an N-Triples/N-Quads statement: {text.strip()[:80]!r}", line)
    g = m.groups()
    try:
        subject = IRI(_unescape(g[0])) if g[0] is not None else BNode(g[1])
        predicate = IRI(_unescape(g[2]))
        if g[3] is not None:
            obj: Term = IRI(_unescape(g[3]))
        elif g[4] is not None:
            obj = BNode(g[4])
        else:
            datatype = _unescape(g[7]) if g[7] is not None else None
            obj = Literal(_unescape(g[5]), datatype, g[6])
        graph = IRI(_unescape(g[8])) if g[8] is not None else (BNode(g[9]) if g[9] is not None else None)
    except ValueError as exc:
        raise NTriplesError(str(exc), line) from exc
    return subject, predicate, obj, graph


def parse_lines(text: str) -> Iterator[tuple[int, tuple[Term, Term, Term, Term | None]]]:
    """``(line number, statement)`` for every non-blank, non-comment line."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield number, parse_statement(line, number)
