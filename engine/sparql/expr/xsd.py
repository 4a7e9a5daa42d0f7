"""Lexical form <-> value for the XSD datatypes SPARQL operators understand.

Operators and functions need the *value* of a literal (its number, truth
value or instant) and must write results back as literals with stable lexical
forms, because query results are compared term by term. Parsing is cached per
literal since the same terms come back row after row.

Numbers are ``(rank, value)`` pairs: the rank orders the promotion chain
integer < decimal < float < double, the value is an ``int``, ``Decimal`` or
``float`` (floats are kept rounded to single precision).
"""

from __future__ import annotations

import re
import struct
from decimal import Context, Decimal, InvalidOperation
from functools import lru_cache

from engine.rdf import (
    DECIMAL_FORM,
    DOUBLE_FORM,
    INTEGER_FORM,
    XSD,
    XSD_BOOLEAN,
    XSD_DATETIME,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_FLOAT,
    XSD_INTEGER,
    Literal,
)
from engine.sparql.expr.context import ExprError

INTEGER, DECIMAL, FLOAT, DOUBLE = 0, 1, 2, 3

#: integer datatypes with their (min, max) value range; None = unbounded
INTEGER_RANGES: dict[str, tuple[int | None, int | None]] = {
    XSD_INTEGER: (None, None),
    XSD + "nonPositiveInteger": (None, 0),
    XSD + "negativeInteger": (None, -1),
    XSD + "nonNegativeInteger": (0, None),
    XSD + "positiveInteger": (1, None),
    XSD + "long": (-(2**63), 2**63 - 1),
    XSD + "int": (-(2**31), 2**31 - 1),
    XSD + "short": (-(2**15), 2**15 - 1),
    XSD + "byte": (-128, 127),
    XSD + "unsignedLong": (0, 2**64 - 1),
    XSD + "unsignedInt": (0, 2**32 - 1),
    XSD + "unsignedShort": (0, 2**16 - 1),
    XSD + "unsignedByte": (0, 255),
}

NUMERIC_RANKS: dict[str, int] = {dt: INTEGER for dt in INTEGER_RANGES}
NUMERIC_RANKS.update({XSD_DECIMAL: DECIMAL, XSD_FLOAT: FLOAT, XSD_DOUBLE: DOUBLE})

#: decimal arithmetic: wide enough that sums of ordinary data stay exact
DECIMAL_CONTEXT = Context(prec=40)


Number = int | Decimal | float


def to_float32(value: float) -> float:
    """Round a Python float to the nearest single-precision value."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


#: the longest integer (in digits) the engine computes with: Python refuses
#: to convert longer ones between text and numbers (a guard against
#: quadratic work), so a longer xsd:integer is not a number to the engine
#: (its comparisons and arithmetic are type errors) and no result is made longer
MAX_INTEGER_DIGITS = 4000


def parse_number(lexical: str, rank: int) -> Number | None:
    """The value of ``lexical`` in the lexical space of ``rank`` (None if
    invalid, or an integer of more than :data:`MAX_INTEGER_DIGITS` digits)."""
    text = lexical.strip()
    if rank == INTEGER:
        if len(text) > MAX_INTEGER_DIGITS + 1 or not INTEGER_FORM.fullmatch(text):
            return None
        return int(text)
    if rank == DECIMAL:
        return Decimal(text) if DECIMAL_FORM.fullmatch(text) else None
    if not DOUBLE_FORM.fullmatch(text):
        return None
    value = float(text)
    return to_float32(value) if rank == FLOAT else value


@lru_cache(maxsize=1 << 16)
def numeric(term: Literal) -> tuple[int, Number] | None:
    """``(rank, value)`` of a numeric literal; None when not a valid number."""
    rank = NUMERIC_RANKS.get(term.datatype)  # type: ignore[arg-type]
    if rank is None:
        return None
    value = parse_number(term.lexical, rank)
    if value is None:
        return None
    if rank == INTEGER and term.datatype != XSD_INTEGER:
        low, high = INTEGER_RANGES[term.datatype]  # type: ignore[index]
        if (low is not None and value < low) or (high is not None and value > high):
            return None
    return rank, value


def promote(value: Number, rank: int) -> Number:
    """Convert a number to the type of ``rank`` (never down the chain)."""
    if rank == INTEGER:
        return value
    if rank == DECIMAL:
        return value if isinstance(value, Decimal) else Decimal(value)
    if rank == FLOAT:
        return to_float32(float(value))
    return float(value)


# ------------------------------------------------------------------ booleans


@lru_cache(maxsize=64)
def boolean(term: Literal) -> bool | None:
    """The truth value of an ``xsd:boolean`` literal, None if ill-formed."""
    if term.datatype != XSD_BOOLEAN:
        return None
    text = term.lexical.strip()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    return None


TRUE = Literal("true", XSD_BOOLEAN)
FALSE = Literal("false", XSD_BOOLEAN)


def bool_literal(value: bool) -> Literal:
    return TRUE if value else FALSE


# --------------------------------------------------------- writing numbers


def format_decimal(value: Decimal) -> str:
    """Canonical decimal: no exponent, at least one digit after the point."""
    if value.is_zero():
        return "0.0"
    text = format(value.normalize(DECIMAL_CONTEXT), "f")
    return text if "." in text else text + ".0"


def format_decimal_plain(value: Decimal) -> str:
    """Decimal without a forced ``.0`` (the form XPath casts to string use)."""
    if value.is_zero():
        return "0"
    return format(value.normalize(DECIMAL_CONTEXT), "f")


def _shortest_digits(value: float, single: bool) -> tuple[str, int]:
    """Shortest round-tripping digits (with sign) and decimal exponent of a finite nonzero float."""
    text = _float32_repr(value) if single else repr(value)
    sign, digits, exponent = Decimal(text).normalize().as_tuple()
    digit_text = "".join(map(str, digits))
    return ("-" if sign else "") + digit_text, exponent + len(digit_text) - 1  # type: ignore[operator]


def _float32_repr(value: float) -> str:
    """Shortest decimal text that reads back as the same single-precision value."""
    for precision in range(1, 10):
        text = f"{value:.{precision}g}"
        if to_float32(float(text)) == value:
            return text
    return repr(value)


def format_double(value: float, single: bool = False) -> str:
    """Canonical double/float: ``1.5E0``, ``-1.02E4``, ``INF``, ``NaN``, ``0E0``."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "INF" if value > 0 else "-INF"
    if value == 0:
        return "-0E0" if str(value).startswith("-") else "0E0"
    signed, exponent = _shortest_digits(value, single)
    sign = "-" if signed.startswith("-") else ""
    digits = signed.lstrip("-")
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mantissa}E{exponent}"


def number_literal(value: Number, rank: int) -> Literal:
    """A literal of the base type for ``rank`` holding ``value``."""
    if rank == INTEGER:
        return integer_literal(value)  # type: ignore[arg-type]
    if rank == DECIMAL:
        return Literal(format_decimal(value), XSD_DECIMAL)  # type: ignore[arg-type]
    if rank == FLOAT:
        return Literal(format_double(value, single=True), XSD_FLOAT)  # type: ignore[arg-type]
    return Literal(format_double(value), XSD_DOUBLE)  # type: ignore[arg-type]


def integer_literal(value: int) -> Literal:
    """An xsd:integer; an expression error past :data:`MAX_INTEGER_DIGITS`."""
    if value.bit_length() > MAX_INTEGER_DIGITS * 10 // 3:  # 10 bits hold 3 digits
        raise ExprError(f"an integer of more than {MAX_INTEGER_DIGITS} digits")
    return Literal(str(value), XSD_INTEGER)


def decimal_from_float(value: float, single: bool) -> Decimal | None:
    """The decimal a float stands for (its shortest text), None for NaN/INF."""
    if value != value or value in (float("inf"), float("-inf")):
        return None
    try:
        return Decimal(_float32_repr(value) if single else repr(value))
    except InvalidOperation:
        return None


# ----------------------------------------------------------------- dateTimes

XSD_DATE = XSD + "date"

# a year of more than MAX_INTEGER_DIGITS digits is not a value to the engine,
# as such an integer is not (and Python refuses to convert past 4,300 digits)
_YEAR = f"(-?[0-9]{{4,{MAX_INTEGER_DIGITS}}})"
_DATETIME_RE = re.compile(
    _YEAR + r"-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?"
)
_DATE_RE = re.compile(_YEAR + r"-([0-9]{2})-([0-9]{2})(Z|[+-][0-9]{2}:[0-9]{2})?")
_FOURTEEN_HOURS = 14 * 3600


class DateTimeValue:
    """A parsed ``xsd:dateTime`` (or ``xsd:date``, as midnight).

    ``instant`` is seconds since 0000-03-01 on the UTC time line; for values
    without a timezone it is the local time read as if it were UTC, which is
    what the XSD partial order needs (see :func:`compare_datetimes`).
    """

    __slots__ = ("year", "month", "day", "hour", "minute", "second", "tz_minutes", "tz_text", "instant")

    def __init__(
        self, year: int, month: int, day: int, hour: int, minute: int, second: Decimal, tz_text: str
    ) -> None:
        self.year, self.month, self.day = year, month, day
        self.hour, self.minute, self.second = hour, minute, second
        self.tz_text = tz_text
        if not tz_text:
            self.tz_minutes: int | None = None
        elif tz_text == "Z":
            self.tz_minutes = 0
        else:
            sign = -1 if tz_text[0] == "-" else 1
            self.tz_minutes = sign * (int(tz_text[1:3]) * 60 + int(tz_text[4:6]))
        local = (_days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60) + second
        self.instant = local - (self.tz_minutes or 0) * 60


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Day number in the proleptic Gregorian calendar (any year, no datetime limits)."""
    shifted_year = year - (1 if month <= 2 else 0)
    era = shifted_year // 400
    year_of_era = shifted_year - era * 400
    day_of_year = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _next_day(year: int, month: int, day: int) -> tuple[int, int, int]:
    """The following calendar day (24:00:00 is midnight of the next day)."""
    if day < _days_in_month(year, month):
        return year, month, day + 1
    if month < 12:
        return year, month + 1, 1
    return year + 1, 1, 1


def _valid_timezone(tz_text: str | None) -> bool:
    if not tz_text or tz_text == "Z":
        return True
    hours, minutes = int(tz_text[1:3]), int(tz_text[4:6])
    return minutes < 60 and hours * 60 + minutes <= 14 * 60


@lru_cache(maxsize=1 << 14)
def datetime_value(term: Literal) -> DateTimeValue | None:
    """The value of an ``xsd:dateTime`` or ``xsd:date`` literal, None if ill-formed."""
    if term.datatype == XSD_DATETIME:
        match = _DATETIME_RE.fullmatch(term.lexical.strip())
        if match is None:
            return None
        year, month, day, hour, minute = (int(match.group(i)) for i in range(1, 6))
        second = Decimal(match.group(6))
        tz_text = match.group(7)
    elif term.datatype == XSD_DATE:
        match = _DATE_RE.fullmatch(term.lexical.strip())
        if match is None:
            return None
        year, month, day = (int(match.group(i)) for i in range(1, 4))
        hour = minute = 0
        second = Decimal(0)
        tz_text = match.group(4)
    else:
        return None
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month) and minute < 60 and second < 60):
        return None
    if hour > 24 or (hour == 24 and (minute or second)) or not _valid_timezone(tz_text):
        return None
    if hour == 24:
        year, month, day, hour = *_next_day(year, month, day), 0
    return DateTimeValue(year, month, day, hour, minute, second, tz_text or "")


def compare_datetimes(a: DateTimeValue, b: DateTimeValue) -> int | None:
    """-1/0/1 per the XSD partial order, None when indeterminate.

    A value without timezone may lie anywhere in a 28-hour window around its
    local reading, so against a zoned value the answer is only known when the
    two are more than 14 hours apart.
    """
    if (a.tz_minutes is None) == (b.tz_minutes is None):
        return (a.instant > b.instant) - (a.instant < b.instant)
    if a.tz_minutes is None:
        flipped = compare_datetimes(b, a)
        return None if flipped is None else -flipped
    if a.instant < b.instant - _FOURTEEN_HOURS:
        return -1
    if a.instant > b.instant + _FOURTEEN_HOURS:
        return 1
    return None
