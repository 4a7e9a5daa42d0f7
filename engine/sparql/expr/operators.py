"""SPARQL operators on terms: EBV, ``=``, ordering comparisons, arithmetic.

These follow the operator mapping of SPARQL 1.1 section 17.3: values of
known datatypes (numbers, strings, booleans, dateTimes) are compared by
value with numeric type promotion; any other pair of terms falls back to
RDFterm-equal, which cannot tell two different literals of an unknown
datatype apart and therefore raises an error for them.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

from engine.rdf import XSD_BOOLEAN, XSD_DATETIME, Literal, Term, TripleTerm
from engine.sparql.expr.context import ExprError
from engine.sparql.expr.xsd import (
    DECIMAL,
    DECIMAL_CONTEXT,
    FLOAT,
    NUMERIC_RANKS,
    XSD_DATE,
    Number,
    boolean,
    compare_datetimes,
    datetime_value,
    number_literal,
    numeric,
    promote,
    to_float32,
)

# value categories of literals that operators understand
STRING, LANG_STRING, NUMBER, BOOLEAN, DATETIME, DATE = range(6)
_ORDERED = frozenset((STRING, NUMBER, BOOLEAN, DATETIME, DATE))


def literal_value(term: Literal) -> tuple[int, object] | None:
    """(category, value) of a literal, None for unknown datatypes and ill-formed values."""
    datatype = term.datatype
    if datatype is None:
        if term.lang is None:
            return STRING, term.lexical
        return LANG_STRING, (term.lexical, term.lang.lower())
    if datatype in NUMERIC_RANKS:
        number = numeric(term)
        return None if number is None else (NUMBER, number)
    if datatype == XSD_BOOLEAN:
        truth = boolean(term)
        return None if truth is None else (BOOLEAN, truth)
    if datatype == XSD_DATETIME or datatype == XSD_DATE:
        moment = datetime_value(term)
        if moment is None:
            return None
        return (DATETIME if datatype == XSD_DATETIME else DATE), moment
    return None


def effective_boolean_value(term: Term) -> bool:
    """EBV (SPARQL 1.2, 17.2.2): of simple literals, valid booleans and valid
    numbers; anything else is an error, ill-formed booleans and numbers and
    language-tagged strings included (SPARQL 1.1 made the first two false)."""
    if term.__class__ is Literal:
        datatype = term.datatype  # type: ignore[union-attr]
        if datatype is None and term.lang is None:  # type: ignore[union-attr]
            return term.lexical != ""  # type: ignore[union-attr]
        if datatype == XSD_BOOLEAN:
            value = boolean(term)  # type: ignore[arg-type]
            if value is not None:
                return value
        elif datatype in NUMERIC_RANKS:
            number = numeric(term)  # type: ignore[arg-type]
            if number is not None:
                return number[1] == number[1] and number[1] != 0
    raise ExprError(f"no effective boolean value for {term!r}")


def _promoted(a: tuple[int, Number], b: tuple[int, Number]) -> tuple[Number, Number]:
    rank = a[0] if a[0] > b[0] else b[0]
    if a[0] == b[0]:
        return a[1], b[1]
    return promote(a[1], rank), promote(b[1], rank)


def _compare_same_category(category: int, x: object, y: object) -> int | None:
    """-1/0/1, or None when unordered (NaN); raises when indeterminate."""
    if category == NUMBER:
        left, right = _promoted(x, y)  # type: ignore[arg-type]
        if left < right:
            return -1
        if left > right:
            return 1
        return 0 if left == right else None
    if category == DATETIME or category == DATE:
        result = compare_datetimes(x, y)  # type: ignore[arg-type]
        if result is None:
            raise ExprError("comparison of dateTimes with and without timezone is indeterminate")
        return result
    return (x > y) - (x < y)  # type: ignore[operator]


def term_equal(a: Term, b: Term) -> bool:
    """SPARQL ``=``: value equality for known datatypes, else RDFterm-equal."""
    if a.__class__ is not Literal or b.__class__ is not Literal:
        if a.__class__ is TripleTerm and b.__class__ is TripleTerm:  # SPARQL 1.2: component-wise
            return (term_equal(a.subject, b.subject) and term_equal(a.predicate, b.predicate)  # type: ignore[union-attr]
                    and term_equal(a.object, b.object))  # type: ignore[union-attr]
        return a == b
    va = literal_value(a)  # type: ignore[arg-type]
    vb = literal_value(b)  # type: ignore[arg-type]
    if va is None or vb is None:
        if a == b:
            return True
        raise ExprError(f"cannot tell whether {a!r} and {b!r} are equal")
    if va[0] != vb[0]:
        return False
    if va[0] == LANG_STRING:
        return va[1] == vb[1]
    return _compare_same_category(va[0], va[1], vb[1]) == 0


def compare(a: Term, b: Term) -> int | None:
    """Order two terms for ``<``/``>``/``<=``/``>=``: -1/0/1, None if unordered (NaN).

    Raises ExprError for pairs the operator table does not order (IRIs,
    language-tagged strings, mixed categories, unknown datatypes).
    """
    if a.__class__ is Literal and b.__class__ is Literal:
        va = literal_value(a)  # type: ignore[arg-type]
        vb = literal_value(b)  # type: ignore[arg-type]
        if va is not None and vb is not None and va[0] == vb[0] and va[0] in _ORDERED:
            return _compare_same_category(va[0], va[1], vb[1])
    raise ExprError(f"cannot order {a!r} and {b!r}")


# --------------------------------------------------------------- arithmetic


def number_of(term: Term) -> tuple[int, Number]:
    """(rank, value) of a numeric literal; ExprError for anything else."""
    if term.__class__ is Literal:
        number = numeric(term)  # type: ignore[arg-type]
        if number is not None:
            return number
    raise ExprError(f"not a number: {term!r}")


def _float_divide(x: float, y: float) -> float:
    if y != 0:
        return x / y
    if x != x or x == 0:
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, y)


_DECIMAL_OPS = {"+": DECIMAL_CONTEXT.add, "-": DECIMAL_CONTEXT.subtract, "*": DECIMAL_CONTEXT.multiply}


def arithmetic(op: str, a: Term, b: Term) -> Literal:
    """``+ - * /`` with promotion; integer division yields a decimal."""
    ra, xa = number_of(a)
    rb, xb = number_of(b)
    rank = ra if ra > rb else rb
    x = promote(xa, rank) if ra != rank else xa
    y = promote(xb, rank) if rb != rank else xb
    if op == "/":
        if rank <= DECIMAL:
            if y == 0:
                raise ExprError("division by zero")
            try:
                return number_literal(DECIMAL_CONTEXT.divide(Decimal(x), Decimal(y)), DECIMAL)
            except InvalidOperation as exc:
                raise ExprError(str(exc)) from exc
        result: Number = _float_divide(x, y)  # type: ignore[arg-type]
    elif rank == DECIMAL:
        result = _DECIMAL_OPS[op](x, y)
    elif op == "+":
        result = x + y  # type: ignore[operator]
    elif op == "-":
        result = x - y  # type: ignore[operator]
    else:
        result = x * y  # type: ignore[operator]
    if rank == FLOAT:
        result = to_float32(result)  # type: ignore[arg-type]
    return number_literal(result, rank)


def negate(term: Term) -> Literal:
    """Unary minus, keeping the (base) numeric type."""
    rank, value = number_of(term)
    return number_literal(-value, rank)


def unary_plus(term: Term) -> Literal:
    """Unary plus: a type check that also writes the number in canonical form."""
    rank, value = number_of(term)
    return number_literal(value, rank)
