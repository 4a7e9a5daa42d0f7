"""A spatial FILTER over two unrelated sides, answered through an R-tree.

``{ ?r :at ?p } { ?place geo:asWKT ?q } FILTER(geof:distance(?p, ?q, uom:metre) < 1000)``
joins two sides that share no variable: evaluated as written it is the cross
product of both sides with the distance computed for every pair. When the
planner recognises a spatial conjunct (:mod:`engine.sparql.plan.spatial_filter`)
whose two geometries come one from each side, each side's distinct
geometries are parsed once (by term ID), an STRtree (shapely) is built over
the side with fewer of them, and each geometry of the other side probes it
with its bounding box grown by the conjunct's reach. Only the candidate pairs
the tree returns are formed, and the whole FILTER condition is evaluated on
them as usual, so the answer is the pairwise one: a pair the tree leaves out
cannot satisfy the conjunct (nor then the conjunction), and every candidate
is checked exactly.

For a reach in metres the box is grown by the latitude and longitude that
``reach`` metres can span on the sphere at the box's highest latitude; a box
that then crosses the antimeridian or reaches a pole spans every longitude.
Coordinates outside longitude/latitude ranges, or an empty geometry where
emptiness could matter (``sfEquals``), send the FILTER the pairwise way.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from dataclasses import dataclass

import numpy as np
import shapely

from engine.rdf import Literal
from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.evaluation import truth_mask
from engine.sparql.exec.mentioned import mentioned_variables
from engine.sparql.exec.solutions import Solutions, join, merge
from engine.sparql.expr import ExprError
from engine.sparql.expr.geometry import ANGULAR_UNITS, LINEAR_UNITS, METRES_PER_DEGREE, geometry_of
from engine.sparql.expr.operators import number_of
from engine.sparql.plan import SpatialPredicate, connected_groups, pattern_variables, spatial_predicates
from engine.store import expand_ranges

#: relative slack on a grown box, so that rounding never loses a pair on its edge
_SLACK = 1e-6


@dataclass
class SpatialJoinCounts:
    """How often the R-tree answered a FILTER, and the pairs it spared: the
    test that the index was used, and a figure for an operator."""

    joins: int = 0
    candidate_pairs: int = 0
    all_pairs: int = 0
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)

    def add(self, candidates: int, pairs: int) -> None:
        with self._lock:
            self.joins += 1
            self.candidate_pairs += candidates
            self.all_pairs += pairs


#: counts of this process's spatial joins
COUNTS = SpatialJoinCounts()


def spatial_filter(node: A.Filter, cx: ExecutionContext) -> Solutions | None:
    """The solutions of ``node`` through an R-tree, or None when its pattern
    is not two unrelated sides that a spatial conjunct pairs."""
    predicates = spatial_predicates(node.condition)
    if not predicates:
        return None
    sides = _sides(node.pattern, predicates)
    if sides is None:
        return None
    left, right = cx.run(sides[0]), cx.run(sides[1])
    if not left.length or not right.length or set(left.columns) & set(right.columns):
        return _pairwise(node, cx, left, right)
    for predicate in predicates:
        if predicate.left in left.columns and predicate.right in right.columns:
            ours, theirs = predicate.left, predicate.right
        elif predicate.right in left.columns and predicate.left in right.columns:
            ours, theirs = predicate.right, predicate.left
        else:
            continue
        pairs = _candidate_pairs(predicate, left.columns[ours], right.columns[theirs], cx)
        if pairs is not None:
            COUNTS.add(len(pairs[0]), left.length * right.length)
            candidates = merge(left, right, *pairs)
            if not candidates.length:
                return candidates
            return candidates.mask(truth_mask(node.condition, candidates, cx))
    return _pairwise(node, cx, left, right)


def _pairwise(node: A.Filter, cx: ExecutionContext, left: Solutions, right: Solutions) -> Solutions:
    joined = join(left, right)
    return joined.mask(truth_mask(node.condition, joined, cx)) if joined.length else joined


def _sides(pattern: A.Pattern, predicates: list[SpatialPredicate]) -> tuple[A.Pattern, A.Pattern] | None:
    """Two patterns that share no variable and whose join is ``pattern``,
    with a predicate's geometries one on each side; None otherwise."""
    if isinstance(pattern, A.Join):
        left, right = set(mentioned_variables(pattern.left)), set(mentioned_variables(pattern.right))
        if left & right or not any(_split(p, left, right) for p in predicates):
            return None
        return pattern.left, pattern.right
    if isinstance(pattern, A.BGP):
        groups = [g for g in connected_groups(pattern.triples) if g]
        for predicate in predicates:
            first = [g for g in groups if predicate.left in _group_variables(g)]
            if not first or predicate.right in _group_variables(first[0]):
                continue
            rest = tuple(p for g in groups if g is not first[0] for p in g)
            if predicate.right in _group_variables(rest):
                return A.BGP(tuple(first[0])), A.BGP(rest)
    return None


def _split(predicate: SpatialPredicate, left: set[str], right: set[str]) -> bool:
    return ((predicate.left in left and predicate.right in right)
            or (predicate.right in left and predicate.left in right))


def _group_variables(group: list[A.TriplePattern] | tuple[A.TriplePattern, ...]) -> set[str]:
    return {name for pattern in group for name in pattern_variables(pattern)}


def _candidate_pairs(predicate: SpatialPredicate, left_ids: np.ndarray, right_ids: np.ndarray,
                     cx: ExecutionContext) -> tuple[np.ndarray, np.ndarray] | None:
    """Pairs of (left row, right row) whose geometries' grown boxes meet;
    None when the index cannot answer (then every pair is compared)."""
    grow = _growth(predicate)
    if grow is None:
        return None
    left_distinct, left_rows = np.unique(left_ids, return_inverse=True)
    right_distinct, right_rows = np.unique(right_ids, return_inverse=True)
    left_shapes, right_shapes = _shapes(left_distinct, cx), _shapes(right_distinct, cx)
    if left_shapes is None or right_shapes is None:
        return None
    if len(left_distinct) < len(right_distinct):  # the tree over the side with fewer geometries
        right_pairs, left_pairs = _distinct_pairs(right_shapes, left_shapes, grow)
    else:
        left_pairs, right_pairs = _distinct_pairs(left_shapes, right_shapes, grow)
    return _row_pairs(left_pairs, right_pairs, left_rows.reshape(-1), right_rows.reshape(-1),
                      len(left_distinct), len(right_distinct))


def _growth(predicate: SpatialPredicate) -> tuple[str, float] | None:
    """``("m", metres)``, ``("deg", degrees)`` or ``("deg", 0.0)`` (the boxes
    themselves); None for a reach the index cannot use (unknown unit, not a
    number)."""
    if predicate.reach is None:
        return "deg", 0.0
    try:
        amount = float(number_of(predicate.reach)[1])
    except ExprError:
        return None
    if math.isnan(amount):
        return None
    amount = max(amount, 0.0)
    if predicate.unit in LINEAR_UNITS:
        return "m", amount * LINEAR_UNITS[predicate.unit]
    if predicate.unit in ANGULAR_UNITS:
        return "deg", amount * ANGULAR_UNITS[predicate.unit]
    return None


def _shapes(ids: np.ndarray, cx: ExecutionContext) -> np.ndarray | None:
    """The geometry of each distinct ID (None where a term is no valid WKT
    literal: no pair of it can satisfy the conjunct); None when one lies
    outside longitude/latitude ranges or is empty."""
    shapes = np.empty(len(ids), dtype=object)
    for i, term in enumerate(cx.terms.decode_column(ids)):
        if term is None or term.__class__ is not Literal:
            continue
        try:
            shapes[i] = geometry_of(term).shape
        except ExprError:
            continue
    valid = shapes[shapes != None]  # noqa: E711 (element-wise)
    if len(valid):
        if shapely.is_empty(valid).any():
            return None
        bounds = shapely.bounds(valid)
        if (bounds[:, [0, 2]] < -180).any() or (bounds[:, [0, 2]] > 180).any() or \
                (bounds[:, [1, 3]] < -90).any() or (bounds[:, [1, 3]] > 90).any():
            return None
    return shapes


def _distinct_pairs(probes: np.ndarray, indexed: np.ndarray,
                    grow: tuple[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of (probe, indexed) positions whose grown boxes meet: an STRtree
    over ``indexed``, queried with each probe's grown box."""
    probe_at = np.flatnonzero(probes != None)  # noqa: E711
    indexed_at = np.flatnonzero(indexed != None)  # noqa: E711
    if not len(probe_at) or not len(indexed_at):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    tree = shapely.STRtree(indexed[indexed_at])
    boxes = _grown_boxes(shapely.bounds(probes[probe_at].astype(object)), grow)
    found = tree.query(shapely.box(boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]))
    return probe_at[found[0]], indexed_at[found[1]]


def _grown_boxes(bounds: np.ndarray, grow: tuple[str, float]) -> np.ndarray:
    """``bounds`` (xmin, ymin, xmax, ymax rows, in degrees) grown by the reach."""
    kind, amount = grow
    boxes = bounds.astype(float)
    if kind == "deg":
        pad = amount * (1 + _SLACK) + _SLACK
        return boxes + np.array([-pad, -pad, pad, pad])
    dlat = amount / METRES_PER_DEGREE * (1 + _SLACK) + _SLACK
    highest = np.maximum(np.abs(boxes[:, 1]), np.abs(boxes[:, 3])) + dlat
    polar = highest >= 89.0
    dlon = np.where(polar, 360.0, dlat / np.cos(np.radians(np.minimum(highest, 89.0))))
    grown = boxes + np.column_stack([-dlon, np.full(len(boxes), -dlat), dlon, np.full(len(boxes), dlat)])
    wraps = polar | (grown[:, 0] < -180) | (grown[:, 2] > 180)
    grown[wraps, 0], grown[wraps, 2] = -180.0, 180.0
    return grown


def _row_pairs(left_pairs: np.ndarray, right_pairs: np.ndarray, left_rows: np.ndarray,
               right_rows: np.ndarray, n_left: int, n_right: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of rows whose distinct geometries form one of the pairs
    (``left_rows``: each row's distinct geometry on the left, and so on)."""
    left_order, left_lo, left_hi = _row_ranges(left_rows, n_left)
    right_order, right_lo, right_hi = _row_ranges(right_rows, n_right)
    pair, left_pos = expand_ranges(left_lo[left_pairs], left_hi[left_pairs])
    which, right_pos = expand_ranges(right_lo[right_pairs[pair]], right_hi[right_pairs[pair]])
    return left_order[left_pos[which]], right_order[right_pos]


def _row_ranges(rows: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows sorted by distinct value, and each value's range in that order."""
    order = np.argsort(rows, kind="stable")
    counts = np.bincount(rows, minlength=n)
    hi = np.cumsum(counts)
    return order, hi - counts, hi
