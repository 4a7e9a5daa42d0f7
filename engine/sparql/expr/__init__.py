"""Expressions: the value of a SPARQL expression in one solution.

Evaluation (:mod:`.evaluate`) dispatches to the operators, the function
library, GeoSPARQL's functions (:mod:`.geosparql`, over :mod:`.geometry`),
casts and XSD value spaces, XPath regular expressions, and the
ORDER BY ordering; :mod:`.aggregates` folds a group's values; everything
works on decoded terms and raises :class:`ExprError` for SPARQL's expression
errors. Which variables an expression reads (:mod:`.variables`) lets the
executor decode only those and evaluate once per distinct input.
"""

from engine.sparql.expr.aggregates import compute_aggregate
from engine.sparql.expr.context import EvalContext, ExprError
from engine.sparql.expr.evaluate import evaluate
from engine.sparql.expr.operators import effective_boolean_value, term_equal
from engine.sparql.expr.ordering import order_key, order_ties
from engine.sparql.expr.variables import ROW_SCOPED_CALLS, expression_variables

__all__ = [
    "ROW_SCOPED_CALLS",
    "EvalContext",
    "ExprError",
    "compute_aggregate",
    "effective_boolean_value",
    "evaluate",
    "expression_variables",
    "order_key",
    "order_ties",
    "term_equal",
]
