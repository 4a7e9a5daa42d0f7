"""RDF terms in N-Triples / Turtle syntax, as the TSV result format uses them.

TSV writes every term the way a Turtle document would, so reading it back
needs the Turtle forms a producer may choose: full literals, language tags,
datatypes and the bare numeric and boolean shorthands.
"""

from __future__ import annotations

import re

from engine.rdf.terms import IRI, XSD, XSD_BOOLEAN, BNode, Literal, Term

_STRING_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_STRING_SPECIAL = re.compile(r'[\\"\n\r\t\b\f]')
# characters that may not appear raw inside an IRIREF
_IRI_SPECIAL = re.compile(r'[\x00-\x20<>"{}|^`\\]')

_UNESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[tbnrf\"'\\])")
_UCHAR = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})")

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?[0-9]*\.[0-9]+")
_DOUBLE = re.compile(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][+-]?[0-9]+")
_LANG = re.compile(r"[a-zA-Z]+(-[a-zA-Z0-9]+)*")
_BNODE_LABEL = re.compile(r"[^\s<>\"]+")


def format_term(term: Term) -> str:
    """The N-Triples form of ``term`` (valid Turtle too)."""
    cls = term.__class__
    if cls is IRI:
        return "<" + _IRI_SPECIAL.sub(lambda m: f"\\u{ord(m.group()):04X}", term.value) + ">"
    if cls is BNode:
        return "_:" + term.id
    text = '"' + _STRING_SPECIAL.sub(lambda m: _STRING_ESCAPES[m.group()], term.lexical) + '"'
    if term.lang:
        return text + "@" + term.lang
    if term.datatype:
        return text + "^^" + format_term(IRI(term.datatype))
    return text


def _unescape_string(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        code = match.group(1)
        if len(code) > 1:
            return chr(int(code[1:], 16))
        return _UNESCAPES[code]

    return _ESCAPE.sub(replace, text)


def _unescape_iri(text: str) -> str:
    return _UCHAR.sub(lambda m: chr(int(m.group(1)[1:], 16)), text)


def _string_end(text: str, quote: str) -> int:
    """Index just past the closing quote of the string starting at 0."""
    i = len(quote)
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if text.startswith(quote, i):
            return i + len(quote)
        i += 1
    raise ValueError(f"unterminated string in {text!r}")


def parse_term(text: str) -> Term:
    """Parse one term written in Turtle syntax (no prefixed names)."""
    if text.startswith("<") and text.endswith(">"):
        return IRI(_unescape_iri(text[1:-1]))
    if text.startswith("_:") and _BNODE_LABEL.fullmatch(text[2:]):
        return BNode(text[2:])
    if text[:1] in ('"', "'"):
        quote = text[0] * 3 if text.startswith(text[0] * 3) else text[0]
        end = _string_end(text, quote)
        lexical = _unescape_string(text[len(quote) : end - len(quote)])
        rest = text[end:]
        if not rest:
            return Literal(lexical)
        if rest.startswith("@") and _LANG.fullmatch(rest[1:]):
            return Literal(lexical, lang=rest[1:])
        if rest.startswith("^^<") and rest.endswith(">"):
            return Literal(lexical, datatype=_unescape_iri(rest[3:-1]))
        raise ValueError(f"bad literal suffix in {text!r}")
    if text in ("true", "false"):
        return Literal(text, datatype=XSD_BOOLEAN)
    if _INTEGER.fullmatch(text):
        return Literal(text, datatype=XSD + "integer")
    if _DECIMAL.fullmatch(text):
        return Literal(text, datatype=XSD + "decimal")
    if _DOUBLE.fullmatch(text):
        return Literal(text, datatype=XSD + "double")
    raise ValueError(f"not an RDF term: {text!r}")
