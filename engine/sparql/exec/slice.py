"""OFFSET and LIMIT, with the LIMIT pushed into a BGP when the planner allows it.

For the shapes :func:`engine.sparql.plan.limited_bgp` accepts, the BGP is
explored a chunk of its first pattern at a time, each chunk filtered, until
enough solutions are found; otherwise the pattern runs whole and is cut.
"""

from __future__ import annotations

import numpy as np

from engine.sparql import algebra as A
from engine.sparql.exec.bgp import bgp_chunks, no_solutions
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.evaluation import truth_mask
from engine.sparql.exec.solutions import Solutions, concat
from engine.sparql.plan import limited_bgp


def slice_operator(node: A.Slice, cx: ExecutionContext) -> Solutions:
    end = None if node.limit is None else node.offset + node.limit
    solutions = _first_solutions(node.pattern, end, cx) if end is not None else None
    if solutions is None:
        solutions = cx.run(node.pattern)
    return solutions.take(np.arange(solutions.length)[node.offset : end])


def _first_solutions(node: A.Pattern, needed: int, cx: ExecutionContext) -> Solutions | None:
    """At least ``needed`` solutions of ``node`` (all when it has fewer), found
    chunk by chunk; None when the pattern has another shape."""
    shape = limited_bgp(node)
    if shape is None:
        return None
    parts, found = [], 0
    for chunk in bgp_chunks(shape.bgp, cx):
        for condition in shape.conditions:
            if chunk.length:
                chunk = chunk.mask(truth_mask(condition, chunk, cx))
        parts.append(chunk)
        found += chunk.length
        if found >= needed:
            break
    solutions = concat(parts) if found else no_solutions(shape.bgp, Solutions.unit())
    return solutions.project([v.name for v in shape.project]) if shape.project is not None else solutions
