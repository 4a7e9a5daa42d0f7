"""Parsing and hashing a batch of input: the first step of every load task.

N-Triples and N-Quads are split by Spark into line ranges and reach Python
as Arrow batches of lines. A batch is parsed with Arrow's vectorised string
kernels, not a Python loop: a line in the usual single-space form (checked by
one regex DFA pass) is cut with two splits; any other line goes through the
full grammar (:data:`LINE`); a line that matches
neither and is not blank or a comment is bad. Turtle, RDF/XML and the other
syntaxes are not line-based: Oxigraph parses each such file in one task and
its statements join here as a batch of terms.

A batch becomes (a) its statements as four hash columns, saved for the
encoding job, and (b) its distinct terms with their hashes, for the
dictionary. Terms spelled otherwise than the store spells them (other
escapes, ``xsd:string``, capitals in a language tag) are rewritten first by
``engine.rdf.canonical_spellings``, only those (so rarely); a statement with
an escape that is not a character is a bad line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.rdf import (
    BNode,
    RdfSyntaxError,
    Term,
    TripleTerm,
    arrow_positions,
    canonical_nquads,
    canonical_spellings,
    format_term,
    guess_format,
    parse_statement,
    parse_term,
    split_nquads,
    string_buffers,
)
from engine.store.term_hash import hash_strings

#: formats whose files Spark splits into lines
LINE_FORMATS = {"nt", "nquads"}
#: prefix of an error raised inside a Spark task, so the driver can report it
ERROR_MARK = "RIVULET-LOAD-ERROR:"
BAD_LINE_MARK = "RIVULET-BAD-LINE\t"

# RE2 (Arrow's regex engine) forms of the grammar: no possessive quantifiers
# or look-behind needed, as RE2 never backtracks.
# an IRI starts with a scheme: relative IRIs have no place in a store
_IRI = r'<[A-Za-z][A-Za-z0-9+.\-]*:(?:[^\x00-\x20<>"{}|^`\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>'
_BNODE_CHAR = r"A-Za-z0-9_\-\x{00B7}\x{00C0}-\x{FFFF}"
_BNODE = rf"_:[A-Za-z0-9_\x{{00C0}}-\x{{FFFF}}](?:[{_BNODE_CHAR}.]*[{_BNODE_CHAR}])?"
_LITERAL = (r'"(?:[^"\\\n\r]|\\[tbnrf"\'\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*"'
            rf"(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\^\^{_IRI})?")
_WS = r"[ \t]*"
_SUBJECT, _OBJECT = f"(?:{_IRI}|{_BNODE})", f"(?:{_IRI}|{_BNODE}|{_LITERAL})"
SIMPLE_TRIPLE = rf"^{_SUBJECT} {_IRI} {_OBJECT} \.$"
LINE = (rf"^{_WS}(?P<s>{_IRI}|{_BNODE}){_WS}(?P<p>{_IRI}){_WS}(?P<o>{_IRI}|{_BNODE}|{_LITERAL}){_WS}"
        rf"(?:(?P<g>{_IRI}|{_BNODE}){_WS})?\.[ \t\r]*(?:#.*)?$")
BLANK = r"^[ \t\r]*(?:#.*)?$"


class LoadError(Exception):
    """Input that cannot be loaded; the message names the file (and line)."""


def file_format(path: Path) -> str:
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    fmt = guess_format(name)
    if fmt is None:
        raise LoadError(f"{path}: unknown RDF syntax (expected .nt, .nq, .ttl, .rdf, ...)")
    return fmt


@dataclass
class Statements:
    """One batch of parsed statements: N-Triples spellings per position
    (``g`` empty for the default graph)."""

    s: pa.Array
    p: pa.Array
    o: pa.Array
    g: pa.Array


def split_utf8(lines: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(lines that are UTF-8, the others spelled with ``\\xNN`` escapes).
    Spark hands a line over byte for byte, so a file with stray bytes gives
    string values that are not text; one validation of the whole batch
    (in Arrow) finds whether any line needs looking at."""
    try:
        lines.validate(full=True)
        return lines, pa.array([], pa.string())
    except pa.ArrowInvalid:
        raw = lines.cast(pa.binary()).to_pylist()
    text = [_is_utf8(line) for line in raw]
    broken = [line.decode("utf-8", "backslashreplace") for line, ok in zip(raw, text, strict=True) if not ok]
    return lines.filter(pa.array(text)), pa.array(broken, pa.string())


def _is_utf8(line: bytes | None) -> bool:
    if line is None:
        return True
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def parse_lines(lines: pa.Array) -> tuple[Statements, pa.Array]:
    """Statements of a batch of lines, and the bad lines (lines that are
    not UTF-8 among them)."""
    lines, not_utf8 = split_utf8(lines)
    statements, bad = _parse_text_lines(lines)
    if len(not_utf8):
        bad = pa.concat_arrays([bad.cast(pa.string()), not_utf8])
    return statements, bad


def _parse_text_lines(lines: pa.Array) -> tuple[Statements, pa.Array]:
    simple = pc.match_substring_regex(lines, SIMPLE_TRIPLE).to_numpy(zero_copy_only=False)
    fast = lines.filter(pa.array(simple))
    parts = pc.split_pattern(fast, " ", max_splits=2)
    rest = pc.list_element(parts, 2)
    s, p = pc.list_element(parts, 0), pc.list_element(parts, 1)
    o = pc.utf8_slice_codeunits(rest, 0, -2)
    g = pa.nulls(len(fast), pa.string()).fill_null("")
    other = lines.filter(pa.array(~simple))
    kept = fast
    if len(other):
        found = pc.extract_regex(other, LINE)
        matched = found.is_valid().to_numpy(zero_copy_only=False)
        good = found.filter(pa.array(matched))
        s, p, o, g = (pa.concat_arrays([a.cast(pa.string()), good.field(k).cast(pa.string())])
                      for a, k in ((s, "s"), (p, "p"), (o, "o"), (g, "g")))
        kept = pa.concat_arrays([fast.cast(pa.string()), other.filter(pa.array(matched)).cast(pa.string())])
        unmatched = other.filter(pa.array(~matched))
        bad = unmatched.filter(pc.invert(pc.match_substring_regex(unmatched, BLANK)))
    else:
        bad = other
    if len(bad) and pc.any(pc.match_substring(bad, "<<(")).as_py():
        s, p, o, g, kept, bad = _with_triple_terms(s, p, o, g, kept, bad)
    # the store's spelling; a statement whose escapes do not make characters
    # (\uD800, \q) is a bad line too
    (s, broken_s), (p, broken_p), (o, broken_o), (g, broken_g) = (
        canonical_spellings(c.cast(pa.string())) for c in (s, p, o, g))
    broken = broken_s | broken_p | broken_o | broken_g
    if broken.any():
        keep = pa.array(~broken)
        s, p, o, g = (c.filter(keep) for c in (s, p, o, g))
        bad = pa.concat_arrays([bad.cast(pa.string()), kept.filter(pa.array(broken)).cast(pa.string())])
    return Statements(s, p, o, g), bad


def _with_triple_terms(s: pa.Array, p: pa.Array, o: pa.Array, g: pa.Array, kept: pa.Array, bad: pa.Array
                       ) -> tuple[pa.Array, ...]:
    """The columns with the statements of ``bad`` lines that hold RDF 1.2
    triple terms (nested, so beyond the line patterns) read by the statement
    parser one line at a time, and the lines still bad."""
    found: list[tuple[str, str, str, str]] = []
    read: list[str] = []
    still_bad: list[str] = []
    for line in bad.cast(pa.string()).to_pylist():
        try:
            quad = parse_statement(line.rstrip("\r"))
        except ValueError:
            still_bad.append(line)
            continue
        found.append(tuple("" if t is None else format_term(t) for t in quad))  # type: ignore[misc]
        read.append(line)
    if not found:
        return s, p, o, g, kept, bad
    columns = [pa.concat_arrays([c.cast(pa.string()), pa.array(list(new), pa.string())])
               for c, new in zip((s, p, o, g), zip(*found, strict=True), strict=True)]
    kept = pa.concat_arrays([kept.cast(pa.string()), pa.array(read, pa.string())])
    return (*columns, kept, pa.array(still_bad, pa.string()))


def normalise(batch: Statements, scope: str | None, graph: str | None) -> Statements:
    """Blank nodes scoped to their file; triples moved to ``graph`` (the
    spellings are already the store's: ``parse_lines`` and ``split_nquads``
    rewrite them)."""
    cols = [c.cast(pa.string()) for c in (batch.s, batch.p, batch.o, batch.g)]
    if scope is not None:
        prefix = pa.scalar(f"_:{scope}")
        cols = [pc.if_else(pc.starts_with(c, "_:"),
                           pc.binary_join_element_wise(prefix, pc.utf8_slice_codeunits(c, 2), ""), c)
                for c in cols]
        cols[0], cols[2] = (_scoped_triple_terms(c, scope) for c in (cols[0], cols[2]))
    if graph is not None:
        cols[3] = pc.if_else(pc.equal(cols[3], ""), pa.scalar(f"<{graph}>"), cols[3])
    return Statements(*cols)


def _scoped_triple_terms(column: pa.Array, scope: str) -> pa.Array:
    """The blank nodes inside triple terms scoped like the others (term by
    term: only the rare triple terms that hold a blank node are parsed)."""
    nested = pc.and_(pc.starts_with(column, "<<("), pc.match_substring(column, "_:"))
    at = np.flatnonzero(pc.fill_null(nested, False).to_numpy(zero_copy_only=False))
    if not len(at):
        return column

    def scoped(term: Term) -> Term:
        if isinstance(term, BNode):
            return BNode(scope + term.id)
        if isinstance(term, TripleTerm):
            return TripleTerm(scoped(term.subject), term.predicate, scoped(term.object))
        return term

    values = column.to_pylist()
    for i in at.tolist():
        values[i] = format_term(scoped(parse_term(values[i])))
    return pa.array(values, pa.string())


def hash_column(column: pa.Array) -> np.ndarray:
    """Term hash per value; each distinct value is hashed once (Arrow's own
    hash table finds them)."""
    encoded = pc.dictionary_encode(column)
    offsets, data = string_buffers(encoded.dictionary)
    return hash_strings(data, offsets)[encoded.indices.to_numpy(zero_copy_only=False)]


def terms_and_hashes(batch: Statements) -> tuple[np.ndarray, pa.Array, np.ndarray]:
    """(hash columns s p o g as a 4 x n int64 array, g = 0 for the default graph;
    the batch's distinct terms; their hashes)."""
    quads = np.stack([hash_column(c) for c in (batch.s, batch.p, batch.o, batch.g)])
    quads[3][pc.equal(batch.g, "").to_numpy(zero_copy_only=False)] = 0
    terms = pc.unique(pa.concat_arrays([batch.s, batch.p, batch.o, batch.g]))
    terms = terms.filter(pc.not_equal(terms, ""))
    offsets, data = string_buffers(terms)
    return quads, terms, hash_strings(data, offsets)


def document_batch(path: Path) -> Statements:
    """All statements of a Turtle / RDF-XML / ... file: Oxigraph parses it
    and its N-Quads are split into columns (``engine.rdf.split_nquads``)."""
    try:
        quads = split_nquads(canonical_nquads(path))
    except (RdfSyntaxError, OSError) as exc:  # the message says where
        raise LoadError(f"{ERROR_MARK}{path}: {exc}") from exc
    spellings = pa.concat_arrays([quads.terms, pa.array([""], pa.large_string())])
    empty = len(quads.terms)

    def column(index: np.ndarray) -> pa.Array:
        return spellings.take(arrow_positions(np.where(index >= 0, index, empty)))

    return Statements(column(quads.s), column(quads.p), column(quads.o), column(quads.g))


def locate_line(path: Path, text: str) -> int | None:
    """The 1-based number of the first line of ``path`` that reads ``text``
    (a task sees a bad line's content, not its position in the file)."""
    import gzip

    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        for number, line in enumerate(f, 1):
            # a line that is not UTF-8 was reported with \xNN escapes
            if line.rstrip(b"\r\n").decode("utf-8", "backslashreplace") == text:
                return number
    return None
