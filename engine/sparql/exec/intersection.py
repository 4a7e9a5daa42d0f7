"""The intersection step: a cycle closed by two patterns at once.

When two patterns leave the same single variable free (the planner's
:class:`~engine.sparql.plan.ClosingPair`; LSBench L6: the users who know the
row's friend and subscribe to the row's forum), expanding the first and then
probing the second builds every candidate of the first, however few
survive. This step reads each pattern's candidate list once per distinct
key (rows that share a friend share its list), sorted, and the compiled
kernel (:mod:`engine.sparql.exec.intersection_kernel`) walks every row's
shorter list and gallops through the longer one in place: the work is the
sum over rows of the shorter list, as a worst-case-optimal join does, and
only the rows that survive are built.

The second pattern's lists are read only when the cost model expects them
to cost no more than the first pattern's expansion
(:func:`worth_intersecting`); otherwise the patterns are taken one by one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from engine.rdf import Variable
from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.intersection_kernel import intersect_lists, keyed_ranges, paired_ranges
from engine.sparql.exec.solutions import Solutions
from engine.sparql.plan import ClosingPair
from engine.store import Graph
from engine.store.distinct_ids import unique_inverse
from engine.store.graph import neighbour_reader
from engine.store.neighbour_lists import KEYED, PAIRED


@dataclass(frozen=True, slots=True)
class _Lists:
    """One pattern's candidates for the free variable: per row the index of
    its key (``inverse``), per key ``values[lo[k]:hi[k]]`` (sorted, without
    repeats; ``values`` may be a stored graph's own column: an in-memory
    graph's int64 order, a compact graph's int32 mapped ``neighbours``)."""

    inverse: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    values: np.ndarray


def _distinct_keys(solutions: Solutions, pattern: A.TriplePattern, free: str) -> tuple[list, np.ndarray, int]:
    """The pattern's bound columns reduced to distinct keys: ``(columns of
    the distinct keys by position, None where free or constant; per row its
    key; number of keys)``."""
    names = sorted({t.name for t in (pattern.subject, pattern.predicate, pattern.object)
                    if isinstance(t, Variable) and t.name != free})
    if len(names) == 1:
        distinct, inverse = unique_inverse(solutions.columns[names[0]])
        keys = {names[0]: distinct}
    else:
        stacked = np.stack([solutions.columns[n] for n in names], axis=1)
        distinct_rows, inverse = np.unique(stacked, axis=0, return_inverse=True)
        keys = {n: distinct_rows[:, i] for i, n in enumerate(names)}
    n_keys = len(next(iter(keys.values())))
    return [keys.get(t.name) if isinstance(t, Variable) else None
            for t in (pattern.subject, pattern.predicate, pattern.object)], inverse.reshape(-1), n_keys


def _read_lists(keys: tuple[list, np.ndarray, int], pattern: A.TriplePattern, free: str, graph: Graph,
                cx: ExecutionContext) -> _Lists:
    """The pattern's lists once per distinct key (:func:`_distinct_keys`):
    read in place from the graph's sorted order when it has one for the
    pattern (:func:`_stored_order`), else matched and grouped by key."""
    columns, inverse, n_keys = keys
    inverse = np.ascontiguousarray(inverse, dtype=np.int64)
    layout = _stored_order(pattern, free, graph, cx)
    if layout is not None:
        vertices = np.ascontiguousarray(next(column for column in columns if column is not None),
                                        dtype=np.int64)
        if layout[0] == KEYED:
            _, sorted_keys, third, first, last, high = layout
            lo, hi = keyed_ranges(sorted_keys, first, last, high, vertices)
            return _Lists(inverse, lo, hi, third)
        _, vertex_offsets, pair_predicates, pair_offsets, neighbours, predicate = layout
        lo, hi = paired_ranges(vertex_offsets, pair_predicates, pair_offsets, predicate, vertices)
        return _Lists(inverse, lo, hi, neighbours)
    positions = (pattern.subject, pattern.predicate, pattern.object)
    args = [column if column is not None
            else None if isinstance(t, Variable) else np.full(n_keys, cx.terms.encode(t), dtype=np.int64)
            for t, column in zip(positions, columns, strict=True)]
    rows, *matched = graph.match(*args, n_rows=n_keys)
    values = matched[next(i for i, t in enumerate(positions) if isinstance(t, Variable) and t.name == free)]
    rows, values = _sorted_sets(rows, values)
    starts = np.searchsorted(rows, np.arange(n_keys + 1))
    return _Lists(inverse, starts[:-1], starts[1:], values)


def _stored_order(pattern: A.TriplePattern, free: str, graph: Graph, cx: ExecutionContext) -> tuple | None:
    """Where the graph keeps the pattern's lists sorted, as its neighbour
    reader for the predicate names them (forward for ``?bound <p> ?free``,
    backward for ``?free <p> ?bound``): an in-memory graph's PSO or POS order,
    ``(KEYED, keys, third, first, last, high)``
    (:meth:`~engine.store.neighbour_lists.KeyedLists.kernel_layout`), or a
    compact graph's adjacency of one shard, ``(PAIRED, vertex_offsets,
    pair_predicates, pair_offsets, neighbours, predicate)``
    (:meth:`~engine.store.neighbour_lists.PairLists.kernel_layout`). None
    when the pattern has another shape or the graph no such arrays (then its
    lists are matched)."""
    subject, predicate, obj = pattern.subject, pattern.predicate, pattern.object
    if isinstance(predicate, Variable) or not (isinstance(subject, Variable) and isinstance(obj, Variable)):
        return None
    predicate_id = cx.terms.encode(predicate)
    if predicate_id <= 0:
        return None
    reader = neighbour_reader(graph, predicate_id, backward=subject.name == free)
    layout = getattr(reader, "kernel_layout", lambda: None)()
    if layout is None or layout[0] not in (KEYED, PAIRED):
        return None
    return layout


def _sorted_sets(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, values)`` ordered by key, then value, without repeated pairs,
    as the kernel needs its lists. A graph of one sorted member already gives
    them so (checked in one pass); a window merged with stored graphs gives
    each member's part after the other's."""
    if len(keys) > 1:
        same = keys[1:] == keys[:-1]
        if not bool(((keys[1:] > keys[:-1]) | (same & (values[1:] > values[:-1]))).all()):
            order = np.lexsort((values, keys))
            keys, values = keys[order], values[order]
            keep = np.ones(len(keys), dtype=bool)
            keep[1:] = (keys[1:] != keys[:-1]) | (values[1:] != values[:-1])
            keys, values = keys[keep], values[keep]
    return np.ascontiguousarray(keys, dtype=np.int64), np.ascontiguousarray(values, dtype=np.int64)


def worth_intersecting(solutions: Solutions, pair: ClosingPair, graph_of: Mapping[A.TriplePattern, Graph],
                       cx: ExecutionContext) -> bool:
    """Whether reading the second pattern's lists (once per distinct key) is
    expected to cost no more than expanding the first pattern row by row,
    the cost model says; when not, the patterns are taken one by one.

    The distinct keys are counted (a sort of the key column) only when the
    answer depends on their number: with as many keys as rows, or with one,
    the estimates alone decide. (Counting them every time cost LSBench L5,
    whose cycles are never worth intersecting, about a tenth of its window.)"""
    bound = set(solutions.columns)
    per_key = cx.cost.estimate(graph_of[pair.second], pair.second, bound, 1.0)
    expansion = cx.cost.estimate(graph_of[pair.first], pair.first, bound, float(solutions.length))
    if per_key * solutions.length <= expansion:
        return True
    if per_key > expansion:
        return False
    return _distinct_keys(solutions, pair.second, pair.variable)[2] * per_key <= expansion


def intersect_closing(solutions: Solutions, pair: ClosingPair, graph_of: Mapping[A.TriplePattern, Graph],
                      cx: ExecutionContext) -> Solutions:
    """``solutions`` extended through both patterns of ``pair``."""
    free = pair.variable
    first, second = (_read_lists(_distinct_keys(solutions, p, free), p, free, graph_of[p], cx)
                     for p in (pair.first, pair.second))
    rows, values = intersect_lists(first.lo, first.hi, first.values, first.inverse,
                                   second.lo, second.hi, second.values, second.inverse)
    return solutions.take(rows).with_column(free, values)
