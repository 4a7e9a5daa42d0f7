# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The plain-form reader of (timestamped) N-Triples bodies, compiled: one pass
over the body's bytes (engine/stream/batch_scan.py says which form it takes
and why everything else goes to the statement parser).

Why compiled: in NumPy the reader was a few dozen whole-array passes (every
boundary a sorted-position search), about 2 us a triple and a quarter to a
third of the server's samples under HTTP ingest (1M stored, one query). Here
each line is read once, left to right, and every rule that could fail is a
byte test; any doubt gives up on the whole body, as the NumPy form did.
"""

from libc.stdint cimport int64_t, uint8_t

import numpy as np

cdef enum:
    LF = 10
    SP = 32
    QUOTE = 34
    DASH = 45
    DOT = 46
    COLON = 58
    LT = 60
    GT = 62
    AT = 64
    CARET = 94
    UNDERSCORE = 95
    BACKSLASH = 92
    CR = 13
    DIGITS = 15

#: the datatype the canonical spelling drops (a literal spelling it is left to the parser)
cdef bytes XSD_STRING = b"<http://www.w3.org/2001/XMLSchema#string>"


cdef inline bint _refused(uint8_t c) noexcept nogil:
    """Bytes that end a line for ``str.splitlines`` besides LF, the escape
    character and CR: the parser's business."""
    return c == 0x0B or c == 0x0C or c == 0x1C or c == 0x1D or c == 0x1E or c == BACKSLASH or c == CR


cdef inline bint _not_iri(uint8_t c) noexcept nogil:
    """A byte an IRIREF may not hold raw."""
    return (c <= 0x20 or c == LT or c == QUOTE or c == 123 or c == 125 or c == 124 or c == CARET
            or c == 96 or c == BACKSLASH)


cdef inline bint _label_char(uint8_t c) noexcept nogil:
    return ((65 <= c <= 90) or (97 <= c <= 122) or (48 <= c <= 57) or c == UNDERSCORE
            or c == DOT or c == DASH)


cdef inline Py_ssize_t _iri_end(const uint8_t* d, Py_ssize_t at, Py_ssize_t end) noexcept nogil:
    """The end (after ``>``) of an absolute IRIREF starting at ``at`` (``<``)
    within ``[at, end)``; -1 if there is none there."""
    cdef Py_ssize_t i = at + 1
    cdef bint colon = False
    if at >= end or d[at] != LT:
        return -1
    while i < end and d[i] != GT:
        if _not_iri(d[i]):
            return -1
        if d[i] == COLON:
            colon = True
        i += 1
    if i >= end or not colon:
        return -1
    return i + 1


cdef inline Py_ssize_t _blank_end(const uint8_t* d, Py_ssize_t at, Py_ssize_t end) noexcept nogil:
    """The end (at the next space) of a blank node ``_:label`` starting at
    ``at`` within ``[at, end)``: ASCII label characters, not starting with
    ``.`` or ``-``, not ending with ``.``; -1 otherwise."""
    cdef Py_ssize_t i = at + 2
    if at + 2 >= end or d[at] != UNDERSCORE or d[at + 1] != COLON:
        return -1
    if d[i] == DOT or d[i] == DASH:
        return -1
    while i < end and d[i] != SP:
        if not _label_char(d[i]):
            return -1
        i += 1
    if i >= end or i == at + 2 or d[i - 1] == DOT:
        return -1
    return i


cdef inline bint _lang_ok(const uint8_t* d, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """Lower-case letters with at most one inner hyphen, each part at most 8
    letters (longer tags are left to the parser)."""
    cdef Py_ssize_t i, dash = -1
    if end <= start or d[start] == DASH or d[end - 1] == DASH:
        return False
    for i in range(start, end):
        if d[i] == DASH:
            if dash >= 0:
                return False
            dash = i
        elif not (97 <= d[i] <= 122):
            return False
    if dash < 0:
        return end - start <= 8
    return dash - start <= 8 and end - dash - 1 <= 8


cdef inline Py_ssize_t _object_end(const uint8_t* d, Py_ssize_t at, Py_ssize_t end,
                                   const uint8_t* xsd_string, Py_ssize_t xsd_length) noexcept nogil:
    """The end of the object starting at ``at``, which must be followed by
    `` .`` at the line's end ``end``; -1 if it is not in the plain form."""
    cdef Py_ssize_t close, type_end, i
    if at >= end:
        return -1
    if d[at] == LT:
        return _iri_end(d, at, end)
    if d[at] == UNDERSCORE:
        return _blank_end(d, at, end)
    if d[at] != QUOTE:
        return -1
    close = at + 1
    while close < end and d[close] != QUOTE:
        close += 1
    if close >= end:
        return -1
    if close + 1 < end and d[close + 1] == AT:
        return end - 2 if _lang_ok(d, close + 2, end - 2) else -1
    if close + 1 < end and d[close + 1] == CARET:
        if close + 3 >= end or d[close + 2] != CARET:
            return -1
        type_end = _iri_end(d, close + 3, end)
        if type_end < 0:
            return -1
        if type_end - close - 3 == xsd_length:
            for i in range(xsd_length):
                if d[close + 3 + i] != xsd_string[i]:
                    break
            else:
                return -1
        return type_end
    return close + 1


def scan(const uint8_t[::1] data, bint timestamped, int64_t latest):
    """``(line_times, data_lines, starts, lengths)`` of a body in the plain
    form: each line's timestamp (0 without ``timestamped``), the indexes of
    the lines that hold a statement, and the terms' spans (s, p, o of each
    statement in turn); None when the body is not in that form."""
    cdef Py_ssize_t size = data.shape[0], lines = 0, i
    if size == 0:
        return None
    cdef const uint8_t* d = &data[0]
    cdef const uint8_t* xsd = XSD_STRING
    cdef Py_ssize_t xsd_length = len(XSD_STRING)
    for i in range(size):
        if d[i] == LF:
            lines += 1
    if d[size - 1] != LF:
        lines += 1
    times_out = np.zeros(lines, dtype=np.int64)
    rows_out = np.empty(lines, dtype=np.int64)
    starts_out = np.empty(3 * lines, dtype=np.int64)
    lengths_out = np.empty(3 * lines, dtype=np.int64)
    cdef int64_t[::1] times = times_out, rows = rows_out, starts = starts_out, lengths = lengths_out
    cdef Py_ssize_t line = 0, statements = 0, start = 0, end, at, s_end, p_end, o_end
    cdef int64_t value, previous = -1
    cdef bint ok = True
    with nogil:
        while start < size:
            end = start
            while end < size and d[end] != LF:
                if _refused(d[end]):
                    ok = False
                    break
                end += 1
            if not ok or end == start:  # a refused byte, or a blank line
                ok = False
                break
            at = start
            if timestamped:
                value = 0
                while at < end and d[at] != SP:
                    if not (48 <= d[at] <= 57) or at - start >= DIGITS:
                        ok = False
                        break
                    value = value * 10 + (d[at] - 48)
                    at += 1
                if not ok or at == start or value > latest or value < previous:
                    ok = False
                    break
                previous = value
                times[line] = value
                if at == end:  # a heartbeat: the timestamp alone
                    line += 1
                    start = end + 1
                    continue
                at += 1  # past the space: a statement must follow
            if at >= end:
                ok = False
                break
            if d[at] == LT:
                s_end = _iri_end(d, at, end)
            else:
                s_end = _blank_end(d, at, end)
            if s_end < 0 or s_end + 1 >= end or d[s_end] != SP:
                ok = False
                break
            p_end = _iri_end(d, s_end + 1, end)
            if p_end < 0 or p_end + 1 >= end or d[p_end] != SP:
                ok = False
                break
            o_end = _object_end(d, p_end + 1, end, xsd, xsd_length)
            if o_end < 0 or o_end != end - 2 or d[end - 2] != SP or d[end - 1] != DOT:
                ok = False
                break
            rows[statements] = line
            starts[3 * statements] = at
            lengths[3 * statements] = s_end - at
            starts[3 * statements + 1] = s_end + 1
            lengths[3 * statements + 1] = p_end - s_end - 1
            starts[3 * statements + 2] = p_end + 1
            lengths[3 * statements + 2] = o_end - p_end - 1
            statements += 1
            line += 1
            start = end + 1
    if not ok:
        return None
    return times_out, rows_out[:statements], starts_out[:3 * statements], lengths_out[:3 * statements]
