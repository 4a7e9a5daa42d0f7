"""RDF terms and the term dictionary.

Terms are small immutable Python objects used at the edges (parsing input,
decoding output, evaluating expressions). Everything inside the store and the
executor works on integer IDs handed out by :class:`TermDictionary`; a term is
turned back into an object only when a result leaves the engine or when an
expression needs its value.

Plain literals and ``xsd:string`` literals are the same term in RDF 1.1, so
``Literal`` normalises ``xsd:string`` to ``datatype=None``.
"""

from __future__ import annotations

import math

import numpy as np

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD_STRING = XSD + "string"
XSD_BOOLEAN = XSD + "boolean"
XSD_INTEGER = XSD + "integer"
XSD_DECIMAL = XSD + "decimal"
XSD_DOUBLE = XSD + "double"
XSD_FLOAT = XSD + "float"
XSD_DATETIME = XSD + "dateTime"
RDF_LANGSTRING = RDF + "langString"
RDF_TYPE = RDF + "type"

#: datatypes whose literals carry a number (used for the numeric side array)
NUMERIC_DATATYPES = frozenset(
    XSD + t
    for t in (
        "integer decimal double float nonPositiveInteger negativeInteger long int short byte "
        "nonNegativeInteger unsignedLong unsignedInt unsignedShort unsignedByte positiveInteger"
    ).split()
)


class IRI:
    """An IRI reference (absolute after parsing)."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return other.__class__ is IRI and other.value == self.value  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("I", self.value))

    def __repr__(self) -> str:
        return f"<{self.value}>"

    def n3(self) -> str:
        return f"<{self.value}>"


class BNode:
    """A blank node, identified by a label local to one document or store."""

    __slots__ = ("id",)

    def __init__(self, id: str) -> None:
        self.id = id

    def __eq__(self, other: object) -> bool:
        return other.__class__ is BNode and other.id == self.id  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("B", self.id))

    def __repr__(self) -> str:
        return f"_:{self.id}"

    def n3(self) -> str:
        return f"_:{self.id}"


class Literal:
    """An RDF literal: lexical form plus either a datatype IRI or a language tag.

    ``datatype`` is ``None`` for simple literals (``xsd:string``) and for
    language-tagged strings (whose datatype is ``rdf:langString``).
    """

    __slots__ = ("lexical", "datatype", "lang")

    def __init__(self, lexical: str, datatype: str | None = None, lang: str | None = None) -> None:
        self.lexical = lexical
        self.datatype = None if (datatype == XSD_STRING or lang) else datatype
        self.lang = lang or None

    def __eq__(self, other: object) -> bool:
        return (
            other.__class__ is Literal
            and other.lexical == self.lexical  # type: ignore[attr-defined]
            and other.datatype == self.datatype  # type: ignore[attr-defined]
            and other.lang == self.lang  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash(("L", self.lexical, self.datatype, self.lang))

    def __repr__(self) -> str:
        return self.n3()

    @property
    def datatype_iri(self) -> str:
        """The datatype as RDF 1.1 defines it (never None)."""
        if self.lang:
            return RDF_LANGSTRING
        return self.datatype or XSD_STRING

    def n3(self) -> str:
        text = (
            self.lexical.replace("\\", "\\\\")
            .replace('"', '\\"')
            .replace("\n", "\\n")
            .replace("\r", "\\r")
        )
        if self.lang:
            return f'"{text}"@{self.lang}'
        if self.datatype:
            return f'"{text}"^^<{self.datatype}>'
        return f'"{text}"'


class Variable:
    """A query variable (name without ``?``/``$``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return other.__class__ is Variable and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("V", self.name))

    def __repr__(self) -> str:
        return f"?{self.name}"


Term = IRI | BNode | Literal

KIND_IRI = 1
KIND_BNODE = 2
KIND_LITERAL = 3


def numeric_value(term: Term) -> float:
    """The number a literal stands for, NaN when it is not a valid number."""
    if term.__class__ is not Literal or term.datatype not in NUMERIC_DATATYPES:  # type: ignore[union-attr]
        return math.nan
    try:
        return float(term.lexical.strip())  # type: ignore[union-attr]
    except ValueError:
        return math.nan


class TermDictionary:
    """Two-way map between terms and dense integer IDs (the string server).

    ID 0 is reserved for "unbound". Side arrays indexed by ID keep the kind of
    each term and its numeric value so that the executor can filter and
    aggregate on numbers without decoding terms.
    """

    def __init__(self) -> None:
        self._ids: dict[Term, int] = {}
        self._terms: list[Term | None] = [None]
        self._kinds = np.zeros(1024, dtype=np.uint8)
        self._numbers = np.full(1024, np.nan)

    def __len__(self) -> int:
        return len(self._terms) - 1

    def encode(self, term: Term) -> int:
        """The ID of ``term``, assigning a new one if it is not known yet."""
        found = self._ids.get(term)
        if found is not None:
            return found
        new_id = len(self._terms)
        self._ids[term] = new_id
        self._terms.append(term)
        if new_id >= len(self._kinds):
            grown = max(new_id + 1, 2 * len(self._kinds))
            self._kinds = np.resize(self._kinds, grown)
            numbers = np.full(grown, np.nan)
            numbers[: len(self._numbers)] = self._numbers
            self._numbers = numbers
        cls = term.__class__
        if cls is IRI:
            self._kinds[new_id] = KIND_IRI
        elif cls is BNode:
            self._kinds[new_id] = KIND_BNODE
        else:
            self._kinds[new_id] = KIND_LITERAL
            self._numbers[new_id] = numeric_value(term)
        return new_id

    def encode_many(self, terms: list[Term]) -> np.ndarray:
        """IDs for a list of terms as an int64 array."""
        encode = self.encode
        return np.fromiter((encode(t) for t in terms), dtype=np.int64, count=len(terms))

    def lookup(self, term: Term) -> int:
        """The ID of ``term`` or 0 when the dictionary has never seen it."""
        return self._ids.get(term, 0)

    def decode(self, term_id: int) -> Term | None:
        """The term for an ID (None for 0, the unbound marker)."""
        return self._terms[term_id]

    def decode_many(self, ids: np.ndarray) -> list[Term | None]:
        terms = self._terms
        return [terms[i] for i in ids.tolist()]

    def kinds(self, ids: np.ndarray) -> np.ndarray:
        """Kind code (KIND_IRI, KIND_BNODE, KIND_LITERAL; 0 for unbound) per ID."""
        return self._kinds[ids]

    def numbers(self, ids: np.ndarray) -> np.ndarray:
        """Numeric value per ID, NaN for non-numeric terms."""
        return self._numbers[ids]
