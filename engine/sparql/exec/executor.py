"""Evaluation of the SPARQL algebra over one snapshot of the store.

Each algebra node becomes a :class:`Solutions` of ID columns, computed by the
operator registered for its class in :data:`OPERATORS` (one operator, or a
small family, per module; see :mod:`engine.sparql.exec`). The operators
share an :class:`ExecutionContext`, which polls for cancellation before
every one of them. :class:`Executor` is the entry point: it builds the
context for one execution and wires EXISTS into the expression context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from engine.sparql import algebra as A
from engine.sparql.exec.bgp import basic_graph_pattern, extend_across_graphs, extend_through_bgp
from engine.sparql.exec.context import ExecutionContext, Operator, ServiceCall
from engine.sparql.exec.dataset import QueryDataset
from engine.sparql.exec.evaluation import truth_mask
from engine.sparql.exec.exists import exists
from engine.sparql.exec.extend import extend
from engine.sparql.exec.filter import filter_operator
from engine.sparql.exec.graphs import graph_operator, window
from engine.sparql.exec.group_by import group_by
from engine.sparql.exec.joins import join_operator, left_join, minus_operator, union
from engine.sparql.exec.modifiers import distinct_operator, project
from engine.sparql.exec.order_by import order_by
from engine.sparql.exec.paths import path_pattern
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.service import service
from engine.sparql.exec.slice import slice_operator
from engine.sparql.exec.solutions import Solutions
from engine.sparql.exec.values import values
from engine.sparql.expr import EvalContext
from engine.sparql.plan import HeldOrders
from engine.store import Graph

#: the operator of each algebra class
OPERATORS: Mapping[type, Operator] = {
    A.BGP: basic_graph_pattern,
    A.PathPattern: path_pattern,
    A.Join: join_operator,
    A.LeftJoin: left_join,
    A.Filter: filter_operator,
    A.Union_: union,
    A.Minus: minus_operator,
    A.Graph: graph_operator,
    A.Window: window,
    A.Extend: extend,
    A.Values: values,
    A.Service: service,
    A.GroupBy: group_by,
    A.OrderBy: order_by,
    A.Project: project,
    A.Distinct: distinct_operator,
    A.Reduced: distinct_operator,
    A.Slice: slice_operator,
}


class Executor:
    """Runs algebra over one dataset; one instance per query execution.

    ``should_stop`` is polled before every operator: a query over its time
    limit or whose client went away raises :class:`QueryCancelled` within
    one operator's work. ``plans``: a continuous query's orders, held from
    one window to the next (:class:`~engine.sparql.plan.HeldOrders`).
    """

    def __init__(
        self,
        terms: QueryTerms,
        dataset: QueryDataset,
        ctx: EvalContext,
        service_client: ServiceCall | None = None,
        should_stop: Callable[[], bool] | None = None,
        plans: HeldOrders | None = None,
    ) -> None:
        self.context = ExecutionContext(terms, dataset, ctx, OPERATORS, service_client, should_stop, plans)
        ctx.exists = partial(exists, self.context)

    def run(self, pattern: A.Pattern) -> Solutions:
        """The solutions of ``pattern``."""
        return self.context.run(pattern)

    def extend(self, pattern: A.BGP, seeds: Solutions) -> Solutions:
        """The ``seeds`` rows joined with ``pattern``, planned with the seeds'
        columns bound (one evaluation for many parameter rows)."""
        return extend_through_bgp(pattern, self.context, seeds)

    def explore(self, graph_of: Mapping[A.TriplePattern, Graph], seeds: Solutions | None = None,
                plans: HeldOrders | None = None) -> Solutions:
        """The solutions of a basic graph pattern whose every triple pattern is
        matched in its own graph (extending ``seeds`` if given), in an order
        held by ``plans`` if given (one holder per role of the graphs: which
        pattern reads the change, which the window before or after it)."""
        saved = self.context.plans
        self.context.plans = plans or saved
        try:
            return extend_across_graphs(graph_of, self.context, seeds or Solutions.unit())
        finally:
            self.context.plans = saved

    def keep_where(self, condition: A.Expr, solutions: Solutions) -> Solutions:
        """The ``solutions`` for which the FILTER ``condition`` is true."""
        if not solutions.length:
            return solutions
        return solutions.mask(truth_mask(condition, solutions, self.context))
