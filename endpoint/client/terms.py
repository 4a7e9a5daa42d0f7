"""RDF terms on the client side: writing triples as N-Triples, reading SPARQL JSON values.

The client depends on nothing of the server (it runs in users' programs), so
it has these few classes of its own. A triple is a 3-tuple: its subject and
predicate may be plain strings (taken as IRIs), its object a Python value
(``str``, ``int``, ``float``, ``bool``, ``Decimal``, ``datetime``, ``date``:
written as the matching XSD literal) or an :class:`IRI`, :class:`BlankNode`
or :class:`Literal`. Going the other way, :func:`python_value` turns one
SPARQL JSON binding back into such a value, so ``window.rows`` reads like
plain Python.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

XSD = "http://www.w3.org/2001/XMLSchema#"

_INTEGER_TYPES = frozenset(XSD + t for t in (
    "integer", "int", "long", "short", "byte", "nonNegativeInteger", "nonPositiveInteger",
    "positiveInteger", "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte",
))
_FLOAT_TYPES = frozenset((XSD + "double", XSD + "float"))
_LABEL = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
_IRI_UNSAFE = re.compile(r'[\x00-\x20<>"{}|^`\\]')


class IRI(str):
    """An IRI (a ``str``, so it compares and prints as its text)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"IRI({str.__repr__(self)})"


class BlankNode(str):
    """A blank node, by its label without ``_:``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"BlankNode({str.__repr__(self)})"


@dataclass(frozen=True)
class Literal:
    """A literal that no plain Python value stands for: one with a language
    tag (and no datatype given), a datatype the client does not convert, or
    an ill-typed lexical form."""

    value: str
    datatype: str | None = None
    language: str | None = None


@dataclass(frozen=True)
class TripleTerm:
    """An RDF 1.2 triple term in an answer: its components as Python values
    (as :func:`python_value` reads them)."""

    subject: object
    predicate: object
    object: object


Term = IRI | BlankNode | Literal
Triple = tuple[object, object, object]


def ntriples_term(term: object, position: str = "object") -> str:
    """One term in N-Triples syntax. A ``str`` subject or predicate is an IRI;
    a ``str`` object is an ``xsd:string`` literal (wrap it in :class:`IRI` for an IRI)."""
    if isinstance(term, IRI) or (isinstance(term, str) and not isinstance(term, BlankNode)
                                 and position != "object"):
        return _iri(term)
    if isinstance(term, BlankNode):
        if not _LABEL.fullmatch(term) or term.endswith("."):
            raise ValueError(f"not a blank node label: {str(term)!r}")
        return f"_:{term}"
    if isinstance(term, Literal):
        return _literal(term.value, term.datatype, term.language)
    if position != "object":
        raise TypeError(f"a {position} is an IRI or a blank node, not {term!r}")
    return _python_literal(term)


def ntriples_line(triple: Triple) -> str:
    """One triple as an N-Triples statement (no newline)."""
    if not isinstance(triple, tuple) or len(triple) != 3:
        raise TypeError(f"a triple is a 3-tuple (subject, predicate, object), not {triple!r}")
    s, p, o = triple
    return f"{ntriples_term(s, 'subject')} {ntriples_term(p, 'predicate')} {ntriples_term(o)} ."


def ntriples_lines(triples: Iterable[Triple]) -> list[str]:
    """Each triple of ``triples`` as one N-Triples statement."""
    if isinstance(triples, tuple) and len(triples) == 3 and not isinstance(triples[0], tuple):
        raise TypeError("give a list of triples, not one triple: [(s, p, o)]")
    return [ntriples_line(t) for t in triples]


def _iri(text: str) -> str:
    # characters IRIREF does not allow are written as \u escapes, which it does
    return "<" + _IRI_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04X}", text) + ">"


def _literal(value: str, datatype: str | None = None, language: str | None = None) -> str:
    escaped = (value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
               .replace("\r", "\\r"))
    if language:
        return f'"{escaped}"@{language}'
    if datatype and datatype != XSD + "string":
        return f'"{escaped}"^^{_iri(datatype)}'
    return f'"{escaped}"'


def _python_literal(value: object) -> str:
    """A Python value as the XSD literal of its type (bool before int: bool is an int)."""
    if isinstance(value, str):
        return _literal(value)
    if isinstance(value, bool):
        return _literal("true" if value else "false", XSD + "boolean")
    if isinstance(value, int):
        return _literal(str(value), XSD + "integer")
    if isinstance(value, float):
        if math.isnan(value):
            text = "NaN"
        elif math.isinf(value):
            text = "INF" if value > 0 else "-INF"
        else:
            text = repr(value)
        return _literal(text, XSD + "double")
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"xsd:decimal has no {value}")
        return _literal(format(value, "f"), XSD + "decimal")
    if isinstance(value, datetime):
        return _literal(value.isoformat(), XSD + "dateTime")
    if isinstance(value, date):
        return _literal(value.isoformat(), XSD + "date")
    raise TypeError(f"no RDF literal for a {type(value).__name__}: {value!r}")


def python_value(binding: dict) -> object:
    """One SPARQL JSON term as a Python value: :class:`IRI`, :class:`BlankNode`,
    :class:`TripleTerm`, ``str``/``int``/``float``/``Decimal``/``bool``/``datetime``/``date`` for the
    XSD types, else a :class:`Literal`."""
    kind = binding.get("type")
    value = binding.get("value", "")
    if kind == "uri":
        return IRI(value)
    if kind == "bnode":
        return BlankNode(value)
    if kind == "triple":
        return TripleTerm(python_value(value["subject"]), python_value(value["predicate"]),
                          python_value(value["object"]))
    language = binding.get("xml:lang")
    datatype = binding.get("datatype")
    if language:
        return Literal(value, language=language)
    if datatype in (None, XSD + "string"):
        return value
    try:
        return _converted(value, datatype)
    except (ValueError, InvalidOperation):
        return Literal(value, datatype)


def _converted(value: str, datatype: str) -> object:
    """The Python value of a typed literal; ValueError when ill-typed, a
    :class:`Literal` for a datatype without a Python counterpart."""
    text = value.strip()
    if datatype in _INTEGER_TYPES:
        return int(text)
    if datatype in _FLOAT_TYPES:
        return float(text)  # Python reads NaN, INF and -INF too
    if datatype == XSD + "decimal":
        return Decimal(text)
    if datatype == XSD + "boolean":
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise ValueError(text)
    if datatype == XSD + "dateTime":
        return datetime.fromisoformat(text)
    if datatype == XSD + "date":
        return date.fromisoformat(text)
    return Literal(value, datatype)
