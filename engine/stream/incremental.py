"""Incremental window evaluation: only what the batches entering and leaving
the window change (SPECTRA's idea, made exact by the delta rule of joins).

A window that slides by STEP over a RANGE keeps most of its content: the
window before it lost the rows of ``L = [c - STEP - RANGE, c - RANGE)`` and
gains those of ``D = [c - STEP, c)``; the rows in between, with the stored
``FROM`` graphs, form ``G_old``. For a basic graph pattern ``P1 ... Pn``
(C-SPARQL: every pattern reads the merge of windows and FROM graphs), the
solutions of the new window are those of the old one, minus the solutions
that use a triple of ``L``, plus those that use a triple of ``D``. Each set is
a sum of ``n`` small explorations; the one for pattern ``i`` reads

* ``Pi`` in ``D`` alone (the few entering triples, explored first),
* ``P1 .. Pi-1`` in ``G_old`` (so a solution is counted at its first entering triple),
* ``Pi+1 .. Pn`` in ``G_old`` plus ``D``,

and the same with ``L`` and the previous window for what leaves. The rule
needs ``D`` and ``L`` to hold no triple of ``G_old``, so the rows of ``D`` and
``L`` that are (a triple repeated within the window, or one also stored in a
FROM graph) are left out first: they change nothing. The window is evaluated
in full when the stored graphs changed (an update, an absorbed batch), or
when the previous window was not evaluated by this query alone. FILTERs that depend
only on their row are applied to each delta; projection makes the result a
multiset of rows, which the report policy keeps, so RSTREAM, ISTREAM and
DSTREAM all follow from the change.

Which path is cheaper depends on the query (a constant-first join costs its
matches either way; a join across the whole window costs the window in
full): like Strider, the query measures both and takes the cheaper, trying
the other now and then. Shapes that qualify are listed in ``docs/architecture.md``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from statistics import median

import numpy as np

from engine.rdf import XSD, Variable
from engine.sparql import algebra as A
from engine.sparql.exec import Executor, QueryDataset, QueryTerms
from engine.sparql.expr import EvalContext, expression_variables
from engine.sparql.plan import HeldOrders, pattern_variables
from engine.sparql.syntax import ContinuousQuery
from engine.store import Graph, TimedTriples, TimeSlice, WindowGraph
from engine.stream.id_rows import WindowRows
from engine.stream.kept_window import KeptWindow
from engine.stream.registry import StreamState

#: the cheaper path is re-measured every this many windows
EXPLORE_EVERY = 16
#: how many recent windows of each path its cost is the median of
_RECENT = 5


#: the source of a pattern that reads the stored graphs (RSP-QL, outside WINDOW)
STORED = -1
#: the source of every C-SPARQL pattern: the merge of the windows and FROM graphs
MERGED = -2


@dataclass(frozen=True)
class DeltaShape:
    """What incremental evaluation needs of a query: its distinct triple
    patterns with the graph each reads (a window's index in the
    registration, STORED or MERGED), its FILTER conditions and its projected
    variables."""

    patterns: tuple[tuple[A.TriplePattern, int], ...]
    conditions: tuple[A.Expr, ...]
    variables: tuple[str, ...]


def delta_shape(spec: ContinuousQuery) -> DeltaShape | None:
    """The shape of ``spec`` if its windows can be evaluated incrementally: a
    SELECT of a projected join of basic graph patterns (in RSP-QL, some in
    ``WINDOW`` blocks) under row-local FILTERs, over time windows of one
    RANGE and one STEP smaller than it. Windows of different STEPs do not all
    move at each instant of their query: such a query is evaluated in full."""
    query = spec.query
    if spec.output_stream is not None or query.form != "SELECT" or not isinstance(query.pattern, A.Project):
        return None
    if any(w.triples is not None for w in spec.windows):
        return None
    spans = {(w.range_ms, w.step_ms) for w in spec.windows}
    if len(spans) != 1 or spec.windows[0].step_ms >= spec.windows[0].range_ms:
        return None
    windows = {w.name: i for i, w in enumerate(spec.windows)}
    found = _collect(query.pattern.pattern, MERGED if spec.language == "csparql" else STORED, windows)
    if found is None:
        return None
    patterns, conditions = found
    sources = dict.fromkeys(patterns)
    if len({pattern for pattern, _ in sources}) != len(sources) or all(src == STORED for _, src in sources):
        return None  # one pattern read in two graphs, or no window read at all
    return DeltaShape(tuple(sources), tuple(conditions), tuple(v.name for v in query.pattern.vars))


def _collect(node: A.Pattern, source: int, windows: dict) -> tuple[list, list] | None:
    """The triple patterns of ``node`` with their sources, and its FILTER
    conditions; None unless ``node`` is joins of BGPs (and WINDOW blocks)
    under FILTERs that read only their group's variables (so that applying
    them to the whole join changes nothing)."""
    if isinstance(node, A.BGP):
        return [(t, source) for t in node.triples], []
    if isinstance(node, A.Window) and source == STORED and node.name in windows:
        return _collect(node.pattern, windows[node.name], windows)
    if isinstance(node, A.Join):
        left, right = _collect(node.left, source, windows), _collect(node.right, source, windows)
        if left is None or right is None:
            return None
        return left[0] + right[0], left[1] + right[1]
    if isinstance(node, A.Filter):
        inner = _collect(node.pattern, source, windows)
        if inner is None or not _row_local(node.condition):
            return None
        group = set().union(*(pattern_variables(t) for t, _ in inner[0]))
        if not expression_variables(node.condition) <= group:
            return None
        return inner[0], [*inner[1], node.condition]
    return None


def _row_local(expr: A.Expr) -> bool:
    """Whether ``expr`` depends on its row alone: no EXISTS or randomness
    (:func:`expression_variables` says), no clock, no extension function
    (f:timestamp reads the window)."""
    if expression_variables(expr) is None:
        return False
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, A.CallExpr):
            if node.name == "NOW":
                return False
            stack += node.args
        elif isinstance(node, A.FunctionExpr):
            if not node.iri.startswith(XSD):
                return False
            stack += node.args
        elif isinstance(node, A.BinaryExpr):
            stack += (node.left, node.right)
        elif isinstance(node, A.UnaryExpr):
            stack.append(node.operand)
        elif isinstance(node, A.InExpr):
            stack += (node.expr, *node.options)
    return True


Parts = list[list[TimedTriples | TimeSlice]]
#: when queries take the incremental path: where measured cheaper, whenever exact, never
INCREMENTAL_MODES = ("auto", "always", "never")


class _PathCosts:
    """The recent costs (ms) of the two paths, and how many windows took each.

    A path's cost is the median of its last few windows, not counting its
    first (orders and hash sets are built on first use): a noisy window does
    not decide for long."""

    def __init__(self) -> None:
        self._recent: dict[bool, deque[float]] = {True: deque(maxlen=_RECENT), False: deque(maxlen=_RECENT)}
        self.full_windows = 0
        self.delta_windows = 0

    def record(self, delta: bool, elapsed_ms: float) -> None:
        """Count a window of the path; its cost counts from the path's second
        window on (the first pays for what later windows find built)."""
        windows = self.delta_windows if delta else self.full_windows
        if windows:
            self._recent[delta].append(elapsed_ms)
        if delta:
            self.delta_windows += 1
        else:
            self.full_windows += 1

    def cost(self, delta: bool) -> float | None:
        """The median of the path's recent costs (None: not measured yet)."""
        recent = self._recent[delta]
        return median(recent) if recent else None

    def prefers_delta(self) -> bool:
        """Incremental unless measured slower; every EXPLORE_EVERY-th window tries
        the other path, so a query whose cost moves is re-measured."""
        full, delta = self.cost(False), self.cost(True)
        if delta is None:
            return True  # measure the incremental path first
        if full is None:
            return False
        explore = (self.full_windows + self.delta_windows) % EXPLORE_EVERY == 0
        return (delta <= full) != explore


class IncrementalWindows:
    """The incremental state of one query: which window its result (kept by
    its report policy) belongs to, and the stored graphs it was computed over."""

    def __init__(self, shape: DeltaShape, range_ms: int, step_ms: int, always: bool = False) -> None:
        self.shape = shape
        #: take the incremental path whenever it is exact, whatever it costs
        self.always = always
        self.range_ms = range_ms
        self.step_ms = step_ms
        self.costs = _PathCosts()
        #: per pattern, the orders of the exploration starting from its change
        #: (held across windows: :class:`~engine.sparql.plan.HeldOrders`)
        self.plans = [HeldOrders() for _ in shape.patterns]
        #: close of the window whose result the report policy holds (None: none)
        self._close: int | None = None
        #: the FROM graphs that result was computed over (compared by identity)
        self._stored: tuple = ()

    def based_on(self, close: int, stored: tuple) -> None:
        """The report policy now holds the result of the window closing at
        ``close``, computed in full over the ``stored`` graphs."""
        self._close = close
        self._stored = stored

    def unchanged(self, close: int) -> None:
        """The window closing at ``close`` read what the last one did: the
        result held is its result too."""
        if self._close is not None:
            self._close = close

    def forget(self) -> None:
        """The result held is no longer this query's last window (it was
        evaluated in a group): the next window is evaluated in full."""
        self._close = None

    def change(self, streams: list[StreamState], stored: tuple, beside, terms: QueryTerms,
               base: str | None, close: int, kept_window: KeptWindow | None = None,
               ) -> tuple[WindowRows, WindowRows] | None:
        """``(added, removed)`` rows from the previous window's result to the
        result of the window closing at ``close``; None when that cannot be
        computed exactly (or is measured to cost more than a full evaluation),
        and the window must be evaluated in full. ``kept_window``: what the
        query keeps of its window across steps (the batches read without
        the triples of an unchanging FROM graph), if anything."""
        if self._close != close - self.step_ms or len(stored) != len(self._stored) or not all(
            same_graph(a, b) for a, b in zip(stored, self._stored, strict=True)
        ):
            return None
        if not (self.always or self.costs.prefers_delta()):
            return None
        start = close - self.range_ms
        logs = [s.log for s in streams]
        window_graph = logs[0].window_graph
        # in this process the FROM graphs are merged once; a cluster's window graphs
        # merge their shares of the FROM graphs on each shard
        from_graphs = ((beside,) if beside is not None else ()) if logs[0].in_process else stored
        entering = _Change([log.window(close - self.step_ms, close) for log in logs],
                           [log.local_window(close - self.step_ms, close) for log in logs])
        leaving = _Change([log.window(start - self.step_ms, start) for log in logs],
                          [log.local_window(start - self.step_ms, start) for log in logs])
        kept = [log.window(start, close - self.step_ms) for log in logs]
        if self.shape.patterns[0][1] == MERGED:  # C-SPARQL: one graph, windows and FROM graphs
            if kept_window is not None and from_graphs:
                kept = kept_window.parts(kept, from_graphs, close)
                entering = _Change(kept_window.parts(entering.parts, from_graphs, close), entering.rows)
                leaving = _Change(kept_window.parts(leaving.parts, from_graphs, close), leaving.rows)
            incoming = {MERGED: _versions(entering, kept, from_graphs, window_graph)}
            outgoing = {MERGED: _versions(leaving, kept, from_graphs, window_graph)}
        else:  # RSP-QL: each window a graph of its own, beside the unchanging stored graph
            same = _Versions(None, beside, beside)
            incoming, outgoing = {STORED: same}, {STORED: same}
            for k in {source for _, source in self.shape.patterns if source != STORED}:
                incoming[k] = _versions(entering.of(k), [kept[k]], (), window_graph)
                outgoing[k] = _versions(leaving.of(k), [kept[k]], (), window_graph)
        default = beside if beside is not None and len(beside) else window_graph(kept, ())
        executor = Executor(terms, QueryDataset(default, {}), EvalContext(base=base))
        added = self._delta(executor, incoming, terms)
        removed = self._delta(executor, outgoing, terms)
        self._close = close
        return added, removed

    def _delta(self, executor: Executor, versions: dict[int, _Versions], terms: QueryTerms) -> WindowRows:
        """The projected rows of the solutions over the ``after`` graphs that
        use at least one triple of a ``delta``: per pattern ``i`` whose graph
        changed, ``i`` in its delta, the patterns before it in their ``before``
        graphs, those after it in their ``after`` graphs."""
        patterns = self.shape.patterns
        found: list[dict[str, np.ndarray]] = []
        length = 0
        for i, (pattern, source) in enumerate(patterns):
            delta = versions[source].delta
            if delta is None or not _may_match(delta, pattern, terms):
                continue
            graph_of = {p: (versions[src].before if j < i else versions[src].after)
                        for j, (p, src) in enumerate(patterns)}
            graph_of[pattern] = delta
            solutions = executor.explore(graph_of, plans=self.plans[i])
            for condition in self.shape.conditions:
                solutions = executor.keep_where(condition, solutions)
            if solutions.length:
                found.append({v: solutions.column(v) for v in self.shape.variables})
                length += solutions.length
        ids = np.zeros((length, len(self.shape.variables)), dtype=np.int64)
        for k, v in enumerate(self.shape.variables if found else ()):
            ids[:, k] = np.concatenate([f[v] for f in found])
        return WindowRows(ids, terms.dictionary, terms.decode_column)


@dataclass(frozen=True)
class _Versions:
    """One graph of the query across a change: the triples that entered (or
    left) it, and the graph without and with them; ``delta`` is None for a
    graph that does not change."""

    delta: Graph | None
    before: Graph
    after: Graph


@dataclass(frozen=True)
class _Change:
    """The rows entering (or leaving) the window, per stream: as the log's
    parts (what a window graph reads) and as parts in this process (the few
    rows the delta explorations start from; copied from a cluster's shards)."""

    parts: list
    rows: Parts

    def of(self, k: int) -> _Change:
        """The change of the query's window ``k`` alone."""
        return _Change([self.parts[k]], [self.rows[k]])


def _versions(change: _Change, kept: list, from_graphs: tuple[Graph, ...], window_graph) -> _Versions:
    """The versions of the window graph over ``kept`` (beside ``from_graphs``)
    when the rows of ``change`` enter or leave it; the changed rows that are
    in the graph anyway are no change (a repeated triple, one stored as well)."""
    before = window_graph(kept, from_graphs)
    return _Versions(WindowGraph(_outside(change.rows, before)), before,
                     window_graph(_joined(kept, change.parts), from_graphs))


def same_graph(a: Graph, b: Graph) -> bool:
    """Whether two stored graphs hold the same triples: the same object, or
    (a cluster's graphs, made anew at every commit) the same graph unchanged
    since (its ``unchanged_since`` key)."""
    if a is b:
        return True
    key = getattr(a, "unchanged_since", None)
    return key is not None and key == getattr(b, "unchanged_since", None)


def _may_match(graph: WindowGraph, pattern: A.TriplePattern, terms: QueryTerms) -> bool:
    """Whether ``graph`` may hold a match of ``pattern`` (its constants' count):
    a window change no pattern can match costs this test, not an exploration."""
    constants = [None if isinstance(t, Variable) else terms.encode(t)
                 for t in (pattern.subject, pattern.predicate, pattern.object)]
    return graph.count(*constants) > 0


def _outside(parts: Parts, graph: Graph) -> Parts:
    """The rows of ``parts`` that are not triples of ``graph``: a triple that
    enters (or leaves) the window while it occurs elsewhere in it, or in a
    stored graph, changes nothing, and must not count as a change."""
    kept: Parts = []
    for stream_parts in parts:
        outside = []
        for part in stream_parts:
            if not len(part):
                continue
            inside = graph.contains(part.s, part.p, part.o)
            if not inside.any():
                outside.append(part)
            elif not inside.all():
                new = ~inside
                outside.append(TimedTriples(part.ts[new], part.s[new], part.p[new], part.o[new],
                                            maybe_repeats=True))
        kept.append(outside)
    return kept


def _joined(first: list, second: list) -> list:
    """Per stream, the parts of ``first`` then those of ``second``."""
    return [a + b for a, b in zip(first, second, strict=True)]
