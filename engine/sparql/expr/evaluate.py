"""Evaluate SPARQL expressions against one solution.

``evaluate`` dispatches on the expression class through a dict (it runs for
every row, so no if-chains); operators live in
:mod:`engine.sparql.expr.operators`, builtins in :mod:`engine.sparql.expr.functions`
and :mod:`engine.sparql.expr.datetime_functions`, casts in
:mod:`engine.sparql.expr.casts`, GeoSPARQL's ``geof:`` functions in
:mod:`engine.sparql.expr.geosparql`. The special forms that must control evaluation
of their arguments (``||``, ``&&``, IN, BOUND, IF, COALESCE, EXISTS) are here.

Errors are raised as :class:`ExprError`; the caller decides what an error
means (FILTER: false; BIND: unbound).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from engine.rdf import Term, Variable
from engine.sparql.algebra import (
    BinaryExpr,
    CallExpr,
    ExistsExpr,
    Expr,
    FunctionExpr,
    InExpr,
    TermExpr,
    UnaryExpr,
    VarExpr,
)
from engine.sparql.expr import datetime_functions, functions
from engine.sparql.expr.casts import CASTS
from engine.sparql.expr.context import EvalContext, ExprError
from engine.sparql.expr.geosparql import GEOSPARQL
from engine.sparql.expr.operators import (
    arithmetic,
    compare,
    effective_boolean_value,
    negate,
    term_equal,
    unary_plus,
)
from engine.sparql.expr.ordering import order_key
from engine.sparql.expr.xsd import FALSE, TRUE, bool_literal

__all__ = [
    "EvalContext",
    "ExprError",
    "effective_boolean_value",
    "evaluate",
    "order_key",
    "term_equal",
]

Row = Mapping[Variable, Term]

BUILTINS = {**functions.BUILTINS, **datetime_functions.BUILTINS}


def evaluate(expr: Expr, row: Row, ctx: EvalContext) -> Term:
    """The value of ``expr`` in solution ``row`` (a missing key is unbound)."""
    return _HANDLERS[expr.__class__](expr, row, ctx)


def _term(expr: TermExpr, row: Row, ctx: EvalContext) -> Term:
    return expr.term


def _var(expr: VarExpr, row: Row, ctx: EvalContext) -> Term:
    value = row.get(expr.var)
    if value is None:
        raise ExprError(f"unbound variable ?{expr.var.name}")
    return value


# ---------------------------------------------------------------- operators


def _truth(expr: Expr, row: Row, ctx: EvalContext) -> bool | ExprError:
    """EBV of an operand, with the error returned instead of raised."""
    try:
        return effective_boolean_value(evaluate(expr, row, ctx))
    except ExprError as error:
        return error


def _or(expr: BinaryExpr, row: Row, ctx: EvalContext) -> Term:
    left = _truth(expr.left, row, ctx)
    if left is True:
        return TRUE
    right = _truth(expr.right, row, ctx)
    if right is True:
        return TRUE
    if left is False and right is False:
        return FALSE
    raise left if isinstance(left, ExprError) else right  # type: ignore[misc]


def _and(expr: BinaryExpr, row: Row, ctx: EvalContext) -> Term:
    left = _truth(expr.left, row, ctx)
    if left is False:
        return FALSE
    right = _truth(expr.right, row, ctx)
    if right is False:
        return FALSE
    if left is True and right is True:
        return TRUE
    raise left if isinstance(left, ExprError) else right  # type: ignore[misc]


def _not_equal(a: Term, b: Term) -> Term:
    return bool_literal(not term_equal(a, b))


def _ordering(test: Callable[[int], bool]) -> Callable[[Term, Term], Term]:
    def apply(a: Term, b: Term) -> Term:
        result = compare(a, b)
        return bool_literal(result is not None and test(result))

    return apply


def _arithmetic(op: str) -> Callable[[Term, Term], Term]:
    def apply(a: Term, b: Term) -> Term:
        return arithmetic(op, a, b)

    return apply


_BINARY: dict[str, Callable[[Term, Term], Term]] = {
    "=": lambda a, b: bool_literal(term_equal(a, b)),
    "!=": _not_equal,
    "<": _ordering(lambda r: r < 0),
    ">": _ordering(lambda r: r > 0),
    "<=": _ordering(lambda r: r <= 0),
    ">=": _ordering(lambda r: r >= 0),
    "+": _arithmetic("+"),
    "-": _arithmetic("-"),
    "*": _arithmetic("*"),
    "/": _arithmetic("/"),
}

_LOGICAL = {"||": _or, "&&": _and}


def _binary(expr: BinaryExpr, row: Row, ctx: EvalContext) -> Term:
    logical = _LOGICAL.get(expr.op)
    if logical is not None:
        return logical(expr, row, ctx)
    operator = _BINARY.get(expr.op)
    if operator is None:
        raise ExprError(f"unknown operator {expr.op}")
    return operator(evaluate(expr.left, row, ctx), evaluate(expr.right, row, ctx))


_UNARY: dict[str, Callable[[Term], Term]] = {
    "!": lambda term: bool_literal(not effective_boolean_value(term)),
    "-": negate,
    "+": unary_plus,
}


def _unary(expr: UnaryExpr, row: Row, ctx: EvalContext) -> Term:
    return _UNARY[expr.op](evaluate(expr.operand, row, ctx))


def _in(expr: InExpr, row: Row, ctx: EvalContext) -> Term:
    """IN is an error-tolerant ``||`` of ``=`` tests (17.4.1.9); NOT IN its negation."""
    needle = evaluate(expr.expr, row, ctx)
    error: ExprError | None = None
    for option in expr.options:
        try:
            if term_equal(needle, evaluate(option, row, ctx)):
                return FALSE if expr.negated else TRUE
        except ExprError as exc:
            error = exc
    if error is not None:
        raise error
    return TRUE if expr.negated else FALSE


def _exists(expr: ExistsExpr, row: Row, ctx: EvalContext) -> Term:
    if ctx.exists is None:
        raise ExprError("EXISTS needs an executor (EvalContext.exists is not set)")
    found = ctx.exists(expr.pattern, row)
    return bool_literal(found != expr.negated)


# ------------------------------------------------------------------- calls


def _bound(expr: CallExpr, row: Row, ctx: EvalContext) -> Term:
    if len(expr.args) != 1 or expr.args[0].__class__ is not VarExpr:
        raise ExprError("BOUND takes one variable")
    return bool_literal(row.get(expr.args[0].var) is not None)  # type: ignore[union-attr]


def _if(expr: CallExpr, row: Row, ctx: EvalContext) -> Term:
    if len(expr.args) != 3:
        raise ExprError("IF takes three arguments")
    condition = effective_boolean_value(evaluate(expr.args[0], row, ctx))
    return evaluate(expr.args[1] if condition else expr.args[2], row, ctx)


def _coalesce(expr: CallExpr, row: Row, ctx: EvalContext) -> Term:
    for arg in expr.args:
        try:
            return evaluate(arg, row, ctx)
        except ExprError:
            continue
    raise ExprError("COALESCE: no argument has a value")


_SPECIAL_FORMS: dict[str, Callable[[CallExpr, Row, EvalContext], Term]] = {
    "BOUND": _bound,
    "IF": _if,
    "COALESCE": _coalesce,
}


def _call(expr: CallExpr, row: Row, ctx: EvalContext) -> Term:
    entry = BUILTINS.get(expr.name)
    if entry is None:
        special = _SPECIAL_FORMS.get(expr.name)
        if special is None:
            raise ExprError(f"unknown function {expr.name}")
        return special(expr, row, ctx)
    function, least, most = entry
    if not least <= len(expr.args) <= most:
        raise ExprError(f"wrong number of arguments to {expr.name}")
    return function(ctx, *[evaluate(arg, row, ctx) for arg in expr.args])


def _function(expr: FunctionExpr, row: Row, ctx: EvalContext) -> Term:
    cast = CASTS.get(expr.iri)
    if cast is None:
        extension = ctx.functions.get(expr.iri) or GEOSPARQL.get(expr.iri)
        if extension is not None:
            return extension(*[evaluate(arg, row, ctx) for arg in expr.args])
        raise ExprError(f"unknown function <{expr.iri}>")
    if len(expr.args) != 1:
        raise ExprError(f"<{expr.iri}> takes one argument")
    return cast(evaluate(expr.args[0], row, ctx))


_HANDLERS: dict[type, Callable[..., Term]] = {
    TermExpr: _term,
    VarExpr: _var,
    BinaryExpr: _binary,
    UnaryExpr: _unary,
    InExpr: _in,
    CallExpr: _call,
    FunctionExpr: _function,
    ExistsExpr: _exists,
}
