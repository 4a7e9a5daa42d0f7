"""Set functions over the solutions of one group (SPARQL 1.1 section 18.5.1).

Rows whose expression raises an error (an unbound variable, a type error)
are left out of the multiset, as most engines do; an error while combining
the values (SUM of a non-number, GROUP_CONCAT of an IRI) makes the whole
aggregate an error, returned as None so the executor leaves it unbound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from engine.rdf import Literal, Term, Variable
from engine.sparql.algebra import Aggregate
from engine.sparql.expr.evaluate import EvalContext, ExprError, evaluate, order_key
from engine.sparql.expr.operators import arithmetic
from engine.sparql.expr.xsd import INTEGER, integer_literal, number_literal, numeric

Row = Mapping[Variable, Term]
_ZERO = integer_literal(0)


def compute_aggregate(agg: Aggregate, rows: Sequence[Row], ctx: EvalContext) -> Term | None:
    """The value of ``agg`` over the rows of one group; None means unbound."""
    name = agg.name.upper()
    if agg.expr is None:
        if name != "COUNT":
            return None
        count = len({frozenset(row.items()) for row in rows}) if agg.distinct else len(rows)
        return integer_literal(count)
    values: list[Term] = []
    for row in rows:
        ctx.new_row()
        try:
            values.append(evaluate(agg.expr, row, ctx))
        except ExprError:
            continue
    if agg.distinct:
        values = list(dict.fromkeys(values))
    function = _FUNCTIONS.get(name)
    if function is None:
        return None
    try:
        return function(values, agg)
    except ExprError:
        return None


def _count(values: list[Term], agg: Aggregate) -> Term:
    return integer_literal(len(values))


def _sum(values: list[Term], agg: Aggregate) -> Term:
    if not values:
        return _ZERO
    total = arithmetic("+", _ZERO, values[0])
    for value in values[1:]:
        total = arithmetic("+", total, value)
    return total


def _avg(values: list[Term], agg: Aggregate) -> Term:
    if not values:
        return _ZERO
    return arithmetic("/", _sum(values, agg), integer_literal(len(values)))


def _extreme(values: list[Term], pick: Callable[..., Term]) -> Term | None:
    """MIN/MAX by ORDER BY order; a number comes back in canonical form, so
    equal values written differently ("2E-1", "0.20E0") give one answer."""
    if not values:
        return None
    return canonical_number(pick(values, key=order_key))


def canonical_number(term: Term) -> Term:
    """A numeric literal in canonical form, keeping an integer subtype
    (``"05"^^xsd:int`` -> ``"5"^^xsd:int``); any other term as it is."""
    if term.__class__ is Literal:
        number = numeric(term)  # type: ignore[arg-type]
        if number is not None:
            rank, value = number
            return Literal(str(value), term.datatype) if rank == INTEGER else number_literal(value, rank)
    return term


def _min(values: list[Term], agg: Aggregate) -> Term | None:
    return _extreme(values, min)


def _max(values: list[Term], agg: Aggregate) -> Term | None:
    return _extreme(values, max)


def _sample(values: list[Term], agg: Aggregate) -> Term | None:
    return values[0] if values else None


def _group_concat(values: list[Term], agg: Aggregate) -> Term:
    """Joins lexical forms; the result is a simple literal (as the W3C tests expect)."""
    texts = []
    for value in values:
        if value.__class__ is not Literal:
            raise ExprError("GROUP_CONCAT of a non-literal")
        texts.append(value.lexical)  # type: ignore[union-attr]
    return Literal(agg.separator.join(texts))


_FUNCTIONS: dict[str, Callable[[list[Term], Aggregate], Term | None]] = {
    "COUNT": _count,
    "SUM": _sum,
    "AVG": _avg,
    "MIN": _min,
    "MAX": _max,
    "SAMPLE": _sample,
    "GROUP_CONCAT": _group_concat,
}
