"""N-Triples syntax: the one place that escapes, unescapes, reads and writes terms.

Everything that spells a term as text goes through here: the statement
reader (stream ingestion, N-Triples request bodies), the store's spelling of
each term, the loader's rewriting of input into that spelling, and the TSV
result format.

The store's spelling is *canonical N-Triples*, the default of
:func:`format_term`: IRIs and blank-node labels raw, literal lexical forms
with only ``\\``, ``"``, LF and CR escaped, ``xsd:string`` dropped. A loaded
store numbers each term by a hash of that string (``engine.store.term_hash``)
and looks query constants up by hashing it again, so the loader and the
store must spell a term identically: :func:`canonical` rewrites input
written with other escapes (``\\t``, ``\\u00E9``) into it. TSV results need
one field per term on a tab-separated line, so ``tsv=True`` also escapes
tab, backspace and form feed, and the characters IRIREF forbids.

The statement reader is built for speed (rdflib's parser is far too slow for
stream ingestion): one compiled regex matches a whole statement, and escapes
are decoded only in the rare strings and IRIs that contain a backslash.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine.rdf.terms import (
    IRI,
    RDF_DIRLANGSTRING,
    RDF_LANGSTRING,
    XSD_BOOLEAN,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    BNode,
    Literal,
    Term,
    TripleTerm,
    iri_problem,
)

# ------------------------------------------------------------------ escapes
_UNESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.S)
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}

_CANONICAL_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})
_TSV_SPECIAL = re.compile(r'[\\"\n\r\t\b\f]')
_TSV_ESCAPES = str.maketrans(
    {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
)
#: the canonical N-Triples of RDF 1.2 (C14N): ECHAR for backspace, tab, LF,
#: form feed, CR, quote and backslash, UCHAR (upper-case hex) for the other
#: controls, DEL and the noncharacters U+FFFE and U+FFFF
_C14N_SPECIAL = re.compile('[\x00-\x1f\x7f"\\\\\ufffe\uffff]')
_C14N_ESCAPES = {chr(c): f"\\u{c:04X}" for c in [*range(0x20), 0x7F, 0xFFFE, 0xFFFF]}
_C14N_ESCAPES.update({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"',
                      "\\": "\\\\"})
_C14N_TABLE = str.maketrans(_C14N_ESCAPES)
#: characters that may not appear raw inside an IRIREF
_IRI_SPECIAL = re.compile(r'[\x00-\x20<>"{}|^`\\]')


def _unescape_match(m: re.Match[str]) -> str:
    hex_digits = m.group(1) or m.group(2)
    if hex_digits:
        code = int(hex_digits, 16)
        # RDF strings are sequences of Unicode scalar values: a lone surrogate
        # would be stored and then break every answer that writes it as UTF-8
        if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
            raise ValueError(f"{m.group()} is not a Unicode scalar value")
        return chr(code)
    char = _ECHAR.get(m.group(3))
    if char is None:
        raise ValueError(f"bad escape \\{m.group(3)}")
    return char


def unescape(text: str) -> str:
    """Resolve string (``\\n``) and numeric (``\\u00E9``) escapes; ValueError
    on any other backslash sequence."""
    return _UNESCAPE.sub(_unescape_match, text) if "\\" in text else text


def escape_string(text: str, *, tsv: bool = False) -> str:
    """The body of a quoted literal: canonical N-Triples escapes, plus tab,
    backspace and form feed when ``tsv``. The store's spelling is on hot paths,
    where four substring tests beat one regex search on real data's short strings."""
    if tsv:
        return text.translate(_TSV_ESCAPES) if _TSV_SPECIAL.search(text) else text
    if "\\" in text or '"' in text or "\n" in text or "\r" in text:
        return text.translate(_CANONICAL_ESCAPES)
    return text


def c14n_term(term: Term) -> str:
    """The term in canonical N-Triples (RDF 1.2 N-Triples section 4): as
    :func:`format_term`, with every control character escaped (the store's
    spelling keeps tab and the like raw). The dispatch is repeated on purpose:
    one function taking the escaping as a parameter made :func:`format_term`,
    which is on the writers' hot paths, about 18% slower a term (measured:
    best of 7, 100K terms, 264 -> 313 ns)."""
    cls = term.__class__
    if cls is IRI:
        return f"<{term.value}>"
    if cls is BNode:
        return f"_:{term.id}"
    if cls is TripleTerm:
        return f"<<( {c14n_term(term.subject)} {c14n_term(term.predicate)} {c14n_term(term.object)} )>>"
    text = term.lexical
    if _C14N_SPECIAL.search(text):
        text = text.translate(_C14N_TABLE)
    if term.lang:
        return f'"{text}"@{term.lang}'
    if term.datatype:
        return f'"{text}"^^<{term.datatype}>'
    return f'"{text}"'


def _tsv_iri(value: str) -> str:
    return "<" + _IRI_SPECIAL.sub(lambda m: f"\\u{ord(m.group()):04X}", value) + ">"


# ------------------------------------------------------------------ writing
def format_term(term: Term, *, tsv: bool = False) -> str:
    """The N-Triples spelling of ``term`` (valid Turtle too): canonical by
    default (the store's spelling), escaped for a TSV field when ``tsv``."""
    if tsv:
        return _tsv_spelling(term)
    cls = term.__class__
    if cls is IRI:
        return f"<{term.value}>"
    if cls is BNode:
        return f"_:{term.id}"
    if cls is TripleTerm:
        return f"<<( {format_term(term.subject)} {format_term(term.predicate)} {format_term(term.object)} )>>"
    text = escape_string(term.lexical)
    if term.lang:
        return f'"{text}"@{term.lang}'
    if term.datatype:
        return f'"{text}"^^<{term.datatype}>'
    return f'"{text}"'


def _tsv_spelling(term: Term) -> str:
    cls = term.__class__
    if cls is IRI:
        return _tsv_iri(term.value)
    if cls is BNode:
        return f"_:{term.id}"
    if cls is TripleTerm:
        parts = (_tsv_spelling(term.subject), _tsv_spelling(term.predicate), _tsv_spelling(term.object))
        return "<<( " + " ".join(parts) + " )>>"
    text = f'"{escape_string(term.lexical, tsv=True)}"'
    if term.lang:
        return f"{text}@{term.lang}"
    if term.datatype:
        return f"{text}^^{_tsv_iri(term.datatype)}"
    return text


# ------------------------------------------------------------ reading terms
#: Turtle's bare number forms (its grammar, not XSD's lexical spaces)
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?[0-9]*\.[0-9]+")
_DOUBLE = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][+-]?[0-9]+")


def parse_term(text: str, *, shorthands: bool = False) -> Term:
    """The term an N-Triples term string spells.

    Without ``shorthands`` the string must be one term as N-Triples writes it:
    a store's spelling, or a term the statement reader or the loader's line
    pattern already matched. It is not checked again: a loaded store decodes
    every term of a result with this, so it is a few string operations.
    With ``shorthands`` the string is an untrusted TSV field: it is checked,
    and the other Turtle forms a TSV result may use are read too
    (single-quoted and long strings, bare numbers and booleans; prefixed
    names are not resolved)."""
    if shorthands:
        return _parse_field(text)
    first = text[0]
    if text.startswith("<<("):
        term, end = _read_spelled(text, 0)
        return term
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


def _parse_field(text: str) -> Term:
    """``parse_term(text, shorthands=True)``: one TSV field, checked."""
    first = text[:1]
    if text.startswith("<<("):
        term, end = _read_node(text, 0, 1, "object")
        if end != len(text):
            raise ValueError(f"not an RDF term: {text!r}")
        return term
    if first == "<":
        if text[-1] == ">":
            return IRI(unescape(text[1:-1]))
    elif first in ('"', "'"):
        # the closing quote is the last one: a language tag or a datatype IRIREF has none
        width = 3 if text.startswith(first * 3) else 1
        close = text.rfind(first) + 1
        if close < 2 * width:
            raise ValueError(f"unterminated string in {text!r}")
        lexical = unescape(text[width : close - width])
        if close == len(text):
            return Literal(lexical)
        if text[close] == "@":
            if close + 1 < len(text):
                return Literal(lexical, None, text[close + 1 :])
        elif text[-1] == ">" and text[close : close + 3] == "^^<":
            return Literal(lexical, unescape(text[close + 3 : -1]))
        raise ValueError(f"bad literal suffix in {text!r}")
    elif first == "_":
        if text[1:2] == ":" and len(text) > 2:
            return BNode(text[2:])
    else:
        return _shorthand(text)
    raise ValueError(f"not an RDF term: {text!r}")


def _shorthand(text: str) -> Literal:
    if text in ("true", "false"):
        return Literal(text, XSD_BOOLEAN)
    if _INTEGER.fullmatch(text):
        return Literal(text, XSD_INTEGER)
    if _DECIMAL.fullmatch(text):
        return Literal(text, XSD_DECIMAL)
    if _DOUBLE.fullmatch(text):
        return Literal(text, XSD_DOUBLE)
    raise ValueError(f"not an RDF term: {text!r}")


def _read_spelled(text: str, at: int) -> tuple[Term, int]:
    """The term of a canonical spelling starting at ``at`` and where it ends:
    a triple term's components are separated by one space, and only a
    literal may hold a space or a quote."""
    if text.startswith("<<( ", at):
        subject, at = _read_spelled(text, at + 4)
        predicate, at = _read_spelled(text, at + 1)
        obj, at = _read_spelled(text, at + 1)
        return TripleTerm(subject, predicate, obj), at + 4  # past " )>>"
    first = text[at]
    if first == '"':
        close = at + 1
        while text[close] != '"':
            close += 2 if text[close] == "\\" else 1
        end = close + 1
        if end < len(text) and text[end] == "@":
            while end < len(text) and text[end] != " ":
                end += 1
        elif text.startswith("^^<", end):
            end = text.index(">", end) + 1
        return parse_term(text[at:end]), end
    end = text.find(" ", at)
    if end < 0:
        end = len(text)
    return parse_term(text[at:end]), end


def canonical(text: str) -> str:
    """The store's spelling of an N-Triples term string; ValueError when an
    escape spells something a term cannot hold (a surrogate, a space in an IRI)."""
    term = parse_term(text)
    if term.__class__ is TripleTerm:
        for part in (term.subject, term.predicate, term.object):
            canonical(format_term(part))
        return format_term(term)
    iri = term.value if isinstance(term, IRI) else term.datatype if isinstance(term, Literal) else None
    problem = iri_problem(iri) if iri else None
    if problem is not None:
        raise ValueError(f"{text} is not a term: {problem}")
    return format_term(term)


# ------------------------------------------------------- reading statements
_IRIREF = r"<([^<>\"{}|^`\\\x00-\x20]*(?:\\[uU][0-9A-Fa-f]{4,8}[^<>\"{}|^`\\\x00-\x20]*)*)>"
_BNODE = r"_:([A-Za-z0-9_\u00C0-\uFFFF](?:[A-Za-z0-9_.\-\u00B7-\uFFFF]*[A-Za-z0-9_\-\u00B7-\uFFFF])?)"
_LITERAL = (r'"((?:[^"\\\n\r]|\\.)*)"(?:[ \t]*@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*(?:--[a-zA-Z]+)?)'
            r"|[ \t]*\^\^[ \t]*" + _IRIREF + ")?")

_SUBJECT = "(?:" + _IRIREF + "|" + _BNODE + ")"
_OBJECT = "(?:" + _IRIREF + "|" + _BNODE + "|" + _LITERAL + ")"
_GRAPH = "(?:[ \t]+(?:" + _IRIREF + "|" + _BNODE + "))?"
STATEMENT = re.compile(
    r"[ \t]*" + _SUBJECT + r"[ \t]+" + _IRIREF + r"[ \t]+" + _OBJECT + _GRAPH + r"[ \t]*\.[ \t]*(?:#.*)?$"
)


class NTriplesError(ValueError):
    """A line that is not a valid statement; ``line`` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


def parse_statement(text: str, line: int = 1) -> tuple[Term, Term, Term, Term | None]:
    """One statement (triple or quad) from one line."""
    m = STATEMENT.match(text)
    if m is None:  # triple terms, or terms with no space between them: term by term
        try:
            return _nested_statement(text, line)
        except NTriplesError:
            if "<<(" in text:
                raise
    if m is None:
        raise NTriplesError(f"not an N-Triples/N-Quads statement: {text.strip()[:80]!r}", line)
    g = m.groups()
    try:
        subject: Term = _statement_iri(g[0]) if g[0] is not None else BNode(g[1])
        predicate = _statement_iri(g[2])
        if g[3] is not None:
            obj: Term = _statement_iri(g[3])
        elif g[4] is not None:
            obj = BNode(g[4])
        else:
            obj = _literal(g[5], g[6], g[7])
        graph: Term | None = None
        if g[8] is not None:
            graph = _statement_iri(g[8])
        elif g[9] is not None:
            graph = BNode(g[9])
    except ValueError as exc:
        raise NTriplesError(str(exc), line) from exc
    return subject, predicate, obj, graph


def _literal(lexical: str, lang: str | None, datatype: str | None) -> Literal:
    """A statement's literal: a language tag's subtags have at most 8
    characters (BCP 47), a base direction (RDF 1.2 ``@en--ltr``) is ``ltr``
    or ``rtl``, and the datatypes of tagged strings need a tag."""
    if lang is not None:
        tag, _, direction = lang.partition("--")
        if direction and direction not in ("ltr", "rtl"):
            raise ValueError(f"@{lang}: a base direction is ltr or rtl")
        if any(len(part) > 8 for part in tag.split("-")):
            raise ValueError(f"@{lang} is not a language tag: a subtag has more than 8 characters")
    iri = _statement_iri(datatype).value if datatype is not None else None
    if iri in _TAGGED_TYPES:
        raise ValueError(f"<{iri}> is the datatype of language-tagged strings: write a language tag")
    return Literal(unescape(lexical), iri, lang)


#: the datatypes a literal has only by its language tag
_TAGGED_TYPES = frozenset((RDF_LANGSTRING, RDF_DIRLANGSTRING))
#: one term of a statement with triple terms, after optional blanks:
#: ``<<(`` (group 1), an IRI (2), a blank node (3) or a literal (4-6)
_NODE = re.compile(r"[ \t]*(?:(<<\()|" + _IRIREF + "|" + _BNODE + "|" + _LITERAL + ")")
_TRIPLE_CLOSE = re.compile(r"[ \t]*\)>>")
_STATEMENT_END = re.compile(r"[ \t]*\.[ \t]*(?:#.*)?$")


def _read_node(text: str, at: int, line: int, role: str) -> tuple[Term, int]:
    """The term at ``at`` in ``role`` (subject, predicate, object or graph)
    and where it ends: an RDF 1.2 triple term ``<<( s p o )>>`` only as an object."""
    m = _NODE.match(text, at)
    if m is None:
        raise NTriplesError(f"expected the {role} at column {at + 1}: {text.strip()[:80]!r}", line)
    try:
        if m.group(1):
            if role != "object":
                raise ValueError(f"a triple term cannot be the {role} (column {at + 1})")
            subject, end = _read_node(text, m.end(), line, "subject")
            predicate, end = _read_node(text, end, line, "predicate")
            obj, end = _read_node(text, end, line, "object")
            close = _TRIPLE_CLOSE.match(text, end)
            if close is None:
                raise ValueError(f"expected ')>>' at column {end + 1}")
            return TripleTerm(subject, predicate, obj), close.end()
        if m.group(2) is not None:
            return _statement_iri(m.group(2)), m.end()
        if role == "predicate":
            raise ValueError(f"the predicate must be an IRI (column {at + 1})")
        if m.group(3) is not None:
            return BNode(m.group(3)), m.end()
        if role != "object":
            raise ValueError(f"a literal cannot be the {role} (column {at + 1})")
        return _literal(m.group(4), m.group(5), m.group(6)), m.end()
    except NTriplesError:
        raise
    except ValueError as exc:
        raise NTriplesError(str(exc), line) from exc


def _nested_statement(text: str, line: int) -> tuple[Term, Term, Term, Term | None]:
    """A statement holding triple terms, read term by term (the one-regex
    reader cannot match nesting)."""
    subject, at = _read_node(text, 0, line, "subject")
    predicate, at = _read_node(text, at, line, "predicate")
    obj, at = _read_node(text, at, line, "object")
    graph: Term | None = None
    if _STATEMENT_END.match(text, at) is None:
        graph, at = _read_node(text, at, line, "graph")
        if _STATEMENT_END.match(text, at) is None:
            raise NTriplesError(f"expected '.' at column {at + 1}: {text.strip()[:80]!r}", line)
    return subject, predicate, obj, graph


def _statement_iri(raw: str) -> IRI:
    """The IRI a statement spells between ``<`` and ``>``: absolute, and
    without escapes that spell characters an IRI excludes (``\\u0020``)."""
    if "\\" not in raw:
        if ":" not in raw:
            raise ValueError(f"<{raw}> is not an absolute IRI")
        return IRI(raw)
    value = unescape(raw)
    problem = iri_problem(value)
    if problem is not None:
        raise ValueError(f"<{raw}> is not an IRI: {problem}")
    return IRI(value)


_LINE_END = re.compile("\r\n|\r|\n")


def statement_lines(text: str) -> list[str]:
    """The lines of N-Triples text: ended by LF, CR or both, as its grammar
    says (``str.splitlines`` would also cut at the vertical tab, the form
    feed, U+001C-U+001E, U+0085 and U+2028/9, which a literal may hold raw)."""
    return _LINE_END.split(text)


def parse_lines(text: str) -> Iterator[tuple[int, tuple[Term, Term, Term, Term | None]]]:
    """``(line number, statement)`` for every non-blank, non-comment line."""
    for number, line in enumerate(statement_lines(text), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield number, parse_statement(line, number)
