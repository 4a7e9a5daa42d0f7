"""Which variables an expression reads, so that operators decode only those
columns and evaluate it once per distinct combination of their values."""

from __future__ import annotations

from engine.sparql import algebra as A

#: calls whose value is not a function of the arguments alone (a new value per
#: call, or tied to the solution row as BNODE(label) is)
ROW_SCOPED_CALLS = frozenset({"RAND", "BNODE", "UUID", "STRUUID"})


def expression_variables(expr: A.Expr | None) -> set[str] | None:
    """Names of the variables ``expr`` reads; None when it needs the whole
    solution (EXISTS substitutes every bound variable into its pattern) or
    must be evaluated row by row (RAND, BNODE, UUID, STRUUID)."""
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
        elif cls is A.CallExpr:
            if node.name in ROW_SCOPED_CALLS:
                return None
            stack += node.args
        elif cls is A.FunctionExpr:
            stack += node.args
        else:
            return None
    return names
