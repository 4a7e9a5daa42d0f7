"""Cycles in a BGP: two patterns that close one on the same variable.

When the rows so far bind everything in two patterns but one variable they
share (LSBench L6: ``?user foaf:knows ?friend`` and ``?user
sioc:subscriber_of ?channel`` once ``?friend`` and ``?channel`` are bound),
expanding the first pattern and probing the second builds every candidate of
the first, however few survive. The executor instead intersects both
patterns' candidate lists per row (a worst-case-optimal step,
:mod:`engine.sparql.exec.intersection`); this module only recognises the
shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engine.rdf import Variable
from engine.sparql.algebra import TriplePattern


@dataclass(frozen=True, slots=True)
class ClosingPair:
    """``first`` and ``second`` each leave only ``variable`` free."""

    first: TriplePattern
    second: TriplePattern
    variable: str


def _sole_free(pattern: TriplePattern, bound: Iterable[str]) -> str | None:
    """The pattern's only unbound variable, when it has exactly one (in one
    position) and at least one bound variable; None otherwise."""
    names = [t.name for t in (pattern.subject, pattern.predicate, pattern.object) if isinstance(t, Variable)]
    free = [n for n in names if n not in bound]
    if len(free) != 1 or len(free) == len(names):
        return None
    return free[0]


def closing_pair(pattern: TriplePattern, later: Iterable[TriplePattern],
                 bound: Iterable[str]) -> ClosingPair | None:
    """``pattern`` and the first of the ``later`` patterns that closes a cycle
    with it over the ``bound`` variables; None when there is none."""
    bound = set(bound)
    variable = _sole_free(pattern, bound)
    if variable is None:
        return None
    for other in later:
        if _sole_free(other, bound) == variable:
            return ClosingPair(pattern, other, variable)
    return None
