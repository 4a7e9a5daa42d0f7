"""Property paths (SPARQL 1.1 section 9 and 18.4), evaluated over ID columns.

The core step is :func:`reach`: from a column of start nodes, follow a path
one way or the other and return every (start index, end node) pair. Links
read the store's neighbour lists; sequences chain steps; alternatives
concatenate; ``*``/``+`` run the breadth-first search of
:mod:`engine.sparql.exec.path_closure`, in time linear in the edges it visits.
"""

from __future__ import annotations

import numpy as np

from engine.rdf import Variable
from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.path_closure import Closure, closure_rows
from engine.sparql.exec.path_steps import step_one
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.solutions import Solutions, join
from engine.store import EMPTY, Graph


def reach(
    path: A.Path, nodes: np.ndarray, backward: bool, graph: Graph, terms: QueryTerms
) -> tuple[np.ndarray, np.ndarray]:
    """All ``(i, end)`` such that ``path`` leads from ``nodes[i]`` to ``end``
    (or from ``end`` to ``nodes[i]`` when ``backward``). Multiset semantics,
    except for ``*``/``+``/``?`` which yield each pair once."""
    cls = path.__class__
    if cls is A.PathLink:
        pred = np.full(len(nodes), terms.encode(path.iri), dtype=np.int64)
        if backward:
            rows, s, _, _ = graph.match(None, pred, nodes, len(nodes))
            return rows, s
        rows, _, _, o = graph.match(nodes, pred, None, len(nodes))
        return rows, o
    if cls is A.PathInverse:
        return reach(path.path, nodes, not backward, graph, terms)
    if cls is A.PathSequence:
        steps = path.steps[::-1] if backward else path.steps
        idx = np.arange(len(nodes), dtype=np.int64)
        current = nodes
        for step in steps:
            j, current = reach(step, current, backward, graph, terms)
            idx = idx[j]
        return idx, current
    if cls is A.PathAlternative:
        parts = [reach(p, nodes, backward, graph, terms) for p in path.options]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    if cls is A.PathNegated:
        return _negated(path, nodes, backward, graph, terms)
    if cls is A.PathRepeat:
        return _repeat(path, nodes, backward, graph, terms)
    raise TypeError(f"unknown path {path!r}")


def _negated(path: A.PathNegated, nodes, backward: bool, graph: Graph, terms: QueryTerms):
    idx_parts, end_parts = [], []
    parts = []
    if path.forward or not path.inverse:
        parts.append((path.forward, False))
    if path.inverse:
        parts.append((path.inverse, True))
    for excluded, reverse in parts:
        banned = np.array([terms.encode(i) for i in excluded], dtype=np.int64)
        leave = reverse == backward
        if leave:
            rows, _, p, end = graph.match(nodes, None, None, len(nodes))
        else:
            rows, end, p, _ = graph.match(None, None, nodes, len(nodes))
        keep = ~np.isin(p, banned)
        idx_parts.append(rows[keep])
        end_parts.append(end[keep])
    if not idx_parts:
        return EMPTY, EMPTY
    return np.concatenate(idx_parts), np.concatenate(end_parts)


def _repeat(path: A.PathRepeat, nodes, backward: bool, graph: Graph, terms: QueryTerms):
    if path.max == 1:  # ``?``: the node itself and one step, each pair once
        idx, end = reach(path.path, nodes, backward, graph, terms)
        idx = np.concatenate([np.arange(len(nodes), dtype=np.int64), idx])
        end = np.concatenate([nodes, end])
        _, first = np.unique((idx << 32) | (end & 0xFFFFFFFF), return_index=True)
        return idx[first], end[first]
    return closure_rows(_closure(path, backward, graph, terms), nodes)


def _closure(path: A.PathRepeat, backward: bool, graph: Graph, terms: QueryTerms) -> Closure:
    """The search for ``path`` (a ``*`` or ``+``) over ``graph``."""
    inner = path.path

    def many(frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return reach(inner, frontier, backward, graph, terms)

    return Closure(many, step_one(inner, backward, graph, terms), path.min == 0,
                   len(terms.dictionary) + 1)


def _all_nodes(graph: Graph) -> np.ndarray:
    return np.unique(np.concatenate([graph.s, graph.o]))


def path_pattern(node: A.PathPattern, cx: ExecutionContext) -> Solutions:
    """The property path operator, over the active graph."""
    return evaluate_path(node, cx.active, cx.terms)


def evaluate_path(node: A.PathPattern, graph: Graph, terms: QueryTerms) -> Solutions:
    """Solutions of ``subject path object`` against one graph."""
    subject, obj = node.subject, node.object
    s_var = subject.name if isinstance(subject, Variable) else None
    o_var = obj.name if isinstance(obj, Variable) else None
    if s_var is None and o_var is None:
        return Solutions.unit() if _connects(node.path, terms.encode(subject), terms.encode(obj), graph,
                                             terms) else Solutions.empty()
    if s_var is None:
        starts = np.array([terms.encode(subject)], dtype=np.int64)
        idx, ends = reach(node.path, starts, False, graph, terms)
        return Solutions({o_var: ends}, len(ends))
    if o_var is None:
        starts = np.array([terms.encode(obj)], dtype=np.int64)
        idx, ends = reach(node.path, starts, True, graph, terms)
        return Solutions({s_var: ends}, len(ends))
    starts = _all_nodes(graph)
    idx, ends = reach(node.path, starts, False, graph, terms)
    begins = starts[idx]
    if s_var == o_var:
        same = begins == ends
        return Solutions({s_var: begins[same]}, int(np.count_nonzero(same)))
    return Solutions({s_var: begins, o_var: ends}, len(ends))


def extend_through_path(node: A.PathPattern, cx: ExecutionContext, left: Solutions) -> Solutions | None:
    """``left`` joined with the path pattern, the path followed only from the
    values ``left`` binds to its subject (else its object), each distinct value
    once, instead of between every pair of the graph's nodes. None when
    ``left`` binds neither end in every row."""
    for end, backward in ((node.subject, False), (node.object, True)):
        column = left.columns.get(end.name) if isinstance(end, Variable) else None
        if column is None or (column == 0).any():
            continue
        starts = np.unique(column)
        if _matches_empty(node.path):
            # evaluated alone, the pattern's zero-length matches are the graph's nodes only
            starts = starts[_in_graph(cx.active, starts)]
        idx, ends = reach(node.path, starts, backward, cx.active, cx.terms)
        bound = starts[idx]
        other = node.subject if backward else node.object
        if isinstance(other, Variable) and other.name != end.name:
            return join(left, Solutions({end.name: bound, other.name: ends}, len(ends)))
        # the other end is a constant, or the same variable: rows that end there
        keep = ends == (bound if isinstance(other, Variable) else cx.terms.encode(other))
        return join(left, Solutions({end.name: bound[keep]}, int(np.count_nonzero(keep))))
    return None


def _matches_empty(path: A.Path) -> bool:
    """Can ``path`` match the empty path (a node to itself without an edge)?"""
    cls = path.__class__
    if cls is A.PathRepeat:
        return path.min == 0 or _matches_empty(path.path)
    if cls is A.PathInverse:
        return _matches_empty(path.path)
    if cls is A.PathSequence:
        return all(_matches_empty(p) for p in path.steps)
    if cls is A.PathAlternative:
        return any(_matches_empty(p) for p in path.options)
    return False


#: at most this many nodes are looked up one by one (a count each); more are
#: looked up in the graph's node list, what evaluating the pattern alone reads
FEW_NODES = 64


def _in_graph(graph: Graph, nodes: np.ndarray) -> np.ndarray:
    """Which of the distinct ``nodes`` are the subject or object of a triple."""
    if len(nodes) > FEW_NODES:
        return np.isin(nodes, _all_nodes(graph))
    return np.array([v > 0 and (graph.count(v, None, None) > 0 or graph.count(None, None, v) > 0)
                     for v in nodes.tolist()], dtype=bool)


def _connects(path: A.Path, start: int, end: int, graph: Graph, terms: QueryTerms) -> bool:
    """Does ``path`` lead from ``start`` to ``end``? A ``*`` or ``+`` stops
    searching once it reaches ``end``."""
    if path.__class__ is A.PathRepeat and path.max is None:
        return end in _closure(path, False, graph, terms).from_one(start, target=end)
    _, ends = reach(path, np.array([start], dtype=np.int64), False, graph, terms)
    return bool(np.any(ends == end))
