"""Basic graph patterns, answered by graph exploration.

Patterns are taken in the planner's order (:func:`engine.sparql.plan.order_patterns`)
and each one extends every current solution through the store's sorted
neighbour lists in one vectorised step. The same step serves the bind join
(a BGP continuing from the solutions of the pattern on its left) and the
LIMIT push-down (a BGP explored a chunk of its first pattern at a time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import numpy as np

from engine.rdf import Variable
from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.intersection import intersect_closing, worth_intersecting
from engine.sparql.exec.solutions import Solutions, cross
from engine.sparql.plan import chunk_bounds, closing_pair, connected_groups, order_patterns
from engine.store import Graph


def basic_graph_pattern(node: A.BGP, cx: ExecutionContext) -> Solutions:
    """The BGP operator: its solutions in the active graph."""
    return extend_through_bgp(node, cx, Solutions.unit())


def extend_through_bgp(node: A.BGP, cx: ExecutionContext, solutions: Solutions) -> Solutions:
    """Extend ``solutions`` through every pattern of the BGP (a bind join when
    they come from a pattern on the left). A BGP is a set: a repeated triple
    pattern is matched once."""
    return extend_across_graphs(dict.fromkeys(node.triples, cx.active), cx, solutions)


def extend_across_graphs(graph_of: Mapping[A.TriplePattern, Graph], cx: ExecutionContext,
                         solutions: Solutions) -> Solutions:
    """Extend ``solutions`` through each pattern matched in *its own* graph.

    Incremental window evaluation needs this: one pattern reads only the
    batches entering the window, the others the window before or after them.
    The planner orders the patterns by the counts of each one's own graph, so
    the small graph is explored first. Groups of patterns that share no
    variable are explored apart and combined once at the end
    (:func:`engine.sparql.plan.connected_groups`)."""
    seeded, *apart = connected_groups(tuple(graph_of), set(solutions.columns))
    result = _explore({p: graph_of[p] for p in seeded}, cx, solutions)
    for group in apart:
        if not result.length:
            break
        part = _explore({p: graph_of[p] for p in group}, cx, Solutions.unit())
        result = cross(result, part) if result.columns or result.length != 1 else part
    return result if result.length else no_solutions(A.BGP(tuple(graph_of)), solutions)


def _explore(graph_of: Mapping[A.TriplePattern, Graph], cx: ExecutionContext,
             solutions: Solutions) -> Solutions:
    """``solutions`` extended through connected patterns in the planner's
    order; two patterns that close a cycle on one variable are taken
    together, by intersection (:mod:`engine.sparql.exec.intersection`)."""
    patterns = list(_ordered(graph_of, cx, solutions) if len(graph_of) > 1 else graph_of)  # (a copy: popped)
    while patterns and solutions.length:
        pattern = patterns.pop(0)
        pair = closing_pair(pattern, patterns, solutions.columns)
        if pair is not None and worth_intersecting(solutions, pair, graph_of, cx):
            patterns.remove(pair.second)
            solutions = intersect_closing(solutions, pair, graph_of, cx)
            _traced(cx, pair.second, solutions)
        else:
            solutions = extend_with_pattern(solutions, pattern, graph_of[pattern], cx)
        _traced(cx, pattern, solutions)
    return solutions


def _traced(cx: ExecutionContext, pattern: A.TriplePattern, solutions: Solutions) -> None:
    """Tell EXPLAIN's trace, if any, how many rows there were after ``pattern``."""
    if cx.trace is not None:
        cx.trace.explored(pattern, solutions.length)


#: exploration orders of recent BGPs (see _ordered); cleared when full
_ORDERS: dict[tuple, list[A.TriplePattern]] = {}
ORDERS_KEPT = 4096


def _ordered(graph_of: Mapping[A.TriplePattern, Graph], cx: ExecutionContext,
             solutions: Solutions) -> list[A.TriplePattern]:
    """The planner's order of the patterns. A repeated query asks again for
    the same patterns over the same (immutable) graphs with the same bound
    variables, and gets the same order: it is kept, keyed by the graphs'
    identity, so a small query does not pay the estimates every time. A
    continuous query's windows are new graphs each time: its own held orders
    (``cx.plans``) keep the order while the window's workload stays put. (An
    order only decides the work, never the answer.)"""

    def plan() -> list[A.TriplePattern]:
        def estimate(pattern: A.TriplePattern, bound: set[str], rows: float) -> float:
            return cx.cost.estimate(graph_of[pattern], pattern, bound, rows)

        return order_patterns(tuple(graph_of), estimate, set(solutions.columns))

    if cx.plans is not None:
        return cx.plans.order(graph_of, frozenset(solutions.columns), solutions.length, plan)
    patterns = tuple(graph_of)
    graphs = tuple(map(id, graph_of.values()))
    columns = frozenset(solutions.columns)
    key = (patterns, graphs, columns)
    order = _ORDERS.get(key)
    if order is None:
        order = _order_of_shape(patterns, graphs, columns, graph_of, cx, plan)
        if len(_ORDERS) >= ORDERS_KEPT:
            _ORDERS.clear()
        _ORDERS[key] = order
    return order


#: orders by the patterns' skeleton (their subject and object constants left
#: out): (the order as positions in the patterns, the first one's estimate)
_SKELETON_ORDERS: dict[tuple, tuple[tuple[int, ...], float]] = {}
#: an order kept for a skeleton is taken again while its first pattern's
#: estimate with the new constants stays within this factor of the one it was
#: planned with (or of SMALL_START rows, whichever is larger)
ORDER_DRIFT = 4.0
SMALL_START = 16.0


def _skeleton(pattern: A.TriplePattern) -> tuple:
    """A pattern with its subject and object constants left out: what stays
    when a client sends the same query about another user or post (the
    predicates stay: they choose the data, and the order with them)."""
    s, p, o = pattern.subject, pattern.predicate, pattern.object
    return (s if isinstance(s, Variable) else None, p, o if isinstance(o, Variable) else None)


def _order_of_shape(patterns: tuple[A.TriplePattern, ...], graphs: tuple[int, ...], columns: frozenset,
                    graph_of: Mapping[A.TriplePattern, Graph], cx: ExecutionContext,
                    plan: Callable[[], list[A.TriplePattern]]) -> list[A.TriplePattern]:
    """The order of patterns seen with other subject or object constants
    (the same query about another user): the order planned then, if its
    first pattern costs about what it did (one estimate instead of the
    greedy search's estimates of every pattern at every step); else planned
    anew. An order only decides the work, never the answer."""
    skeleton = (tuple(map(_skeleton, patterns)), graphs, columns)
    kept = _SKELETON_ORDERS.get(skeleton)
    if kept is not None:
        positions, planned_rows = kept
        first = patterns[positions[0]]
        rows = cx.cost.estimate(graph_of[first], first, set(columns), 1.0)
        if rows <= ORDER_DRIFT * max(planned_rows, SMALL_START):
            return [patterns[i] for i in positions]
    order = plan()
    at = {pattern: i for i, pattern in enumerate(patterns)}
    first = order[0]
    if len(_SKELETON_ORDERS) >= ORDERS_KEPT:
        _SKELETON_ORDERS.clear()
    _SKELETON_ORDERS[skeleton] = (tuple(at[p] for p in order),
                                  cx.cost.estimate(graph_of[first], first, set(columns), 1.0))
    return order


def bgp_chunks(node: A.BGP, cx: ExecutionContext) -> Iterator[Solutions]:
    """The BGP's solutions in chunks of its first pattern's matches (the
    schedule of :func:`engine.sparql.plan.chunk_bounds`), each extended
    through the other patterns."""
    graph = cx.active
    first, *rest = _ordered(dict.fromkeys(node.triples, graph), cx, Solutions.unit())
    seeds = extend_with_pattern(Solutions.unit(), first, graph, cx)
    _traced(cx, first, seeds)
    for start, stop in chunk_bounds(seeds.length):
        chunk = seeds.take(np.arange(start, stop))
        for pattern in rest:
            chunk = extend_with_pattern(chunk, pattern, graph, cx)
            _traced(cx, pattern, chunk)
            if not chunk.length:
                break
        if chunk.length:
            yield chunk


def extend_with_pattern(
    solutions: Solutions, pattern: A.TriplePattern, graph: Graph, cx: ExecutionContext
) -> Solutions:
    """Every solution extended by the matches of ``pattern`` in ``graph``."""
    positions = (pattern.subject, pattern.predicate, pattern.object)
    bound_vars = [isinstance(t, Variable) and t.name in solutions.columns for t in positions]
    encode = cx.terms.encode
    if not any(bound_vars):
        # independent of the rows so far: match once, then combine
        args = [None if isinstance(t, Variable) else np.array([encode(t)], dtype=np.int64) for t in positions]
        rows, s, p, o = graph.match(*args, n_rows=1)
        matched = _matched_solutions(positions, (s, p, o), len(rows), {})
        return cross(solutions, matched) if solutions.columns else matched
    n = solutions.length
    args = []
    for t, is_bound in zip(positions, bound_vars, strict=True):
        if isinstance(t, Variable):
            args.append(solutions.columns[t.name] if is_bound else None)
        else:
            args.append(np.full(n, encode(t), dtype=np.int64))
    rows, s, p, o = graph.match(*args, n_rows=n)
    base = solutions.take(rows)
    return _matched_solutions(positions, (s, p, o), len(rows), base.columns)


def _matched_solutions(positions, values, length: int, columns: dict[str, np.ndarray]) -> Solutions:
    """Add the columns of the free variables of a matched pattern; a variable
    that occurs twice in the pattern must have the same value in both places."""
    columns = dict(columns)
    keep = None
    for t, col in zip(positions, values, strict=True):
        if not isinstance(t, Variable):
            continue
        if t.name in columns:
            same = columns[t.name] == col
            keep = same if keep is None else keep & same
        else:
            columns[t.name] = col
    result = Solutions(columns, length)
    return result.mask(keep) if keep is not None else result


def no_solutions(node: A.BGP, solutions: Solutions) -> Solutions:
    """The empty result of a BGP, with a column for each of its variables."""
    names = dict.fromkeys(solutions.columns)
    for p in node.triples:
        for term in (p.subject, p.predicate, p.object):
            if isinstance(term, Variable):
                names[term.name] = None
    return Solutions.empty(list(names))
