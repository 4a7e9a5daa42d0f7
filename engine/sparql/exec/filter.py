"""FILTER: keep the solutions where the condition is true.

The condition goes through :func:`engine.sparql.exec.evaluation.truth_mask`,
which takes the vectorised path for the comparisons the planner recognises.
A spatial condition over two sides that share no variable pairs the sides
through an R-tree instead of comparing every pair
(:mod:`engine.sparql.exec.spatial_join`).
"""

from __future__ import annotations

from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.evaluation import truth_mask
from engine.sparql.exec.solutions import Solutions
from engine.sparql.exec.spatial_join import spatial_filter


def filter_operator(node: A.Filter, cx: ExecutionContext) -> Solutions:
    joined = spatial_filter(node, cx)
    if joined is not None:
        return joined
    solutions = cx.run(node.pattern)
    if not solutions.length:
        return solutions
    return solutions.mask(truth_mask(node.condition, solutions, cx))
