"""Turtle, written a chunk at a time with the prefixes it is given.

Each batch of triples becomes one chunk of complete statements: consecutive
triples with one subject share it (``;``), with one predicate too (``,``),
``rdf:type`` is ``a``. An IRI is a prefixed name when one of the prefixes
covers it and the rest is a valid local name (with Turtle's backslash
escapes where the grammar allows them), else ``<IRI>``. A number or boolean
is written bare only in its XSD canonical form, the one every reader keeps
as it is (some normalise the lexical form of a bare number); anything else
is a quoted literal with its datatype.

Each distinct term is spelled once (:mod:`engine.rdf.spellings`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from engine.rdf.names import CHARS, CHARS_U, PN_PREFIX, portable_label
from engine.rdf.ntriples import escape_string
from engine.rdf.spellings import Spellings
from engine.rdf.terms import (
    IRI,
    RDF_TYPE,
    XSD_BOOLEAN,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    BNode,
    Term,
    TripleTerm,
)

Triple = tuple[Term, Term, Term]

#: lexical forms a reader takes back unchanged when written bare (XSD canonical forms)
_BARE = {
    XSD_INTEGER: re.compile(r"0|-?[1-9][0-9]*"),
    XSD_DECIMAL: re.compile(r"(?!-0\.0$)-?(?:0|[1-9][0-9]*)\.(?:0|[0-9]*[1-9])"),
    XSD_DOUBLE: re.compile(r"-?[1-9]\.(?:0|[0-9]*[1-9])E(?:0|-?[1-9][0-9]*)|0\.0E0"),
    XSD_BOOLEAN: re.compile(r"true|false"),
}

#: a local name that needs no escape at all (the common case, checked first)
_PLAIN_LOCAL = re.compile(f"(?:[{CHARS_U}0-9:](?:[{CHARS}.:]*[{CHARS}:])?)?")
#: characters a local name carries only escaped (PN_LOCAL_ESC), "%" aside
_ESCAPES = str.maketrans({ch: "\\" + ch for ch in "~!$&'()*+,;=/?#@"})
#: a "%" that does not start a %XX (it is escaped too)
_LONE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_PLX = r"(?:%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%])"
#: Turtle's PN_LOCAL
_PN_LOCAL = re.compile(f"(?:[{CHARS_U}0-9:]|{_PLX})(?:(?:[{CHARS}.:]|{_PLX})*(?:[{CHARS}:]|{_PLX}))?")


def local_name(local: str) -> str | None:
    """``local`` as Turtle's PN_LOCAL, escaped where needed; None when some
    character can be neither written nor escaped there."""
    if _PLAIN_LOCAL.fullmatch(local):
        return local
    text = local.translate(_ESCAPES)
    if "%" in text:
        text = _LONE_PERCENT.sub(r"\\%", text)
    if text[0] in ".-":  # allowed inside, not first
        text = "\\" + text
    if text[-1] == "." and text[-2:] != "\\.":  # allowed inside, not last
        text = text[:-1] + "\\."
    return text if _PN_LOCAL.fullmatch(text) else None


class TurtleSpeller:
    """Turns terms into Turtle, each distinct term once per use."""

    def __init__(self, prefixes: Mapping[str, str]) -> None:
        #: the prefixes Turtle can declare, in the order given
        self.declared = [(p, ns) for p, ns in prefixes.items() if PN_PREFIX.fullmatch(p) and ns]
        #: the same, longest namespace first: the most specific one wins
        self.prefixes = sorted(self.declared, key=lambda item: -len(item[1]))
        self.terms = Spellings(self.term)
        self.predicates = Spellings(self.predicate)

    def header(self) -> str:
        """The ``@prefix`` lines (and a blank line after them)."""
        lines = [f"@prefix {p}: <{ns}> .\n" for p, ns in self.declared]
        return "".join(lines) + "\n" if lines else ""

    def iri(self, value: str) -> str:
        """An IRI as a prefixed name, or as ``<IRI>`` when none fits."""
        for prefix, namespace in self.prefixes:
            if value.startswith(namespace):
                local = local_name(value[len(namespace):])
                if local is not None:
                    return f"{prefix}:{local}"
        return f"<{value}>"

    def term(self, term: Term) -> str:
        """The spelling of a subject or object."""
        cls = term.__class__
        if cls is IRI:
            return self.iri(term.value)
        if cls is BNode:
            return "_:" + portable_label(term.id)
        if cls is TripleTerm:  # RDF 1.2
            parts = (self.term(term.subject), self.predicate(term.predicate), self.term(term.object))
            return "<<( " + " ".join(parts) + " )>>"
        if term.lang:
            return f'"{escape_string(term.lexical)}"@{term.lang}'
        if term.datatype:
            bare = _BARE.get(term.datatype)
            if bare is not None and bare.fullmatch(term.lexical):
                return term.lexical
            return f'"{escape_string(term.lexical)}"^^{self.iri(term.datatype)}'
        return f'"{escape_string(term.lexical)}"'

    def predicate(self, term: Term) -> str:
        """The spelling of a predicate."""
        return "a" if term.value == RDF_TYPE else self.iri(term.value)


def write_turtle(batches: Iterable[list[Triple]], prefixes: Mapping[str, str]) -> Iterator[bytes]:
    """A Turtle document, one chunk per batch; the prefix lines go out with
    the first batch. Each chunk ends its last statement, so a subject whose
    triples span two batches is written twice (the same graph)."""
    speller = TurtleSpeller(prefixes)
    head = speller.header().encode()
    for chunk in turtle_statements(batches, speller):
        yield head + chunk
        head = b""
    if head:
        yield head


def turtle_statements(batches: Iterable[list[Triple]], speller: TurtleSpeller) -> Iterator[bytes]:
    """The statements of each batch as one chunk, without prefix lines: the
    body of a Turtle document, or of one graph of a TriG document."""
    terms, predicates = speller.terms, speller.predicates
    known, known_predicates = terms.by_id, predicates.by_id
    for batch in batches:
        out = []
        subject = predicate = None
        for s, p, o in batch:
            ss = known.get(id(s)) or terms.miss(s)
            ps = known_predicates.get(id(p)) or predicates.miss(p)
            os = known.get(id(o)) or terms.miss(o)
            if ss != subject:
                if subject is not None:
                    out.append(" .\n")
                out.append(f"{ss} {ps} {os}")
                subject, predicate = ss, ps
            elif ps != predicate:
                out.append(f" ;\n    {ps} {os}")
                predicate = ps
            else:
                out.append(f", {os}")
        if subject is not None:
            out.append(" .\n")
        yield "".join(out).encode()
