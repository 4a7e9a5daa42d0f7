"""Join order for basic graph patterns, from exact cardinalities.

Like Strider, the planner asks the store for the exact number of triples that
match each pattern's constants (one binary search each), then explores the
graph Wukong-style: start at the most selective pattern and always extend
through a pattern connected to what is already bound, cheapest first. A
pattern whose constant is unknown to the store matches nothing, so it goes
first and the whole BGP ends at once.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.sparql.algebra import TriplePattern
from engine.terms import Variable


def pattern_variables(pattern: TriplePattern) -> set[str]:
    return {t.name for t in (pattern.subject, pattern.predicate, pattern.object) if isinstance(t, Variable)}


def order_patterns(
    patterns: tuple[TriplePattern, ...],
    cardinality: Callable[[TriplePattern], int],
    bound: set[str] | None = None,
) -> list[TriplePattern]:
    """Patterns in exploration order. ``bound`` names variables bound before the BGP."""
    remaining = list(patterns)
    costs = {id(p): cardinality(p) for p in remaining}
    bound = set(bound or ())
    ordered: list[TriplePattern] = []
    while remaining:
        connected = [p for p in remaining if pattern_variables(p) & bound]
        candidates = connected or remaining
        best = min(candidates, key=lambda p: _cost(p, costs[id(p)], bound))
        remaining.remove(best)
        ordered.append(best)
        bound |= pattern_variables(best)
    return ordered


def _cost(pattern: TriplePattern, constant_cardinality: int, bound: set[str]) -> tuple[int, int]:
    """A pattern whose variables are all bound only checks rows (cost 0); else
    its cardinality, then the fewer free variables the better."""
    free = len(pattern_variables(pattern) - bound)
    return (constant_cardinality if free else 0, free)
