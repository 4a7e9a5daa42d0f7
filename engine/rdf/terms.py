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

import itertools
import math
import re
import threading
import uuid

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


#: lexical forms of XSD numbers (the one definition; engine.sparql.expr.xsd uses them too)
INTEGER_FORM = re.compile(r"[+-]?[0-9]+")
DECIMAL_FORM = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
DOUBLE_FORM = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?INF|NaN")


def numeric_value(term: Term) -> float:
    """The number a literal stands for, NaN when it is not a valid number of
    its datatype (the lexical space of XSD, not Python's: "1_000" and "inf"
    are not numbers here)."""
    if term.__class__ is not Literal or term.datatype not in NUMERIC_DATATYPES:  # type: ignore[union-attr]
        return math.nan
    lexical = term.lexical.strip()  # type: ignore[union-attr]
    datatype = term.datatype  # type: ignore[union-attr]
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


class TermDictionary:
    """Two-way map between terms and dense integer IDs (the string server).

    ID 0 is reserved for "unbound". Side arrays indexed by ID keep the kind of
    each term and its numeric value so that the executor can filter and
    aggregate on numbers without decoding terms.

    Terms that only stream timing data uses (a new observation IRI every
    reading) must not stay forever, or memory grows with the stream. Such terms
    are encoded *transient*: each transient-log chunk holds a reference to its
    IDs, and when the last chunk holding an ID expires and nothing pinned it
    (stored data, an update, a plain ``encode``), the ID is freed and reused.
    """

    def __init__(self) -> None:
        self._ids: dict[Term, int] = {}
        self._terms: list[Term | None] = [None]
        self._kinds = np.zeros(1024, dtype=np.uint8)
        self._numbers = np.full(1024, np.nan)
        self._refs = np.zeros(1024, dtype=np.int32)
        #: IDs encoded transient and not pinned since; only these can be freed
        self._transient: set[int] = set()
        self._free: list[int] = []
        #: writers (loads, updates, stream ingestion, the stream engine's
        #: declarations) may come from several threads; readers need no lock
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._ids)

    def encode(self, term: Term) -> int:
        """The ID of ``term``, assigning a new one if it is not known yet. The
        ID is permanent (pinned)."""
        found = self._ids.get(term)
        if found is not None and not self._transient:
            return found
        with self._lock:
            found = self._ids.get(term)
            if found is not None:
                self._transient.discard(found)
                return found
            return self._assign(term)

    def encode_transient(self, term: Term) -> int:
        """The ID of ``term``; a new one may be freed again (see :meth:`release`)."""
        found = self._ids.get(term)
        if found is not None:
            return found
        with self._lock:
            found = self._ids.get(term)
            if found is not None:
                return found
            new_id = self._assign(term)
            self._transient.add(new_id)
            return new_id

    def _assign(self, term: Term) -> int:
        if self._free:
            new_id = self._free.pop()
            self._terms[new_id] = term
        else:
            new_id = len(self._terms)
            self._terms.append(term)
            if new_id >= len(self._kinds):
                self._grow(max(new_id + 1, 2 * len(self._kinds)))
        self._ids[term] = new_id
        cls = term.__class__
        if cls is IRI:
            self._kinds[new_id] = KIND_IRI
        elif cls is BNode:
            self._kinds[new_id] = KIND_BNODE
        else:
            self._kinds[new_id] = KIND_LITERAL
            self._numbers[new_id] = numeric_value(term)
        return new_id

    def _grow(self, size: int) -> None:
        self._kinds = np.resize(self._kinds, size)
        numbers = np.full(size, np.nan)
        numbers[: len(self._numbers)] = self._numbers
        self._numbers = numbers
        refs = np.zeros(size, dtype=np.int32)
        refs[: len(self._refs)] = self._refs
        self._refs = refs

    def encode_many(self, terms: list[Term]) -> np.ndarray:
        """IDs for a list of terms as an int64 array."""
        encode = self.encode
        return np.fromiter((encode(t) for t in terms), dtype=np.int64, count=len(terms))

    # ------------------------------------------------------ transient terms
    def pin(self, ids: np.ndarray) -> None:
        """Make IDs permanent (their terms are now in stored data)."""
        if self._transient and len(ids):
            with self._lock:
                self._transient.difference_update(np.unique(ids).tolist())

    def hold(self, ids: np.ndarray) -> None:
        """One more reference (a transient-log chunk) to each distinct ID."""
        if len(ids):
            with self._lock:
                self._refs[np.unique(ids)] += 1

    def release(self, ids: np.ndarray) -> int:
        """Drop the references :meth:`hold` took; transient IDs left without any
        are freed. Returns how many terms were freed."""
        if not len(ids):
            return 0
        distinct = np.unique(ids)
        with self._lock:
            return self._release(distinct)

    def _release(self, distinct: np.ndarray) -> int:
        self._refs[distinct] -= 1
        if not self._transient:
            return 0
        dead = distinct[self._refs[distinct] <= 0]
        freed = 0
        for term_id in dead.tolist():
            if term_id in self._transient:
                self._transient.discard(term_id)
                del self._ids[self._terms[term_id]]
                self._terms[term_id] = None
                self._kinds[term_id] = 0
                self._numbers[term_id] = np.nan
                self._free.append(term_id)
                freed += 1
        return freed

    # --------------------------------------------------------------- lookup
    def lookup(self, term: Term) -> int:
        """The ID of ``term`` or 0 when the dictionary has never seen it."""
        return self._ids.get(term, 0)

    def lookup_pinned(self, term: Term) -> int:
        """Like :meth:`lookup`, but 0 for a transient ID: a reader outside the
        stream engine's lock must not hold an ID that may be freed and reused."""
        found = self._ids.get(term, 0)
        return 0 if found and self._transient and found in self._transient else found

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
