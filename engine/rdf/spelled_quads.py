"""Canonical N-Quads text to columns: each distinct term spelled once, and
per statement the index of its subject, predicate, object and graph.

A bulk load must not make a Python object per statement or per term
occurrence: at a million statements a second that alone would take longer
than the parse. Oxigraph's N-Quads output (:func:`engine.rdf.canonical_nquads`)
has one statement a line and one space between terms, and only a literal
can hold a space or a quote, so the term boundaries of every line are found
with a few whole-array NumPy searches over the bytes; the separators are
then dropped in one pass, leaving every term occurrence back to back, and
Arrow's hash table finds the distinct spellings. (Arrow is imported when a
load first needs it, not by a server that only maps a store.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.rdf.ntriples import canonical, format_term, parse_statement, parse_term, statement_lines
from engine.rdf.terms import KIND_BNODE, KIND_IRI, KIND_LITERAL, KIND_TRIPLE, NUMERIC_DATATYPES, numeric_value

if TYPE_CHECKING:
    import pyarrow as pa

_NEWLINE, _SPACE, _QUOTE = ord("\n"), ord(" "), ord('"')


@dataclass
class SpelledQuads:
    """Statements as indexes into ``terms`` (distinct canonical N-Triples
    spellings); ``g`` is -1 for a statement of the default graph."""

    terms: pa.LargeStringArray
    s: np.ndarray
    p: np.ndarray
    o: np.ndarray
    g: np.ndarray

    def __len__(self) -> int:
        return len(self.s)


def first_after(sorted_positions: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The first position in ``sorted_positions`` at or after each ``at``
    (int64's largest value when there is none)."""
    found = np.searchsorted(sorted_positions, at)
    if not len(sorted_positions):
        return np.full(len(found), np.iinfo(np.int64).max)
    beyond = found == len(sorted_positions)
    out = sorted_positions[np.minimum(found, len(sorted_positions) - 1)].astype(np.int64)
    out[beyond] = np.iinfo(np.int64).max
    return out


def split_nquads(text: bytes) -> SpelledQuads:
    """The statements of canonical N-Quads text, as columns."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if b"<<(" in text:  # RDF 1.2 triple terms hold spaces: no longer a split at spaces
        return _split_nested(text)
    data = np.frombuffer(text, dtype=np.uint8)
    ends = np.flatnonzero(data == _NEWLINE)
    n = len(ends)
    starts = np.zeros(n, dtype=np.int64)
    starts[1:] = ends[:-1] + 1
    body_end = ends - 2  # the space before the final " ."
    spaces = np.flatnonzero(data == _SPACE)
    first = np.searchsorted(spaces, starts)
    s_end, p_end = spaces[first], spaces[first + 1]
    o_start = p_end + 1
    # after the object: a literal ends after its last quote (a graph name
    # holds none), any other term at the next space
    literal = np.flatnonzero(data[o_start] == _QUOTE)
    tail = o_start.copy()
    if len(literal):
        quotes = np.flatnonzero(data == _QUOTE)
        tail[literal] = quotes[np.searchsorted(quotes, body_end[literal]) - 1]
    gap = first_after(spaces, tail)
    named = gap < body_end
    o_end = np.where(named, gap, body_end)
    g_start = np.where(named, gap + 1, body_end)
    # drop every separator: what is left is s, p, o, g of each line back to back
    keep = np.ones(len(data), dtype=bool)
    for cut in (s_end, p_end, o_end[named], body_end, body_end + 1, ends):
        keep[cut] = False
    lengths = np.stack([s_end - starts, p_end - s_end - 1, o_end - o_start, body_end - g_start], axis=1)
    offsets = np.zeros(4 * n + 1, dtype=np.int64)
    np.cumsum(lengths.ravel(), out=offsets[1:])
    blob = data[keep]
    occurrences = pa.LargeStringArray.from_buffers(4 * n, pa.py_buffer(offsets), pa.py_buffer(blob))
    encoded = pc.dictionary_encode(occurrences)
    terms = encoded.dictionary.cast(pa.large_string())
    index = encoded.indices.to_numpy().astype(np.int64).reshape(n, 4)
    terms, index = _without_empty(terms, index)
    terms, broken = canonical_spellings(terms)
    if broken.any():  # Oxigraph validated the text: not reachable from its output
        raise ValueError("a term of the N-Quads text has an escape that is not a character")
    return SpelledQuads(terms, index[:, 0], index[:, 1], index[:, 2], index[:, 3])


def _split_nested(text: bytes) -> SpelledQuads:
    """:func:`split_nquads` of text with triple terms: each statement read by
    the N-Triples reader and spelled again (one Python step per statement;
    such documents are the rare RDF 1.2 ones)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    spellings: list[str] = []
    for number, line in enumerate(statement_lines(text.decode("utf-8")), 1):
        if line.strip():
            s, p, o, g = parse_statement(line, number)
            spellings.extend((format_term(s), format_term(p), format_term(o),
                              "" if g is None else format_term(g)))
    encoded = pc.dictionary_encode(_arrow_strings(spellings))
    terms = encoded.dictionary.cast(pa.large_string())
    index = encoded.indices.to_numpy().astype(np.int64).reshape(-1, 4)
    terms, index = _without_empty(terms, index)
    return SpelledQuads(terms, index[:, 0], index[:, 1], index[:, 2], index[:, 3])


def arrow_positions(positions: np.ndarray) -> pa.Array:
    """An Arrow int64 array over a NumPy one without a copy (``pa.array``
    would import pandas to ask whether the input is a pandas series: 51 MB
    of a server's memory for nothing)."""
    import pyarrow as pa

    positions = np.ascontiguousarray(positions, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(positions), [None, pa.py_buffer(positions)])


def _arrow_strings(values: list[str]) -> pa.LargeStringArray:
    """An Arrow string array of ``values`` (built from buffers, see above)."""
    import pyarrow as pa

    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    blob = pa.py_buffer(b"".join(encoded))
    return pa.LargeStringArray.from_buffers(len(encoded), pa.py_buffer(offsets), blob)


def _without_empty(terms: pa.LargeStringArray, index: np.ndarray) -> tuple[pa.LargeStringArray, np.ndarray]:
    """Drop the empty spelling (the graph of a default-graph statement): its
    index becomes -1 and the indexes above it move down by one."""
    import pyarrow.compute as pc

    empty = np.flatnonzero(pc.utf8_length(terms).to_numpy() == 0)
    if not len(empty):
        return terms, index
    at = int(empty[0])
    shifted = np.where(index > at, index - 1, index)
    shifted[index == at] = -1
    kept = np.delete(np.arange(len(terms), dtype=np.int64), at)
    return terms.take(arrow_positions(kept)), shifted


#: a language tag with a capital (the store keeps tags in lower case)
_UPPER_CASE_LANGUAGE = r'"@[a-zA-Z0-9-]*[A-Z][a-zA-Z0-9-]*$'


def canonical_spellings(terms: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """N-Triples spellings rewritten into the store's spelling, and per term
    whether it could not be (an escape that is not a character: ``\\q``,
    ``\\uD800``; such a term keeps its spelling and the caller refuses it).
    Only spellings with a backslash, an ``xsd:string`` datatype or a capital
    in a language tag can differ; each is rewritten once. (Distinct
    spellings of Oxigraph's output are distinct terms, so the rewrite never
    merges two of them.)"""
    import pyarrow as pa
    import pyarrow.compute as pc

    odd = pc.or_(pc.or_(pc.match_substring(terms, "\\"), pc.ends_with(terms, "#string>")),
                 pc.match_substring_regex(terms, _UPPER_CASE_LANGUAGE))
    at = np.flatnonzero(pc.cast(odd, pa.int8()).to_numpy(zero_copy_only=False))
    broken = np.zeros(len(terms), dtype=bool)
    if not len(at):
        return terms, broken
    fixed = []
    for i, spelling in zip(at.tolist(), terms.take(arrow_positions(at)).to_pylist()):
        try:
            fixed.append(canonical(spelling))
        except ValueError:
            broken[i] = True
            fixed.append(spelling)
    rewritten = pc.replace_with_mask(terms, odd, _arrow_strings(fixed).cast(terms.type))
    return rewritten, broken


_KIND_OF_FIRST_BYTE = np.zeros(256, dtype=np.uint8)
_KIND_OF_FIRST_BYTE[ord("<")] = KIND_IRI
_KIND_OF_FIRST_BYTE[ord("_")] = KIND_BNODE
_KIND_OF_FIRST_BYTE[_QUOTE] = KIND_LITERAL
_NUMERIC = '"\\^\\^<(' + "|".join(sorted(t.replace(".", "\\.") for t in NUMERIC_DATATYPES)) + ")>$"


def string_buffers(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets from 0 as int64, UTF-8 bytes) of an Arrow string array, no copy
    of the bytes and no Python string per value."""
    import pyarrow as pa

    array = array.cast(pa.large_string())
    _, offsets_buf, data_buf = array.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[array.offset : array.offset + len(array) + 1]
    lo, hi = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(data_buf, dtype=np.uint8)[lo:hi] if data_buf is not None and hi > lo \
        else np.zeros(0, dtype=np.uint8)
    return offsets - lo, data


def spelling_kinds(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Kind code of each spelling (``data[offsets[i]:offsets[i+1]]``), from
    its first byte (and its second: ``<<`` starts a triple term)."""
    if not len(data):
        return np.zeros(len(offsets) - 1, dtype=np.uint8)
    first = np.minimum(offsets[:-1], len(data) - 1)
    kinds = _KIND_OF_FIRST_BYTE[data[first]]
    second = np.minimum(first + 1, len(data) - 1)
    kinds[(kinds == KIND_IRI) & (data[second] == ord("<")) & (offsets[1:] - offsets[:-1] > 1)] = KIND_TRIPLE
    return kinds


def spelling_numbers(terms: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(positions, values) of the spellings that are valid numeric literals.
    Numeric datatypes are found by one Arrow regex pass; only those terms are
    read one by one (by the XSD rules of ``numeric_value``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    numeric = pc.cast(pc.match_substring_regex(terms, _NUMERIC), pa.int8()).to_numpy()
    at, values = [], []
    for i in np.flatnonzero(numeric).tolist():
        value = numeric_value(parse_term(terms[i].as_py()))
        if value == value:
            at.append(i)
            values.append(value)
    return np.array(at, dtype=np.int64), np.array(values, dtype=np.float64)
