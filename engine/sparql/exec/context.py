"""What the operators of one query execution share, and the one way to run a node.

An operator is a function ``(node, cx) -> Solutions`` for one algebra class;
the dispatch table of them is built by :mod:`engine.sparql.exec.executor` and handed
to the context, so operator modules only depend on this module, never on
each other's dispatch. :meth:`ExecutionContext.run` polls ``should_stop``
and the evaluation's checkpoint (:func:`engine.store.checkpoint`) before
every operator: a query over its time limit or whose client went away, a
window or an update over its own, stops within one operator's work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from engine.sparql import algebra as A
from engine.sparql.exec.dataset import QueryDataset
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.solutions import Solutions
from engine.sparql.exec.trace import Trace
from engine.sparql.expr import EvalContext
from engine.sparql.plan import CostModel, HeldOrders
from engine.store import Graph, QueryCancelled, checkpoint

#: a SERVICE call: the node and the query's terms in, the remote solutions out
ServiceCall = Callable[[A.Service, QueryTerms], Solutions]
#: an operator: ``(node, cx)`` to the solutions of one kind of algebra node
Operator = Callable[..., Solutions]


class ExecutionContext:
    """The state of one query execution: its terms, dataset, the graph
    patterns currently match against (GRAPH and WINDOW switch it), the
    expression context, the SERVICE client and the cost model's statistics;
    a continuous query's held orders (``plans``), kept from window to window."""

    def __init__(
        self,
        terms: QueryTerms,
        dataset: QueryDataset,
        ctx: EvalContext,
        operators: Mapping[type, Operator],
        service_client: ServiceCall | None = None,
        should_stop: Callable[[], bool] | None = None,
        plans: HeldOrders | None = None,
    ) -> None:
        self.terms = terms
        self.dataset = dataset
        self.active = dataset.default
        self.ctx = ctx
        self.service_client = service_client
        self.should_stop = should_stop
        self.cost = CostModel(terms.encode)
        self.plans = plans
        #: what each operator did, when EXPLAIN analyses the query (None: nothing recorded)
        self.trace: Trace | None = None
        self._operators = operators

    def run(self, node: A.Pattern) -> Solutions:
        """The solutions of ``node``, by its operator, unless the query was stopped."""
        if self.should_stop is not None and self.should_stop():
            raise QueryCancelled("query cancelled")
        checkpoint()  # the evaluation's own bound (a window's, an update's time limit)
        if self.trace is not None:
            return self.trace.run(node, self._operators[node.__class__], self)
        return self._operators[node.__class__](node, self)

    @contextmanager
    def active_graph(self, graph: Graph) -> Iterator[None]:
        """Match patterns against ``graph`` inside the block (GRAPH, WINDOW)."""
        saved = self.active
        self.active = graph
        try:
            yield
        finally:
            self.active = saved
