"""RDF/XML, written a chunk at a time: one ``rdf:Description`` per run of
consecutive triples with one subject.

The prefixes become namespace declarations on the root element (``rdf``
always names the RDF namespace; names XML reserves, those starting with
``xml``, are left out). A predicate is an element, so its IRI must end in
an XML name: it is written with the longest declared namespace that leaves
one, else split before its longest trailing name with a generated prefix
(``ns0``, ...) declared on the element itself. A predicate that ends in no
name, or that RDF/XML reserves for its own syntax (``rdf:li``,
``rdf:about``, ...), cannot be written at all: :class:`NotRdfXml`. So is a
character XML 1.0 cannot carry (:class:`~engine.rdf.xml_text.NotXmlText`):
every term is checked when it is first spelled, and the first chunk holds
the first batch, so an answer refused there is refused before anything is sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from engine.rdf.names import NCNAME, NCNAME_TAIL, portable_label
from engine.rdf.spellings import Spellings
from engine.rdf.terms import IRI, RDF, BNode, Term, TripleTerm
from engine.rdf.xml_text import NotXmlText, check_xml_text

Triple = tuple[Term, Term, Term]

#: IRIs RDF/XML reads as its own syntax wherever they stand as an element
_RESERVED = frozenset(RDF + name for name in (
    "RDF Description ID about parseType resource nodeID datatype li aboutEach aboutEachPrefix bagID").split())

# \r must be a character reference or XML parsers turn it into \n
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
_ATTR_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#9;"}
)

_ATTR_SPECIAL = re.compile('[&<>"\r\n\t]')
_TEXT_SPECIAL = re.compile("[&<>\r]")


class NotRdfXml(NotXmlText):
    """A predicate RDF/XML cannot write as an element (a kind of
    :class:`NotXmlText`, so the endpoint answers it the same way: 406)."""


def _attr(value: str) -> str:
    """An attribute value, checked and escaped (translate only when needed: it is slow)."""
    check_xml_text(value)
    return value.translate(_ATTR_ESCAPES) if _ATTR_SPECIAL.search(value) else value


def _text(value: str) -> str:
    """Element content, checked and escaped."""
    check_xml_text(value)
    return value.translate(_TEXT_ESCAPES) if _TEXT_SPECIAL.search(value) else value


class RdfXmlSpeller:
    """Turns terms into RDF/XML, each distinct term once per use."""

    def __init__(self, prefixes: Mapping[str, str]) -> None:
        declared = {"rdf": RDF}
        for prefix, namespace in prefixes.items():
            if namespace and prefix != "rdf" and not prefix.lower().startswith("xml") \
                    and (prefix == "" or NCNAME.fullmatch(prefix)):
                declared[prefix] = namespace
        #: prefix -> namespace, as declared on the root element
        self.declared = declared
        self.prefixes = sorted(declared.items(), key=lambda item: -len(item[1]))
        #: namespace -> generated prefix, for predicates no declared one fits
        self.generated: dict[str, str] = {}
        self.subjects = Spellings(self.subject)
        self.elements = Spellings(self.element)
        self.objects = Spellings(self.object)

    def root(self) -> str:
        """The XML declaration and the opening of ``rdf:RDF``."""
        names = "".join(f'\n    xmlns{":" + p if p else ""}="{_attr(ns)}"' for p, ns in self.declared.items())
        return f'<?xml version="1.0" encoding="utf-8"?>\n<rdf:RDF{names}>\n'

    def subject(self, term: Term) -> str:
        """The opening tag of a subject's ``rdf:Description``."""
        if term.__class__ is BNode:
            return f'<rdf:Description rdf:nodeID="{portable_label(term.id)}">\n'
        return f'<rdf:Description rdf:about="{_attr(term.value)}">\n'

    def element(self, term: Term) -> tuple[str, str]:
        """A predicate's element: (start of the opening tag, closing tag)."""
        value = term.value
        if value in _RESERVED:
            raise NotRdfXml(f"the answer holds the predicate <{value}>, which RDF/XML reserves for its "
                            "own syntax; ask for Turtle, N-Triples or JSON-LD instead")
        for prefix, namespace in self.prefixes:
            if value.startswith(namespace) and NCNAME.fullmatch(value, len(namespace)):
                name = f"{prefix}:{value[len(namespace):]}" if prefix else value[len(namespace):]
                return f"<{name}", f"</{name}>\n"
        tail = NCNAME_TAIL.search(value)
        if tail is None:
            raise NotRdfXml(f"the answer holds the predicate <{value}>, which does not end in an XML "
                            "name, so RDF/XML cannot write it; ask for Turtle, N-Triples or JSON-LD instead")
        local = tail.group()
        namespace = value[:len(value) - len(local)]
        prefix = self.generated.get(namespace)
        if prefix is None:
            prefix = self.generated[namespace] = self._fresh_prefix()
        return f'<{prefix}:{local} xmlns:{prefix}="{_attr(namespace)}"', f"</{prefix}:{local}>\n"

    def _fresh_prefix(self) -> str:
        taken = set(self.declared) | set(self.generated.values())
        n = len(self.generated)
        while f"ns{n}" in taken:
            n += 1
        return f"ns{n}"

    def object(self, term: Term) -> tuple[str, bool]:
        """The rest of a property element after its name, and whether that
        closes it (a resource) or the closing tag must follow (a literal)."""
        cls = term.__class__
        if cls is IRI:
            return f' rdf:resource="{_attr(term.value)}"/>\n', True
        if cls is BNode:
            return f' rdf:nodeID="{portable_label(term.id)}"/>\n', True
        if cls is TripleTerm:  # RDF/XML 1.2: the triple as the content of the element
            inner, closed = self.object(term.object)
            start, end = self.element(term.predicate)
            body = f"{start}{inner}" if closed else f"{start}{inner}{end}"
            return f' rdf:parseType="Triple">\n{self.subject(term.subject)}{body}</rdf:Description>\n', False
        if term.direction:  # RDF/XML 1.2: a directional string's direction in ITS
            return (f' xmlns:its="http://www.w3.org/2005/11/its" its:version="2.0" xml:lang="'
                    f'{_attr(term.language)}" its:dir="{term.direction}">{_text(term.lexical)}', False)
        if term.lang:
            return f' xml:lang="{_attr(term.lang)}">{_text(term.lexical)}', False
        if term.datatype:
            return f' rdf:datatype="{_attr(term.datatype)}">{_text(term.lexical)}', False
        return f">{_text(term.lexical)}", False


def write_rdfxml(batches: Iterable[list[Triple]], prefixes: Mapping[str, str]) -> Iterator[bytes]:
    """An RDF/XML document, one chunk per batch; the root element goes out
    with the first. Each chunk closes its last ``rdf:Description``."""
    speller = RdfXmlSpeller(prefixes)
    subjects, elements, objects = speller.subjects, speller.elements, speller.objects
    known_subjects, known_elements, known_objects = subjects.by_id, elements.by_id, objects.by_id
    head = speller.root()
    for batch in batches:
        out = [head]
        head = ""
        subject = None
        for s, p, o in batch:
            opening = known_subjects.get(id(s)) or subjects.miss(s)
            if opening != subject:
                if subject is not None:
                    out.append("</rdf:Description>\n")
                out.append(opening)
                subject = opening
            start, end = known_elements.get(id(p)) or elements.miss(p)
            rest, closed = known_objects.get(id(o)) or objects.miss(o)
            out.append(f"    {start}{rest}" if closed else f"    {start}{rest}{end}")
        if subject is not None:
            out.append("</rdf:Description>\n")
        yield "".join(out).encode()
    yield (head + "</rdf:RDF>\n").encode()
