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

from engine.rdf import Variable
from engine.sparql.algebra import TriplePattern


def pattern_variables(pattern: TriplePattern) -> set[str]:
    """Names of the variables a triple pattern binds (what connects it to others)."""
    return {t.name for t in (pattern.subject, pattern.predicate, pattern.object) if isinstance(t, Variable)}


def order_patterns(
    patterns: tuple[TriplePattern, ...],
    estimate: Callable[[TriplePattern, set[str], float], float],
    bound: set[str] | None = None,
) -> list[TriplePattern]:
    """Patterns in exploration order. ``estimate(pattern, bound, rows)`` is the
    expected number of rows after extending ``rows`` rows, whose variables
    ``bound`` are bound, through ``pattern``. Greedy: always take the
    connected pattern that leaves the fewest rows."""
    remaining = list(patterns)
    bound = set(bound or ())
    rows = 1.0
    ordered: list[TriplePattern] = []
    while remaining:
        connected = [p for p in remaining if pattern_variables(p) & bound] if bound else []
        candidates = connected or remaining
        costs = [(estimate(p, bound, rows), i) for i, p in enumerate(candidates)]
        rows, best_index = min(costs)
        best = candidates[best_index]
        remaining.remove(best)
        ordered.append(best)
        bound |= pattern_variables(best)
    return ordered
