"""FILTER: keep the solutions where the condition is true.

The condition goes through :func:`engine.sparql.exec.evaluation.truth_mask`,
which takes the vectorised path for the comparisons the planner recognises.
"""

from __future__ import annotations

from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.evaluation import truth_mask
from engine.sparql.exec.solutions import Solutions


def filter_operator(node: A.Filter, cx: ExecutionContext) -> Solutions:
    solutions = cx.run(node.pattern)
    if not solutions.length:
        return solutions
    return solutions.mask(truth_mask(node.condition, solutions, cx))
