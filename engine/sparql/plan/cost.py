"""The cost model: how many rows a triple pattern leaves, from the store's statistics.

Like Strider, estimates start from exact counts: the store answers how many
triples match a pattern's constants with one binary search. Each position
that earlier patterns already bind divides that count by the predicate's
average fan-out (distinct subjects or objects). The planner
(:mod:`engine.sparql.plan.bgp_order`) asks again at every greedy step, so the
statistics of a (pattern, graph) pair are cached for one query execution.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from engine.rdf import Term, Variable
from engine.sparql.algebra import TriplePattern
from engine.store import Graph

#: ``estimate(pattern, bound, rows)`` as :func:`order_patterns` takes it
Estimator = Callable[[TriplePattern, set[str], float], float]


class CostModel:
    """Cardinality estimates for one query execution; ``encode`` gives the ID
    of a constant term (a term unknown to the store matches nothing)."""

    def __init__(self, encode: Callable[[Term], int]) -> None:
        self._encode = encode
        self._counts: dict[tuple[int, int], int] = {}
        self._stats_cache: dict[tuple[int, int], tuple[int, int, int]] = {}

    def estimator(self, graph: Graph) -> Estimator:
        """The estimate function for patterns matched against ``graph``."""
        return partial(self.estimate, graph)

    def estimate(self, graph: Graph, pattern: TriplePattern, bound: set[str], rows: float) -> float:
        """Rows after extending ``rows`` rows, whose variables ``bound`` are
        bound, through ``pattern`` in ``graph``: exact counts of the pattern's
        constants, then the average fan-out of the predicate for each position
        already bound."""
        positions = (pattern.subject, pattern.predicate, pattern.object)
        matches = self._matches(graph, pattern)
        if matches == 0:
            return 0.0
        is_bound = [isinstance(t, Variable) and t.name in bound for t in positions]
        if not any(is_bound):
            return rows * matches
        _, subjects, objects = self._pattern_stats(graph, pattern)
        estimate = float(matches)
        if is_bound[0]:
            estimate /= max(subjects, 1)
        if is_bound[2]:
            estimate /= max(objects, 1)
        if is_bound[1]:
            estimate /= max(len(graph) ** 0.5, 1.0)
        return rows * estimate

    def _matches(self, graph: Graph, pattern: TriplePattern) -> int:
        """The triples of ``graph`` that match the pattern's constants; asked
        again at every greedy step, so kept (the one figure of a pattern
        that shares no variable with the rows so far)."""
        key = (id(pattern), id(graph))  # both live as long as this cost model
        found = self._counts.get(key)
        if found is None:
            positions = (pattern.subject, pattern.predicate, pattern.object)
            constants = [None if isinstance(t, Variable) else self._encode(t) for t in positions]
            found = self._counts[key] = graph.count(*constants)
        return found

    def _pattern_stats(self, graph: Graph, pattern: TriplePattern) -> tuple[int, int, int]:
        """(matches of the pattern's constants, distinct subjects and objects of its
        predicate) in ``graph``; kept as the counts are."""
        key = (id(pattern), id(graph))
        found = self._stats_cache.get(key)
        if found is None:
            matches = self._matches(graph, pattern)
            predicate = pattern.predicate
            p = None if isinstance(predicate, Variable) else self._encode(predicate)
            _, subjects, objects = graph.degree_stats(p) if matches else (matches, 1, 1)
            found = self._stats_cache[key] = (matches, subjects, objects)
        return found
