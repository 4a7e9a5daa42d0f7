"""Terms as the scenarios write them (N-Triples spellings) and as results
are compared.

The contract fixes values, not spellings: ``AVG`` may come back as
``"2.5"^^xsd:decimal`` from one evaluator and ``"2.5E0"^^xsd:double`` from
another. So results are compared on a canonical key: IRIs and plain
literals as written, numbers by value (rounded to 9 decimals, the
precision both sides agree on for averages), booleans by value.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

import pyoxigraph

from tests.stream.scenarios.model import XSD

NUMERIC = {
    XSD + t
    for t in (
        "integer",
        "decimal",
        "double",
        "float",
        "int",
        "long",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "negativeInteger",
        "nonPositiveInteger",
        "unsignedInt",
        "unsignedLong",
    )
}
_LITERAL = re.compile(r'^"(?P<lex>(?:[^"\\]|\\.)*)"(?:\^\^<(?P<dt>[^>]*)>|@(?P<lang>[A-Za-z0-9-]+))?$')


def parse_literal(text: str) -> tuple[str, str | None, str | None]:
    """``(lexical, datatype, lang)`` of a literal's N-Triples spelling (the
    scenarios write no escapes)."""
    match = _LITERAL.match(text)
    if match is None:
        raise ValueError(f"not a literal: {text!r}")
    return match["lex"], match["dt"], match["lang"]


def canonical(text: str | None) -> str | None:
    """The comparison key of a term's N-Triples spelling (None: unbound)."""
    if text is None or text.startswith("<") or text.startswith("_:"):
        return text
    lexical, datatype, lang = parse_literal(text)
    if datatype in NUMERIC:
        try:
            value = Decimal(lexical)
        except InvalidOperation:
            return text
        if value.is_finite():
            value = round(value, 9).normalize()
            return f"num:{value:f}" if value != 0 else "num:0"
        return f"num:{value}"
    if datatype == XSD + "boolean":
        return "bool:" + ("true" if lexical in ("true", "1") else "false")
    if datatype == XSD + "string":
        return f'"{lexical}"'
    return text if not lang else f'"{lexical}"@{lang.lower()}'


def to_oxigraph(text: str) -> pyoxigraph.NamedNode | pyoxigraph.Literal:
    if text.startswith("<"):
        return pyoxigraph.NamedNode(text[1:-1])
    lexical, datatype, lang = parse_literal(text)
    if lang:
        return pyoxigraph.Literal(lexical, language=lang)
    if datatype:
        return pyoxigraph.Literal(lexical, datatype=pyoxigraph.NamedNode(datatype))
    return pyoxigraph.Literal(lexical)


def from_sparql_json(term: dict | None) -> str | None:
    """The N-Triples spelling of a SPARQL 1.1 JSON results term."""
    if term is None:
        return None
    value = term["value"]
    if term["type"] == "uri":
        return f"<{value}>"
    if term["type"] == "bnode":
        return f"_:{value}"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    if "xml:lang" in term:
        return f'"{escaped}"@{term["xml:lang"]}'
    if "datatype" in term:
        return f'"{escaped}"^^<{term["datatype"]}>'
    return f'"{escaped}"'
