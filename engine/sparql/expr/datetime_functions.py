"""Date/time builtins: NOW and the accessors of xsd:dateTime values.

Accessors accept ``xsd:dateTime`` (and ``xsd:date`` for the date parts, a
harmless extension); anything else, including an ill-formed dateTime, is a
type error. ``BUILTINS`` follows the convention of
:mod:`engine.sparql.expr.functions`.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.rdf import XSD, XSD_DECIMAL, Literal, Term
from engine.sparql.expr.context import EvalContext, ExprError
from engine.sparql.expr.xsd import DateTimeValue, datetime_value, format_decimal_plain, integer_literal

XSD_DAYTIMEDURATION = XSD + "dayTimeDuration"


def _moment(term: Term) -> DateTimeValue:
    if term.__class__ is Literal:
        value = datetime_value(term)  # type: ignore[arg-type]
        if value is not None:
            return value
    raise ExprError(f"expected an xsd:dateTime, got {term!r}")


def _integer_part(field: str) -> Callable[[EvalContext, Term], Literal]:
    def accessor(ctx: EvalContext, term: Term) -> Literal:
        return integer_literal(getattr(_moment(term), field))

    return accessor


def _seconds(ctx: EvalContext, term: Term) -> Literal:
    return Literal(format_decimal_plain(_moment(term).second), XSD_DECIMAL)


def _timezone(ctx: EvalContext, term: Term) -> Literal:
    """The offset as an xsd:dayTimeDuration (``PT0S``, ``-PT8H``, ``PT5H30M``)."""
    minutes = _moment(term).tz_minutes
    if minutes is None:
        raise ExprError("TIMEZONE of a dateTime without timezone")
    if minutes == 0:
        return Literal("PT0S", XSD_DAYTIMEDURATION)
    hours, rest = divmod(abs(minutes), 60)
    text = ("-" if minutes < 0 else "") + "PT" + (f"{hours}H" if hours else "") + (f"{rest}M" if rest else "")
    return Literal(text, XSD_DAYTIMEDURATION)


def _tz(ctx: EvalContext, term: Term) -> Literal:
    return Literal(_moment(term).tz_text)


def _now(ctx: EvalContext) -> Literal:
    return ctx.now


BUILTINS: dict[str, tuple[Callable[..., Term], int, int]] = {
    "YEAR": (_integer_part("year"), 1, 1),
    "MONTH": (_integer_part("month"), 1, 1),
    "DAY": (_integer_part("day"), 1, 1),
    "HOURS": (_integer_part("hour"), 1, 1),
    "MINUTES": (_integer_part("minute"), 1, 1),
    "SECONDS": (_seconds, 1, 1),
    "TIMEZONE": (_timezone, 1, 1),
    "TZ": (_tz, 1, 1),
    "NOW": (_now, 0, 0),
}
