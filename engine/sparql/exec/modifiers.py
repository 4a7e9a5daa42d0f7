"""The solution modifiers that keep or drop columns and rows: Project,
DISTINCT and REDUCED (which, as SPARQL allows, removes duplicates too)."""

from __future__ import annotations

from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.solutions import Solutions, distinct


def project(node: A.Project, cx: ExecutionContext) -> Solutions:
    return cx.run(node.pattern).project([v.name for v in node.vars])


def distinct_operator(node: A.Distinct | A.Reduced, cx: ExecutionContext) -> Solutions:
    return distinct(cx.run(node.pattern))
