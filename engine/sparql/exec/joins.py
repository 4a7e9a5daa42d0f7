"""The combining operators: Join, LeftJoin (OPTIONAL), Union and Minus.

Each runs both sides and combines whole columns with the relational steps of
:mod:`engine.sparql.exec.solutions`. Where the planner allows a bind join
(:func:`engine.sparql.plan.bind_join_applies`), the right-hand BGP (or a
BGP in ``GRAPH <iri>``) instead continues from the left side's solutions, so
it is never matched everywhere;
a right-hand property path likewise starts from the values the left side
binds to one of its ends.
"""

from __future__ import annotations

import numpy as np

from engine.rdf import Variable
from engine.sparql import algebra as A
from engine.sparql.exec.bgp import extend_through_bgp
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.evaluation import truth_mask
from engine.sparql.exec.mentioned import mentioned_variables
from engine.sparql.exec.paths import extend_through_path
from engine.sparql.exec.service import services_of
from engine.sparql.exec.solutions import Solutions, concat, join, join_pairs, left_outer, merge, minus
from engine.sparql.plan import bind_join_applies, merged_bgp, named_graph_bgp
from engine.store import Graph

#: hidden column that carries the left row number through a bind join
_ROW = ".row"


def join_operator(node: A.Join, cx: ExecutionContext) -> Solutions:
    """Join: a bind join into a BGP, one SERVICE call per endpoint the left
    side binds, or both sides joined. A join of nested groups that are all
    BGPs is matched as one BGP, ordered across the groups."""
    merged = merged_bgp(node)
    if merged is not None:
        return extend_through_bgp(merged, cx, Solutions.unit())
    left = cx.run(node.left)
    if not left.length:
        return left
    right = node.right
    if bind_join_applies(left.columns, right):
        # graph exploration continues from the rows found so far (bind join)
        return extend_through_bgp(right, cx, left)
    named = named_graph_of(right, cx)
    if named is not None and bind_join_applies(left.columns, named[1]):
        # the same into another graph: GRAPH <g> { BGP } after a group that binds its subjects
        with cx.active_graph(named[0]):
            return extend_through_bgp(named[1], cx, left)
    if isinstance(right, A.PathPattern):
        # a path followed from the values found so far, not between all nodes
        extended = extend_through_path(right, cx, left)
        if extended is not None:
            return extended
    if isinstance(right, A.Service) and isinstance(right.endpoint, Variable):
        return join(left, services_of(right, left, cx))
    return join(left, cx.run(right))


def named_graph_of(node: A.Pattern, cx: ExecutionContext) -> tuple[Graph, A.BGP] | None:
    """``(graph, bgp)`` of ``GRAPH <iri> { bgp }`` over a graph the dataset
    names, which a bind join enters (EXPLAIN says so from the same answer);
    None for any other pattern (a missing graph is left to the GRAPH
    operator, which answers no solutions)."""
    named = named_graph_bgp(node)
    if named is None:
        return None
    graph = cx.dataset.named.get(cx.terms.encode(named[0]))
    return None if graph is None else (graph, named[1])


def left_join(node: A.LeftJoin, cx: ExecutionContext) -> Solutions:
    """OPTIONAL, with the FILTER of the optional graph pattern as the join condition."""
    left = cx.run(node.left)
    if not left.length:
        return Solutions.empty(list(dict.fromkeys([*left.columns, *_pattern_vars(node.right)])))
    if bind_join_applies(left.columns, node.right):
        # explore the optional part from each left row instead of matching it everywhere
        tagged = extend_through_bgp(
            node.right, cx, left.with_column(_ROW, np.arange(left.length, dtype=np.int64))
        )
        lidx = tagged.columns.pop(_ROW)
        joined = tagged
    else:
        right = cx.run(node.right)
        lidx, ridx = join_pairs(left, right)
        joined = merge(left, right, lidx, ridx)
    if node.condition is not None and joined.length:
        keep = truth_mask(node.condition, joined, cx)
        joined, lidx = joined.mask(keep), lidx[keep]
    if not joined.length:
        joined = Solutions.empty(list(dict.fromkeys([*left.columns, *_pattern_vars(node.right)])))
    return left_outer(left, joined, lidx)


def union(node: A.Union_, cx: ExecutionContext) -> Solutions:
    return concat([cx.run(node.left), cx.run(node.right)])


def minus_operator(node: A.Minus, cx: ExecutionContext) -> Solutions:
    left = cx.run(node.left)
    if not left.length:
        return left
    return minus(left, cx.run(node.right))


def _pattern_vars(node) -> list[str]:
    """Variables a pattern can bind (for the columns of an empty result)."""
    names = mentioned_variables(node)
    return [n for n in names if not n.startswith(".")] + [n for n in names if n.startswith(".")]
