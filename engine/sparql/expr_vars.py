"""Which variables an expression reads, so that operators decode only those columns."""

from __future__ import annotations

from engine.sparql import algebra as A


def expression_variables(expr: A.Expr | None) -> set[str] | None:
    """Names of the variables ``expr`` reads; None when it needs the whole
    solution (EXISTS substitutes every bound variable into its pattern)."""
    names: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        cls = node.__class__
        if node is None or cls is A.TermExpr:
            continue
        if cls is A.VarExpr:
            names.add(node.var.name)
        elif cls is A.ExistsExpr:
            return None
        elif cls is A.BinaryExpr:
            stack += (node.left, node.right)
        elif cls is A.UnaryExpr:
            stack.append(node.operand)
        elif cls is A.InExpr:
            stack.append(node.expr)
            stack += node.options
        elif cls in (A.CallExpr, A.FunctionExpr):
            stack += node.args
        else:
            return None
    return names
