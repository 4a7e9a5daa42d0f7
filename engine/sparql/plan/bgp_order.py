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
    connected pattern that leaves the fewest rows, unless a pattern that
    shares nothing with the rows so far leaves fewer still: its product with
    them is then smaller than the next connected step (CityBench Q9: three
    observations of one stream times three of the other, rather than every
    observation of the type the first ones have)."""
    remaining = list(patterns)
    bound = set(bound or ())
    rows = 1.0
    ordered: list[TriplePattern] = []
    while remaining:
        costs = [(estimate(p, bound, rows), i) for i, p in enumerate(remaining)]
        connected = [c for c in costs if pattern_variables(remaining[c[1]]) & bound]
        rows, best_index = min(costs)
        if connected and min(connected)[0] <= rows:
            rows, best_index = min(connected)
        best = remaining[best_index]
        remaining.remove(best)
        ordered.append(best)
        bound |= pattern_variables(best)
    return ordered


def connected_groups(
    patterns: tuple[TriplePattern, ...], bound: set[str] | None = None
) -> list[list[TriplePattern]]:
    """The patterns split into groups that share no variable, each in the
    given order. The first group holds the patterns connected to the
    ``bound`` variables (the columns of the rows being extended; empty when
    none is); they must extend those rows, the other groups start afresh."""
    bound = set(bound or ())
    parent = list(range(len(patterns) + 1))  # the last node stands for the bound variables

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = dict.fromkeys(bound, len(patterns))
    for i, pattern in enumerate(patterns):
        for name in pattern_variables(pattern):
            j = owner.setdefault(name, i)
            parent[root(i)] = root(j)
    seeded = root(len(patterns))
    groups: dict[int, list[TriplePattern]] = {seeded: []}
    for i, pattern in enumerate(patterns):
        groups.setdefault(root(i), []).append(pattern)
    return list(groups.values())
