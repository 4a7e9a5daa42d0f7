"""N-Triples term syntax: the one spelling a loaded store keeps for each term.

A loaded store holds every term as its canonical N-Triples string, which is
exactly ``Term.n3()``: IRIs and blank-node labels raw, literal lexical forms
with only ``\\``, ``"``, LF and CR escaped, ``xsd:string`` dropped. The loader
hashes that string to number the term and the term store hashes the same
string to look a term up, so both must agree on it; input written with other
escapes (``\\t``, ``\\u00E9``) is rewritten to it by :func:`canonical`.
"""

from __future__ import annotations

import re

from engine.rdf.terms import IRI, BNode, Literal, Term

_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.S)
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape_match(m: re.Match) -> str:
    hex_digits = m.group(1) or m.group(2)
    if hex_digits:
        return chr(int(hex_digits, 16))
    char = _ECHAR.get(m.group(3))
    if char is None:
        raise ValueError(f"bad escape \\{m.group(3)}")
    return char


def unescape(text: str) -> str:
    """Resolve N-Triples string and numeric escapes."""
    return _ESCAPE.sub(_unescape_match, text) if "\\" in text else text


def parse_term(text: str) -> Term:
    """The term an N-Triples term string spells (a term already matched by
    :data:`LINE_PATTERN`, or read back from a store)."""
    first = text[0]
    if first == "<":
        return IRI(unescape(text[1:-1]))
    if first == "_":
        return BNode(text[2:])
    end = text.rindex('"')
    lexical = unescape(text[1:end])
    if end + 1 == len(text):
        return Literal(lexical)
    if text[end + 1] == "@":
        return Literal(lexical, None, text[end + 2 :])
    return Literal(lexical, unescape(text[end + 4 : -1]))


def canonical(text: str) -> str:
    """The store's spelling of an N-Triples term string."""
    return parse_term(text).n3()
