"""VALUES: inline data as solutions (UNDEF is an unbound value)."""

from __future__ import annotations

from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.solutions import Solutions


def values(node: A.Values, cx: ExecutionContext) -> Solutions:
    columns = {}
    for i, var in enumerate(node.vars):
        columns[var.name] = cx.terms.encode_column([row[i] for row in node.rows])
    return Solutions(columns, len(node.rows))
