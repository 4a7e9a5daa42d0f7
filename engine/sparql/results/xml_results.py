"""SPARQL Query Results XML Format (application/sparql-results+xml).

Written by hand rather than through an XML library so that each solution can
be yielded as soon as it exists; read with ElementTree, which does not expand
external entities.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Sequence

from engine.rdf import IRI, BNode, Literal, Term, TripleTerm, check_xml_text

NS = "http://www.w3.org/2005/sparql-results#"
ITS = "http://www.w3.org/2005/11/its"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_ITS_DIR = "{" + ITS + "}dir"
_HEADER = '<?xml version="1.0" encoding="utf-8"?>\n<sparql xmlns="' + NS + '">\n'

#: solutions serialised per yielded chunk
BATCH = 500

# \r must be a character reference or XML parsers turn it into \n
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
_ATTR_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#9;"}
)


def _text(value: str) -> str:
    return check_xml_text(value).translate(_TEXT_ESCAPES)


def _attr(value: str) -> str:
    return check_xml_text(value).translate(_ATTR_ESCAPES)


def _term_xml(term: Term) -> str:
    cls = term.__class__
    if cls is IRI:
        return "<uri>" + _text(term.value) + "</uri>"
    if cls is BNode:
        return "<bnode>" + _text(term.id) + "</bnode>"
    if cls is TripleTerm:  # SPARQL 1.2
        return ("<triple><subject>" + _term_xml(term.subject) + "</subject><predicate>"
                + _term_xml(term.predicate) + "</predicate><object>" + _term_xml(term.object)
                + "</object></triple>")
    if term.direction:  # SPARQL 1.2: a directional string
        return ('<literal xmlns:its="' + ITS + '" its:version="2.0" xml:lang="' + _attr(term.language)
                + '" its:dir="' + _attr(term.direction) + '">' + _text(term.lexical) + "</literal>")
    if term.lang:
        return '<literal xml:lang="' + _attr(term.lang) + '">' + _text(term.lexical) + "</literal>"
    if term.datatype:
        return '<literal datatype="' + _attr(term.datatype) + '">' + _text(term.lexical) + "</literal>"
    return "<literal>" + _text(term.lexical) + "</literal>"


def write_select(variables: list[str], rows: Iterable[Sequence[Term | None]]) -> Iterator[bytes]:
    """Yield the XML document for a SELECT result in chunks. The head goes
    out with the first solutions, so that a value XML cannot carry among
    them (:class:`NotXmlText`) is met before anything is sent."""
    head = "".join(f'<variable name="{_attr(var)}"/>' for var in variables)
    names = [_attr(var) for var in variables]
    parts: list[str] = [_HEADER + "<head>" + head + "</head>\n<results>\n"]
    count = 0
    for row in rows:
        parts.append("<result>")
        for name, term in zip(names, row, strict=True):
            if term is not None:
                parts.append(f'<binding name="{name}">{_term_xml(term)}</binding>')
        parts.append("</result>\n")
        count += 1
        if count >= BATCH:
            yield "".join(parts).encode()
            parts = []
            count = 0
    parts.append("</results>\n</sparql>\n")
    yield "".join(parts).encode()


def write_boolean(value: bool) -> bytes:
    """The XML document for an ASK result."""
    body = "<head/>\n<boolean>" + ("true" if value else "false") + "</boolean>\n</sparql>\n"
    return (_HEADER + body).encode()


def _parse_term(element: ET.Element) -> Term:
    tag = element.tag.removeprefix("{" + NS + "}")
    text = element.text or ""
    if tag == "uri":
        return IRI(text)
    if tag == "bnode":
        return BNode(text)
    if tag == "literal":
        lang = element.get(_XML_LANG)
        if lang and element.get(_ITS_DIR):
            lang = f"{lang}--{element.get(_ITS_DIR)}"
        return Literal(text, datatype=element.get("datatype"), lang=lang)
    if tag == "triple":
        parts = {child.tag.removeprefix("{" + NS + "}"): child[0] for child in element}
        return TripleTerm(_parse_term(parts["subject"]), _parse_term(parts["predicate"]),
                          _parse_term(parts["object"]))
    raise ValueError(f"unknown RDF term element in XML results: {tag!r}")


def read(data: bytes) -> tuple[list[str], list[list[Term | None]]] | bool:
    """Parse an XML results document: (variables, rows), or the ASK boolean."""
    root = ET.fromstring(data)
    boolean = root.find(f"{{{NS}}}boolean")
    if boolean is not None:
        return (boolean.text or "").strip() == "true"
    variables = [v.get("name", "") for v in root.iterfind(f"{{{NS}}}head/{{{NS}}}variable")]
    index = {var: i for i, var in enumerate(variables)}
    rows: list[list[Term | None]] = []
    for result in root.iterfind(f"{{{NS}}}results/{{{NS}}}result"):
        row: list[Term | None] = [None] * len(variables)
        for binding in result.iterfind(f"{{{NS}}}binding"):
            name = binding.get("name", "")
            if name not in index:  # binding for a variable missing from the head
                index[name] = len(variables)
                variables.append(name)
                for earlier in rows:
                    earlier.append(None)
                row.append(None)
            row[index[name]] = _parse_term(binding[0])
        rows.append(row)
    return variables, rows
