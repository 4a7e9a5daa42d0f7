"""Term IDs that carry a literal's value: numbers and booleans that never enter the dictionary.

A stream of sensor readings or GPS positions brings a new literal with
almost every item. Kept in the dictionary, each one is parsed, numbered,
referenced by its log chunk and freed again when the window slides past it
(LSBench L1: about 70% of the engine's time). Instead, a literal whose
lexical form this module can spell back exactly gets an ID that *is* its
value: nothing is stored for it, and a reading that leaves the window frees
nothing.

Layout of a value ID (IDs stay below 2**31: the stores pack two IDs into one
int64 key, ``engine.store.memory_graph``)::

    bit 30      1 (dictionary IDs stay below VALUE_BASE = 2**30)
    bits 27-29  type code (:data:`TYPES`)
    bits 0-26   payload: an integer + 2**26, or a decimal-like number as
                ``scale << 24 | (digits + 2**23)`` (the value is
                ``digits / 10**scale``), or 0/1 for a boolean

The lexical form is kept, not just the value: W3C says ``"01"`` and ``"1"``
are different terms (sameTerm), so only spellings that decode back to the
very same characters are encoded here: ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?``
(no ``+``, no leading zeros, no ``-0``; the fraction is kept digit for
digit, so ``"1.50"`` and ``"1.5"`` stay two terms), ``true`` and ``false``.
Everything else (``"+1"``, ``"1e3"``, a value out of range, a dateTime: 27
bits cannot hold one) goes to the dictionary as before.

Encoding a batch's spellings and decoding a column of IDs are whole-array
steps; only building the Python term objects a result reports is per value.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from engine.rdf.terms import KIND_LITERAL, XSD, XSD_BOOLEAN, Literal, Term

#: the lowest value ID; dictionary IDs must stay below it
VALUE_BASE = 1 << 30
_TYPE_SHIFT = 27
_PAYLOAD = (1 << _TYPE_SHIFT) - 1
_INTEGER_OFFSET = 1 << 26
_DIGITS_OFFSET = 1 << 23
_SCALE_SHIFT = 24
_MAX_SCALE = 7

#: type code -> datatype IRI; codes below DECIMAL hold integers, BOOLEAN true/false
TYPES = tuple(XSD + name for name in ("integer", "int", "long", "decimal", "double", "float", "boolean"))
DECIMAL, BOOLEAN = 3, 6
_CODE_OF = {datatype: code for code, datatype in enumerate(TYPES)}
#: the longest lexical form that can fit (sign, 8 digits and a point; 9 for integers)
_MAX_LEXICAL = 11
_NUMBER = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?")
_SUFFIXES = tuple(np.frombuffer(f'"^^<{datatype}>'.encode(), dtype=np.uint8) for datatype in TYPES)
_TRUE, _FALSE = (np.frombuffer(word, dtype=np.uint8) for word in (b"true", b"false"))


def is_value(ids: np.ndarray) -> np.ndarray:
    """Mask of the value IDs in a column of IDs."""
    return np.asarray(ids) >= VALUE_BASE


# ------------------------------------------------------------------ encode
def _pack(code: int | np.ndarray, payload: int | np.ndarray):
    return VALUE_BASE | (np.int64(code) << _TYPE_SHIFT) | payload


def _number_payload(code: int, negative: bool, digits: int, scale: int) -> int | None:
    """The payload of a number (None when it does not fit); ``digits`` is unsigned."""
    signed = -digits if negative else digits
    if code < DECIMAL:
        return signed + _INTEGER_OFFSET if -_INTEGER_OFFSET <= signed < _INTEGER_OFFSET else None
    if scale > _MAX_SCALE or not -_DIGITS_OFFSET <= signed < _DIGITS_OFFSET:
        return None
    return (scale << _SCALE_SHIFT) | (signed + _DIGITS_OFFSET)


def value_id(term: Term) -> int:
    """The value ID of ``term``, or 0 when it has none (not a literal of a
    type here, or a spelling that would not decode back the same)."""
    if term.__class__ is not Literal:
        return 0
    code = _CODE_OF.get(term.datatype)  # type: ignore[union-attr]
    if code is None:
        return 0
    lexical = term.lexical  # type: ignore[union-attr]
    if code == BOOLEAN:
        return int(_pack(code, 1 if lexical == "true" else 0)) if lexical in ("true", "false") else 0
    found = _NUMBER.fullmatch(lexical) if len(lexical) <= _MAX_LEXICAL else None
    if found is None or (code < DECIMAL and found.group(3) is not None):
        return 0
    sign, whole, fraction = found.group(1), found.group(2), found.group(3) or ""
    digits = int(whole + fraction)
    if sign and digits == 0:
        return 0  # "-0": a term apart from "0"
    payload = _number_payload(code, bool(sign), digits, len(fraction))
    return 0 if payload is None else int(_pack(code, payload))


def encode_spans(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The value ID of each N-Triples spelling ``data[starts[i]:][:lengths[i]]``
    (0: none), in whole-array steps: :func:`value_id` of a batch's terms."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros(len(starts), dtype=np.int64)
    if not len(starts) or not len(data):
        return out
    quoted = (lengths > 2) & (data[np.minimum(starts, len(data) - 1)] == ord('"'))
    for code, suffix in enumerate(_SUFFIXES):
        k = len(suffix)
        lexical = lengths - 1 - k
        at = np.flatnonzero(quoted & (lexical >= 1) & (lexical <= _MAX_LEXICAL))
        if not len(at):
            continue
        tail = data[(starts[at] + lengths[at] - k)[:, None] + np.arange(k)]
        at = at[(tail == suffix).all(axis=1)]
        if len(at):
            out[at] = _encode_lexical(data, starts[at] + 1, lexical[at], code)
    return out


def _encode_lexical(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, code: int) -> np.ndarray:
    """Value IDs of lexical forms (at most ``_MAX_LEXICAL`` bytes) of one type (0: none)."""
    width = np.arange(_MAX_LEXICAL)
    inside = width < lengths[:, None]
    chars = np.where(inside, data[np.minimum(starts[:, None] + width, len(data) - 1)], 0)
    if code == BOOLEAN:
        true = (lengths == 4) & (chars[:, :4] == _TRUE).all(axis=1)
        false = (lengths == 5) & (chars[:, :5] == _FALSE).all(axis=1)
        return np.where(true | false, _pack(code, true.astype(np.int64)), 0)
    rows = np.arange(len(starts))
    negative = chars[:, 0] == ord("-")
    body = inside & (width >= negative[:, None])
    digit = body & (chars >= ord("0")) & (chars <= ord("9"))
    point = body & (chars == ord("."))
    ok = ((digit | point) == body).all(axis=1)
    points = point.sum(axis=1)
    at_point = np.where(points == 1, point.argmax(axis=1), lengths)
    whole = at_point - negative
    scale = np.where(points == 1, lengths - at_point - 1, 0)
    ok &= (points <= (0 if code < DECIMAL else 1)) & (whole >= 1) & ((points == 0) | (scale >= 1))
    ok &= (chars[rows, negative.astype(np.int64)] != ord("0")) | (whole == 1)  # no leading zeros
    digits = np.zeros(len(starts), dtype=np.int64)
    for column in range(_MAX_LEXICAL):
        value = chars[:, column].astype(np.int64) - ord("0")
        digits = np.where(digit[:, column], digits * 10 + value, digits)
    ok &= ~(negative & (digits == 0))  # "-0" is a term apart from "0"
    signed = np.where(negative, -digits, digits)
    if code < DECIMAL:
        ok &= (signed >= -_INTEGER_OFFSET) & (signed < _INTEGER_OFFSET)
        payload = signed + _INTEGER_OFFSET
    else:
        ok &= (scale <= _MAX_SCALE) & (signed >= -_DIGITS_OFFSET) & (signed < _DIGITS_OFFSET)
        payload = (scale << _SCALE_SHIFT) | (signed + _DIGITS_OFFSET)
    return np.where(ok, _pack(code, payload), 0)


# ------------------------------------------------------------------ decode
def _fields(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(type code, signed digits, scale) of value IDs."""
    ids = np.asarray(ids, dtype=np.int64)
    code = (ids >> _TYPE_SHIFT) & 7
    payload = ids & _PAYLOAD
    integer = code < DECIMAL
    fraction_digits = (payload & ((1 << _SCALE_SHIFT) - 1)) - _DIGITS_OFFSET
    digits = np.where(integer, payload - _INTEGER_OFFSET, fraction_digits)
    scale = np.where(integer, 0, payload >> _SCALE_SHIFT)
    digits = np.where(code == BOOLEAN, payload, digits)
    return code, digits, np.where(code == BOOLEAN, 0, scale)


@lru_cache(maxsize=65536)
def value_term(term_id: int) -> Literal:
    """The literal a value ID stands for, spelled as it was read."""
    code, digits, scale = (int(a[0]) for a in _fields(np.array([term_id])))
    datatype = TYPES[code]
    if datatype == XSD_BOOLEAN:
        return Literal("true" if digits else "false", datatype)
    if not scale:
        return Literal(str(digits), datatype)
    whole, fraction = divmod(abs(digits), 10**scale)
    return Literal(f"{'-' if digits < 0 else ''}{whole}.{fraction:0{scale}d}", datatype)


def value_terms(ids: np.ndarray) -> list[Literal]:
    """:func:`value_term` of a column of value IDs (each distinct one built once)."""
    distinct, inverse = np.unique(np.asarray(ids, dtype=np.int64), return_inverse=True)
    terms = [value_term(i) for i in distinct.tolist()]
    return [terms[i] for i in inverse.tolist()]


def value_numbers(ids: np.ndarray) -> np.ndarray:
    """The number each value ID stands for (NaN for booleans), as the
    dictionary's numeric side array gives it: ``digits / 10**scale`` is the
    correctly rounded double of the lexical form, as ``float(lexical)`` is."""
    code, digits, scale = _fields(ids)
    return np.where(code == BOOLEAN, np.nan, digits / np.power(10.0, scale))


def value_kinds(ids: np.ndarray) -> np.ndarray:
    """The kind of each value ID: always a literal."""
    return np.full(len(ids), KIND_LITERAL, dtype=np.uint8)
