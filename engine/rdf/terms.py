"""RDF terms: IRIs, blank nodes, literals, query variables, and the vocabulary
the engine names (XSD and RDF datatypes, term kinds).

Terms are small immutable Python objects used at the edges (parsing input,
decoding output, evaluating expressions). Everything inside the store and the
executor works on integer IDs handed out by a term dictionary
(:mod:`engine.rdf.dictionary`); a term is turned back into an object only
when a result leaves the engine or when an expression needs its value. How a
term is spelled in text is :mod:`engine.rdf.ntriples`' job (``format_term``).

Plain literals and ``xsd:string`` literals are the same term in RDF 1.1, so
``Literal`` normalises ``xsd:string`` to ``datatype=None``.
"""

from __future__ import annotations

import itertools
import math
import re
import uuid

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
RDF_REIFIES = RDF + "reifies"
RDF_DIRLANGSTRING = RDF + "dirLangString"

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
        return isinstance(other, IRI) and other.value == self.value

    def __hash__(self) -> int:
        # the string's own hash (cached by Python): rows of terms are hashed
        # per window by the report policies; an equal-spelled blank node is unequal anyway
        return hash(self.value)

    def __repr__(self) -> str:
        return f"<{self.value}>"



class BNode:
    """A blank node, identified by a label local to one document or store."""

    __slots__ = ("id",)

    def __init__(self, id: str) -> None:
        self.id = id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BNode) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("B", self.id))

    def __repr__(self) -> str:
        return f"_:{self.id}"



class Literal:
    """An RDF literal: lexical form plus either a datatype IRI or a language tag.

    ``datatype`` is ``None`` for simple literals (``xsd:string``) and for
    language-tagged strings (whose datatype is ``rdf:langString``). Language
    tags are kept in lower case, their value space in RDF 1.1 (Oxigraph's
    parsers write them so, and ``"a"@EN`` must be the same term as ``"a"@en``
    whichever path it came in by).
    """

    __slots__ = ("lexical", "datatype", "lang")

    def __init__(self, lexical: str, datatype: str | None = None, lang: str | None = None) -> None:
        self.lexical = lexical
        self.datatype = None if (datatype == XSD_STRING or lang) else datatype
        self.lang = lang.lower() if lang else None

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Literal)
            and other.lexical == self.lexical
            and other.datatype == self.datatype
            and other.lang == self.lang
        )

    def __hash__(self) -> int:
        return hash(("L", self.lexical, self.datatype, self.lang))

    def __repr__(self) -> str:
        # the N-Triples spelling, written where all term syntax is
        from engine.rdf.ntriples import format_term

        return format_term(self)

    @property
    def datatype_iri(self) -> str:
        """The datatype as RDF 1.2 defines it (never None)."""
        if self.lang:
            return RDF_DIRLANGSTRING if "--" in self.lang else RDF_LANGSTRING
        return self.datatype or XSD_STRING

    @property
    def language(self) -> str | None:
        """The language tag without its base direction (RDF 1.2 ``@en--ltr`` is
        held as ``lang="en--ltr"``, its N-Triples spelling)."""
        return self.lang.split("--", 1)[0] if self.lang else None

    @property
    def direction(self) -> str | None:
        """The base direction (``ltr``/``rtl``) of a directional string, else None."""
        if self.lang and "--" in self.lang:
            return self.lang.split("--", 1)[1]
        return None



class TripleTerm:
    """An RDF 1.2 triple term ``<<( s p o )>>``: a triple used as an object.

    It is a term like any other (the dictionary gives it an ID; its store
    spelling is the canonical N-Triples ``<<( s p o )>>``), and its
    components are terms: ``subject`` an IRI or blank node, ``predicate``
    an IRI, ``object`` any term, another triple term included.
    """

    __slots__ = ("subject", "predicate", "object", "_hash")

    def __init__(self, subject: Term, predicate: Term, object: Term) -> None:
        self.subject = subject
        self.predicate = predicate
        self.object = object
        self._hash = hash(("T", subject, predicate, object))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TripleTerm)
            and other._hash == self._hash
            and other.subject == self.subject
            and other.predicate == self.predicate
            and other.object == self.object
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        from engine.rdf.ntriples import format_term

        return format_term(self)


class Variable:
    """A query variable (name without ``?``/``$``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Variable) and other.name == self.name

    def __hash__(self) -> int:
        # the name's own hash (cached by Python), set apart from an IRI's of
        # the same string; no tuple made per call (plans hash patterns often)
        return ~hash(self.name)

    def __repr__(self) -> str:
        return f"?{self.name}"


Term = IRI | BNode | Literal | TripleTerm

KIND_IRI = 1
KIND_BNODE = 2
KIND_LITERAL = 3
KIND_TRIPLE = 4


#: lexical forms of XSD numbers (the one definition; engine.sparql.expr.xsd uses them too)
INTEGER_FORM = re.compile(r"[+-]?[0-9]+")
DECIMAL_FORM = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
DOUBLE_FORM = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?INF|NaN")


def numeric_value(term: Term) -> float:
    """The number a literal stands for, NaN when it is not a valid number of
    its datatype (the lexical space of XSD, not Python's: "1_000" and "inf"
    are not numbers here)."""
    if not isinstance(term, Literal) or term.datatype not in NUMERIC_DATATYPES:
        return math.nan
    lexical = term.lexical.strip()
    datatype = term.datatype
    if datatype in (XSD_DOUBLE, XSD_FLOAT):
        form = DOUBLE_FORM
    elif datatype == XSD_DECIMAL:
        form = DECIMAL_FORM
    else:
        form = INTEGER_FORM
    if form.fullmatch(lexical) is None or lexical == "NaN":
        return math.nan
    return float(lexical)


#: characters SPARQL's IRIREF (and N-Triples) exclude from an IRI
_IRI_FORBIDDEN = re.compile(r'[<>"{}|^`\\\x00-\x20]')


def iri_problem(text: object) -> str | None:
    """Why ``text`` cannot be an absolute IRI in a query or N-Triples
    (None when it can): names coming from HTTP requests are checked with it."""
    if not isinstance(text, str) or not text:
        return "not a string"
    bad = _IRI_FORBIDDEN.search(text)
    if bad:
        return f"character {bad.group()!r} at {bad.start()} is not allowed in an IRI"
    if ":" not in text:
        return "not absolute (no scheme)"
    return None


_fresh_labels = itertools.count()
_FRESH_PREFIX = "f" + uuid.uuid4().hex[:12]


def fresh_bnode() -> BNode:
    """A blank node no other one in this process has: for CONSTRUCT templates,
    INSERT templates and INSERT DATA, whose output may be stored."""
    return BNode(f"{_FRESH_PREFIX}n{next(_fresh_labels)}")
