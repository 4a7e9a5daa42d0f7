"""Reading a body of (timestamped) N-Triples in whole-array steps.

A producer writes one statement a line, one space between the timestamp and
the terms and between the terms, `` .`` at the end, and no escapes (that is
what ``awk`` and every client here write). For such a body the line and
term boundaries are found by a few NumPy searches over the bytes, and every
rule of the statement grammar that could fail is checked on arrays (the
characters of IRIs, blank-node labels and language tags, the timestamps'
digits, range and order), so no Python step runs per line or per term. The
terms' bytes are then already the store's canonical spelling.

Anything else (comments, blank lines, tabs, escapes, RDF 1.2 triple terms,
``xsd:dateTime`` timestamps, upper-case language tags, ``xsd:string``, a line the grammar
refuses) makes :func:`scan_body` return None: the caller then reads the
body with the statement parser, which accepts what it accepts and refuses
what it refuses with the same messages as always. So this reader only ever
takes a body that the parser would have read to the same items.
"""

from __future__ import annotations

import numpy as np

from engine.rdf import SpelledTerms, first_after
from engine.stream.batch_format import LATEST_MS

#: a timestamp of at most this many digits (LATEST_MS has 15)
_DIGITS = 15
_POWERS = 10 ** np.arange(_DIGITS - 1, -1, -1, dtype=np.int64)
#: bytes that end a line for ``str.splitlines`` besides LF (and the
#: multi-byte ones below), the escape character, and CR: the parser's business
_SINGLE_REFUSED = np.zeros(256, dtype=bool)
_SINGLE_REFUSED[[0x0B, 0x0C, 0x1C, 0x1D, 0x1E, ord("\\"), ord("\r")]] = True
_MULTI_REFUSED = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
#: the datatype the canonical spelling drops
_XSD_STRING = np.frombuffer(b"<http://www.w3.org/2001/XMLSchema#string>", dtype=np.uint8)
#: bytes an IRIREF may not hold raw (``>`` cannot occur: the IRI ends at the first)
_NOT_IRI = np.zeros(256, dtype=bool)
_NOT_IRI[: 0x21] = True
_NOT_IRI[[ord(c) for c in '<"{}|^`\\']] = True
#: ASCII blank-node label characters (others are left to the parser)
_LABEL = np.zeros(256, dtype=bool)
for _low, _high in (("A", "Z"), ("a", "z"), ("0", "9")):
    _LABEL[ord(_low) : ord(_high) + 1] = True
_LABEL[[ord("_"), ord("."), ord("-")]] = True
#: lower-case language tag characters
_LANG = np.zeros(256, dtype=bool)
_LANG[ord("a") : ord("z") + 1] = True
_LANG[ord("-")] = True
_NOT_LABEL, _NOT_LANG = ~_LABEL, ~_LANG

_LF, _SP, _LT, _GT, _QUOTE, _UNDERSCORE, _COLON, _AT, _CARET, _DOT, _DASH = (
    ord(c) for c in '\n <>"_:@^.-')


class _Bytes:
    """The body's bytes, and the sorted positions of the bytes a check looks for."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = np.concatenate([data, np.zeros(8, dtype=np.uint8)])  # reads past the end are 0
        self.size = len(data)
        self._positions: dict[int, np.ndarray] = {}

    def at(self, positions: np.ndarray) -> np.ndarray:
        return self.data[np.clip(positions, 0, len(self.data) - 1)]

    def _where(self, marks: int | np.ndarray) -> np.ndarray:
        key = marks if isinstance(marks, int) else id(marks)
        found = self._positions.get(key)
        if found is None:
            body = self.data[: self.size]
            found = self._positions[key] = np.flatnonzero(body == marks if isinstance(marks, int)
                                                          else marks[body])
        return found

    def next(self, marks: int | np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The first position at or after each position of the byte ``marks``
        (or of a byte the table ``marks`` marks); the body's size if none."""
        return np.minimum(first_after(self._where(marks), positions), self.size)

    def none_in(self, marks: int | np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Per span ``[start, end)``: whether none of its bytes is ``marks``."""
        return self.next(marks, starts) >= ends


def scan_body(body: bytes, timestamped: bool) -> tuple[np.ndarray, np.ndarray, SpelledTerms] | None:
    """``(timestamps, triples, terms)`` of the items of a body of timestamped
    N-Triples (``timestamped``; one item per run of equal timestamps,
    heartbeats included) or of plain N-Triples (one item, timestamp 0); None
    when the body is not in the plain form this reader takes (see the
    module docstring)."""
    if not body or (not body.isascii() and any(marker in body for marker in _MULTI_REFUSED)):
        return None
    if b"<<(" in body:  # an RDF 1.2 triple term: nested terms are the parser's
        return None
    raw = np.frombuffer(body, dtype=np.uint8)
    if _SINGLE_REFUSED[raw].any():
        return None
    b = _Bytes(raw)
    ends = np.flatnonzero(raw == _LF)
    if not len(ends) or ends[-1] != len(raw) - 1:
        ends = np.append(ends, len(raw))
    starts = np.zeros(len(ends), dtype=np.int64)
    starts[1:] = ends[:-1] + 1
    if (ends <= starts).any():  # a blank line
        return None
    if timestamped:
        head_end = np.minimum(b.next(_SP, starts), ends)
        times = _timestamps(b, starts, head_end)
        if times is None:
            return None
        data = np.flatnonzero(head_end < ends)
        term_start = head_end[data] + 1
    else:
        times = np.zeros(1, dtype=np.int64)
        data = np.arange(len(starts))
        term_start = starts
    spans = _statements(b, term_start, ends[data])
    if spans is None:
        return None
    if timestamped:
        new = np.ones(len(times), dtype=bool)
        new[1:] = times[1:] != times[:-1]
        item = np.cumsum(new) - 1
        counts = np.bincount(item[data], minlength=int(new.sum())).astype(np.int64)
        times = times[new]
    else:
        counts = np.array([len(data)], dtype=np.int64)
    return times, counts, SpelledTerms(raw, *spans)


def _timestamps(b: _Bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """Each line's timestamp: 1 to 15 ASCII digits, at most LATEST_MS, not
    decreasing; None if any is not (the parser says which and why)."""
    width = ends - starts
    if ((width < 1) | (width > _DIGITS)).any():
        return None
    at = ends[:, None] - _DIGITS + np.arange(_DIGITS)
    digits = np.where(at >= starts[:, None], b.at(at).astype(np.int64) - ord("0"), 0)
    if ((digits < 0) | (digits > 9)).any():
        return None
    times = digits @ _POWERS
    if (times > LATEST_MS).any() or (np.diff(times) < 0).any():
        return None
    return times


def _statements(b: _Bytes, start: np.ndarray, end: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray] | None:
    """Starts and lengths of the terms (s, p, o interleaved) of the
    statements ``[start, end)``, each ``S P O .`` with single spaces; None
    if one is not in that form or breaks the grammar."""
    ok = np.ones(len(start), dtype=bool)
    s_end = _subject_end(b, start, ok)
    p_start = s_end + 1
    ok &= (b.at(s_end) == _SP) & (b.at(p_start) == _LT)
    p_end = b.next(_GT, p_start) + 1
    ok &= _iri_ok(b, p_start, p_end)
    o_start = p_end + 1
    ok &= b.at(p_end) == _SP
    o_end = _object_end(b, o_start, end, ok)
    ok &= (o_end == end - 2) & (b.at(end - 2) == _SP) & (b.at(end - 1) == _DOT)
    if not ok.all():
        return None
    starts = np.stack([start, p_start, o_start], axis=1).ravel()
    lengths = np.stack([s_end - start, p_end - p_start, o_end - o_start], axis=1).ravel()
    return starts, lengths


def _subject_end(b: _Bytes, start: np.ndarray, ok: np.ndarray) -> np.ndarray:
    first = b.at(start)
    iri = first == _LT
    ok &= iri | ((first == _UNDERSCORE) & (b.at(start + 1) == _COLON))
    end = np.where(iri, b.next(_GT, start) + 1, b.next(_SP, start))
    ok &= _iri_ok(b, start, end) | ~iri
    _check_labels(b, ~iri, start, end, ok)
    return end


def _check_labels(b: _Bytes, blank: np.ndarray, start: np.ndarray, end: np.ndarray, ok: np.ndarray) -> None:
    """Clear ``ok`` where a blank node's label is not one this reader takes."""
    rows = np.flatnonzero(blank)
    if len(rows):
        ok[rows] &= _label_ok(b, start[rows], end[rows])


def _object_end(b: _Bytes, start: np.ndarray, line_end: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Where each object ends: an IRI at its ``>``, a blank node at the next
    space, a literal after its closing quote and its language tag or datatype."""
    first = b.at(start)
    iri, literal = first == _LT, first == _QUOTE
    blank = (first == _UNDERSCORE) & (b.at(start + 1) == _COLON)
    ok &= iri | literal | blank
    end = np.where(iri, b.next(_GT, start) + 1, b.next(_SP, start))
    ok &= _iri_ok(b, start, end) | ~iri
    _check_labels(b, blank, start, end, ok)
    close = b.next(_QUOTE, start + 1)  # no escapes: the lexical form holds no quote
    after = b.at(close + 1)
    lang = literal & (after == _AT)
    typed = literal & (after == _CARET)
    plain = literal & ~lang & ~typed
    tag_end = line_end - 2
    tagged = np.flatnonzero(lang)
    if len(tagged):
        ok[tagged] &= _lang_ok(b, close[tagged] + 2, tag_end[tagged])
    type_start = close + 3
    type_end = b.next(_GT, type_start) + 1
    ok &= np.where(typed, (b.at(close + 2) == _CARET) & (b.at(type_start) == _LT)
                   & _iri_ok(b, type_start, type_end), True)
    ok &= ~(typed & _spells(b, type_start, type_end, _XSD_STRING))
    return np.select([plain, lang, typed], [close + 1, tag_end, type_end], end)


def _iri_ok(b: _Bytes, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """``<...>`` spans: no character IRIREF forbids, and absolute (a colon)."""
    inner_start, inner_end = start + 1, end - 1
    return ((b.at(start) == _LT) & b.none_in(_NOT_IRI, inner_start, inner_end)
            & (b.next(_COLON, inner_start) < inner_end))


def _label_ok(b: _Bytes, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """``_:label`` spans: ASCII label characters, not starting with ``.`` or
    ``-``, not ending with ``.``."""
    label = start + 2
    first, last = b.at(label), b.at(np.maximum(end - 1, label))
    return ((end > label) & b.none_in(_NOT_LABEL, label, end)
            & (first != _DOT) & (first != _DASH) & (last != _DOT))


def _lang_ok(b: _Bytes, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Lower-case language tags of letters and at most one inner hyphen,
    each part at most 8 letters as BCP 47 has them (longer tags are left to
    the parser)."""
    first, last = b.at(start), b.at(np.maximum(end - 1, start))
    dash = b.next(_DASH, start)
    if ((dash < end) & (b.next(_DASH, dash + 1) < end)).any():
        return np.zeros(len(start), dtype=bool)
    short = np.where(dash < end, (dash - start <= 8) & (end - dash - 1 <= 8), end - start <= 8)
    return ((end > start) & b.none_in(_NOT_LANG, start, end)
            & (first != _DASH) & (last != _DASH) & short)


def _spells(b: _Bytes, start: np.ndarray, end: np.ndarray, word: np.ndarray) -> np.ndarray:
    """Per span, whether its bytes are ``word``."""
    same = (end - start) == len(word)
    at = np.flatnonzero(same)
    if len(at):
        same[at] = (b.at(start[at, None] + np.arange(len(word))) == word).all(axis=1)
    return same
