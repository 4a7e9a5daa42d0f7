"""Matching RDF 1.2 triple terms that hold variables (``?x :p <<( ?s :q ?o )>>``).

The store indexes a triple term by its ID like any other term, so a BGP
cannot look inside one. A triple term pattern with variables is therefore
replaced by a fresh variable ``?t`` in its triple, and after the BGP the
solutions keep only those whose ``?t`` is a triple term
(``isTRIPLE(?t)``) with the pattern's components: a component variable
seen for the first time is bound by ``SUBJECT(?t)`` / ``PREDICATE(?t)`` /
``OBJECT(?t)`` (an Extend), one already bound (elsewhere in the BGP, or
earlier in the term) must be the same term, as must a constant component;
nested patterns are taken apart the same way. This is the substitution
semantics of SPARQL 1.2's BGP matching, in the algebra the executor has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from engine.rdf import Variable
from engine.sparql.algebra import (
    BinaryExpr,
    CallExpr,
    Expr,
    Extend,
    Filter,
    PathPattern,
    Pattern,
    TermExpr,
    TriplePattern,
    TripleTermPattern,
    VarExpr,
)

Fresh = Callable[[], Variable]
Item = TriplePattern | PathPattern

_COMPONENTS = ("SUBJECT", "PREDICATE", "OBJECT")


def pattern_vars(term: object, out: dict[str, None]) -> None:
    """Add the variables of a term or triple term pattern to ``out`` (in order)."""
    if term.__class__ is Variable:
        out[term.name] = None  # type: ignore[attr-defined]
    elif term.__class__ is TripleTermPattern:
        for part in (term.subject, term.predicate, term.object):  # type: ignore[attr-defined]
            pattern_vars(part, out)


def replace_triple_terms(items: Iterable[Item], fresh: Fresh
                         ) -> tuple[list[Item], list[tuple[Variable, TripleTermPattern]]]:
    """The triples with each triple term pattern in subject or object
    position replaced by a fresh variable, and those (variable, pattern) pairs."""
    found: list[tuple[Variable, TripleTermPattern]] = []

    def plain(term: object) -> object:
        if term.__class__ is TripleTermPattern:
            var = fresh()
            found.append((var, term))  # type: ignore[arg-type]
            return var
        return term

    out: list[Item] = []
    for item in items:
        if item.__class__ is TriplePattern:
            if item.subject.__class__ is TripleTermPattern or item.object.__class__ is TripleTermPattern:
                item = TriplePattern(plain(item.subject), item.predicate, plain(item.object))  # type: ignore
        elif item.subject.__class__ is TripleTermPattern or item.object.__class__ is TripleTermPattern:
            item = PathPattern(plain(item.subject), item.path, plain(item.object))  # type: ignore
        out.append(item)
    return out, found


def take_apart(pattern: Pattern, found: list[tuple[Variable, TripleTermPattern]],
               bound: dict[str, None], fresh: Fresh) -> Pattern:
    """``pattern`` (whose solutions bind each ``found`` variable) restricted to
    the solutions where that variable is a triple term matching its pattern,
    with the component variables bound; ``bound`` holds the variables the
    pattern already binds (it is extended)."""
    if not found:
        return pattern
    # the top-level variables are bound by ``pattern``: checked first, as taking
    # apart what is no triple term is an error; nested ones are checked at the end
    first: list[Expr] = [CallExpr("ISTRIPLE", (VarExpr(var),)) for var, _ in found]
    checks: list[Expr] = []
    extends: list[tuple[Variable, Expr]] = []
    pending = list(found)
    for var, _ in found:
        bound[var.name] = None
    while pending:
        var, term = pending.pop(0)
        for name, part in zip(_COMPONENTS, (term.subject, term.predicate, term.object), strict=True):
            value: Expr = CallExpr(name, (VarExpr(var),))
            if part.__class__ is Variable:
                if part.name in bound:  # type: ignore[union-attr]
                    checks.append(CallExpr("SAMETERM", (value, VarExpr(part))))  # type: ignore[arg-type]
                else:
                    bound[part.name] = None  # type: ignore[union-attr]
                    extends.append((part, value))  # type: ignore[arg-type]
            elif part.__class__ is TripleTermPattern:
                inner = fresh()
                bound[inner.name] = None
                extends.append((inner, value))
                checks.append(CallExpr("ISTRIPLE", (VarExpr(inner),)))
                pending.append((inner, part))  # type: ignore[arg-type]
            else:
                checks.append(CallExpr("SAMETERM", (value, TermExpr(part))))  # type: ignore[arg-type]
    result: Pattern = Filter(_all(first), pattern)
    for var, expr in extends:
        result = Extend(result, var, expr)
    return Filter(_all(checks), result) if checks else result


def _all(conditions: list[Expr]) -> Expr:
    result = conditions[0]
    for condition in conditions[1:]:
        result = BinaryExpr("&&", result, condition)
    return result
