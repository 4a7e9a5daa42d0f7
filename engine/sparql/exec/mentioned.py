"""The variables a pattern names outside EXISTS.

Three places ask it: the columns of an empty join result, whether two sides
of a join share a variable (a spatial filter may pair them through an index
only when they share none), and what a bind join continuing from a side may
find bound (EXPLAIN). An EXISTS inside a side is evaluated against that
side's own rows, so its variables are not the side's.
"""

from __future__ import annotations

import dataclasses

from engine.rdf import Variable
from engine.sparql import algebra as A


def mentioned_variables(node: object) -> dict[str, None]:
    """Every variable named in ``node`` outside EXISTS, in the order met (a
    dict as an ordered set)."""
    names: dict[str, None] = {}
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Variable):
            names[item.name] = None
        elif isinstance(item, tuple):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, A.ExistsExpr):
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
    return names
