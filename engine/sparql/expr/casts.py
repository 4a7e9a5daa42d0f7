"""XSD constructor functions (``xsd:integer(?x)`` ...): the cast table of 17.5.

Casting from a string parses it in the target's lexical space (so
``xsd:integer("1.0")`` is an error while ``xsd:double("1")`` is not);
casting between numbers converts the value (truncating towards zero into
integers); casting to ``xsd:string`` writes values the way XPath does
(``1.0`` becomes ``"1"``, ``1E7`` stays in exponent form). Anything the table
does not allow raises ExprError.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal

from engine.rdf import (
    IRI,
    XSD_BOOLEAN,
    XSD_DATETIME,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_FLOAT,
    XSD_INTEGER,
    XSD_STRING,
    Literal,
    Term,
)
from engine.sparql.expr.context import ExprError
from engine.sparql.expr.xsd import (
    DECIMAL,
    DOUBLE,
    FLOAT,
    INTEGER,
    INTEGER_RANGES,
    XSD_DATE,
    Number,
    bool_literal,
    boolean,
    datetime_value,
    decimal_from_float,
    format_decimal_plain,
    format_double,
    number_literal,
    numeric,
    parse_number,
    to_float32,
)


def _source_value(term: Literal) -> tuple[str, object]:
    """Classify a literal being cast: ("string", trimmed text), ("number", (rank, value)),
    ("boolean", truth) or (its datatype, the literal) for dateTimes and dates."""
    if term.datatype is None:
        if term.lang is not None:
            raise ExprError("cannot cast a language-tagged string")
        return "string", term.lexical.strip()
    number = numeric(term)
    if number is not None:
        return "number", number
    truth = boolean(term)
    if truth is not None:
        return "boolean", truth
    if datetime_value(term) is not None:
        return term.datatype, term
    raise ExprError(f"cannot cast {term!r}")


def _to_string(term: Term) -> Literal:
    if term.__class__ is IRI:
        return Literal(term.value)  # type: ignore[union-attr]
    if term.__class__ is not Literal:
        raise ExprError("cannot cast a blank node")
    number = numeric(term)  # type: ignore[arg-type]
    if number is not None:
        return Literal(_number_text(*number))
    truth = boolean(term)  # type: ignore[arg-type]
    if truth is not None:
        return Literal("true" if truth else "false")
    return Literal(term.lexical)  # type: ignore[union-attr]


def _number_text(rank: int, value: Number) -> str:
    """XPath's number-to-string: plain notation between 1e-6 and 1e6, else E notation."""
    if rank == INTEGER:
        return str(value)
    if rank == DECIMAL:
        return format_decimal_plain(value)  # type: ignore[arg-type]
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"  # type: ignore[arg-type]
    if math.isfinite(value) and 1e-6 <= abs(value) < 1e6:  # type: ignore[arg-type]
        return format_decimal_plain(decimal_from_float(value, rank == FLOAT))  # type: ignore[arg-type]
    return format_double(value, single=rank == FLOAT)  # type: ignore[arg-type]


def _to_boolean(term: Term) -> Literal:
    kind, value = _literal_source(term)
    if kind == "string":
        if value in ("true", "1"):
            return bool_literal(True)
        if value in ("false", "0"):
            return bool_literal(False)
        raise ExprError(f"cannot cast {value!r} to xsd:boolean")
    if kind == "number":
        number = value[1]  # type: ignore[index]
        return bool_literal(number == number and number != 0)
    if kind == "boolean":
        return bool_literal(value)  # type: ignore[arg-type]
    raise ExprError("cannot cast to xsd:boolean")


def _literal_source(term: Term) -> tuple[str, object]:
    if term.__class__ is not Literal:
        raise ExprError(f"cannot cast {term!r}")
    return _source_value(term)  # type: ignore[arg-type]


def _numeric_target(rank: int) -> Callable[[Term], Literal]:
    def cast(term: Term) -> Literal:
        kind, value = _literal_source(term)
        if kind == "string":
            parsed = parse_number(value, rank)  # type: ignore[arg-type]
            if parsed is None:
                raise ExprError(f"cannot cast {value!r} to a number")
            return number_literal(parsed, rank)
        if kind == "boolean":
            return number_literal(_convert(int(value), INTEGER, rank), rank)  # type: ignore[call-overload]
        if kind == "number":
            source_rank, number = value  # type: ignore[misc]
            return number_literal(_convert(number, source_rank, rank), rank)
        raise ExprError("cannot cast to a number")

    return cast


def _convert(value: Number, source_rank: int, rank: int) -> Number:
    """Convert a number between numeric types, failing for NaN/INF into exact types."""
    if rank >= FLOAT:
        return to_float32(float(value)) if rank == FLOAT else float(value)
    if source_rank >= FLOAT:
        exact = decimal_from_float(value, source_rank == FLOAT)  # type: ignore[arg-type]
        if exact is None:
            raise ExprError("cannot cast NaN or INF to an exact number")
        value = exact
    if rank == INTEGER:
        return int(value)
    return Decimal(value)


def _integer_subtype(datatype: str) -> Callable[[Term], Literal]:
    low, high = INTEGER_RANGES[datatype]
    to_integer = _numeric_target(INTEGER)

    def cast(term: Term) -> Literal:
        value = int(to_integer(term).lexical)
        if (low is not None and value < low) or (high is not None and value > high):
            raise ExprError(f"{value} out of range for {datatype}")
        return Literal(str(value), datatype)

    return cast


def _to_datetime(term: Term) -> Literal:
    kind, value = _literal_source(term)
    if kind == "string":
        candidate = Literal(value, XSD_DATETIME)  # type: ignore[arg-type]
        if datetime_value(candidate) is None:
            raise ExprError(f"cannot cast {value!r} to xsd:dateTime")
        return candidate
    if kind == XSD_DATETIME:
        return value  # type: ignore[return-value]
    if kind == XSD_DATE:
        text = value.lexical.strip()  # type: ignore[attr-defined]
        tz_text = datetime_value(value).tz_text  # type: ignore[arg-type, union-attr]
        return Literal(f"{text[: len(text) - len(tz_text)]}T00:00:00{tz_text}", XSD_DATETIME)
    raise ExprError("cannot cast to xsd:dateTime")


CASTS: dict[str, Callable[[Term], Term]] = {
    XSD_STRING: _to_string,
    XSD_BOOLEAN: _to_boolean,
    XSD_INTEGER: _numeric_target(INTEGER),
    XSD_DECIMAL: _numeric_target(DECIMAL),
    XSD_FLOAT: _numeric_target(FLOAT),
    XSD_DOUBLE: _numeric_target(DOUBLE),
    XSD_DATETIME: _to_datetime,
}
CASTS.update({dt: _integer_subtype(dt) for dt in INTEGER_RANGES if dt != XSD_INTEGER})
