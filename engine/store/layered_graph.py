"""A stored graph that absorbs stream batches: a base graph plus timestamped deltas.

Appending a batch must not rebuild the stored graph (that would cost the size
of the stored data on every batch), so each batch's new triples become a small
sorted delta, and reads go through all layers (:class:`UnionGraph`). Deltas
from streams remember each triple's application timestamp: a continuous query
evaluating the window that closes at ``t`` reads the graph *as of* ``t``
(only triples absorbed from items with timestamp ``< t``), which is Wukong+S's
consistent snapshot for that window, whatever has been ingested since.

A triple is held once (the graph is a set), by the delta of the first item
that brought it. Another stream may absorb the same triple later, with an
earlier timestamp of its own: that copy is kept beside the deltas (not read
as a member, so nothing is counted twice), and an as-of read shows a triple
when *any* of its copies is visible: one from a stream the window does not
read (stored data to it), or one with a timestamp before the window's close.
Only the first copy of each stream counts (a stream's timestamps never
decrease). An update's insert makes the triple stored data for every later
read, and its delete removes the triple with all its copies.

Compaction merges deltas (first among themselves, then into the base) only
when no pending window can need an as-of view that cuts through them; the
copies of triples merged into the base are dropped then (a triple of the
base is visible to every window).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.rdf import is_value
from engine.store.compact_graph import CompactGraph, holds_values
from engine.store.graph import Graph
from engine.store.memory_graph import MemoryGraph, all_columns
from engine.store.sorted_triples_kernel import contains_sorted, merge_sorted
from engine.store.trimmed_graph import TrimmedGraph, is_compact, without_triples
from engine.store.union_graph import UnionGraph

#: stream number of deltas that do not come from a stream (no application time)
NO_STREAM = -1
#: merge deltas among themselves beyond this many
MAX_DELTAS = 16
#: an update's delta absorbs an earlier update delta this small, or at most
#: :data:`TIER_RATIO` times its own size (see :meth:`LayeredGraph._with_delta`)
SMALL_DELTA_ROWS = 4096
TIER_RATIO = 4
#: what :meth:`LayeredGraph._held_by` says of a triple the base holds, and of one the graph lacks
IN_BASE, ABSENT = -2, -3


@dataclass(frozen=True)
class Delta:
    """New triples of one or more batches of one stream, sorted, with the
    timestamp of each row (aligned with ``triples``' columns)."""

    triples: MemoryGraph
    ts: np.ndarray
    stream: int

    @cached_property
    def min_ts(self) -> int:
        return int(self.ts.min()) if len(self.ts) else 0

    @cached_property
    def max_ts(self) -> int:
        return int(self.ts.max()) if len(self.ts) else 0

    def before(self, cutoff: int) -> MemoryGraph | None:
        """The rows with timestamp < cutoff (None when there are none)."""
        if not len(self.ts) or self.min_ts >= cutoff:
            return None
        if self.max_ts < cutoff:
            return self.triples
        return self.rows(self.ts < cutoff).triples

    def rows(self, keep: np.ndarray) -> Delta:
        """The delta of the rows where ``keep`` is True."""
        t = self.triples
        return Delta(MemoryGraph(t.s[keep], t.p[keep], t.o[keep], unique=True), self.ts[keep], self.stream)


def make_delta(s: np.ndarray, p: np.ndarray, o: np.ndarray, ts: np.ndarray, stream: int) -> Delta:
    """A delta from triples that are new to the graph and distinct from each other."""
    order = np.lexsort((o, s, p))
    triples = MemoryGraph(s[order], p[order], o[order], unique=True)
    return Delta(triples, ts[order], stream)


def split_values(s: np.ndarray, p: np.ndarray, o: np.ndarray) -> tuple[CompactGraph, Delta | None]:
    """CSR arrays of the triples (any order, repeats allowed) that name no
    value ID, and the others as a delta of stored data (no stream), None when
    there are none: CSR arrays are indexed by vertex ID, and a value ID
    (``engine.rdf.value_ids``, 2**30 and up) would size them by the value."""
    if not holds_values(s, o):
        return CompactGraph.build(s, p, o), None
    rows = is_value(s) | is_value(o)
    values = MemoryGraph(s[rows], p[rows], o[rows])
    compact = CompactGraph.build(s[~rows], p[~rows], o[~rows])
    return compact, make_delta(values.s, values.p, values.o, np.zeros(len(values), dtype=np.int64), NO_STREAM)


def compact_layers(s: np.ndarray, p: np.ndarray, o: np.ndarray) -> Graph:
    """The triples as compact CSR arrays, the ones that name a value ID
    beside them (:func:`split_values`)."""
    compact, values = split_values(s, p, o)
    return compact if values is None else LayeredGraph(compact, (values,))


def _value_rows(d: Delta) -> int:
    t = d.triples
    return int(np.count_nonzero(is_value(t.s) | is_value(t.o)))


def _merge(deltas: list[Delta]) -> Delta:
    return make_delta(
        np.concatenate([d.triples.s for d in deltas]),
        np.concatenate([d.triples.p for d in deltas]),
        np.concatenate([d.triples.o for d in deltas]),
        np.concatenate([d.ts for d in deltas]),
        deltas[0].stream,
    )


class LayeredGraph(UnionGraph):
    """Base graph (in memory or memory-mapped) plus absorbed deltas, and the
    later copies of delta triples that other streams absorbed (``copies``:
    not members; only :meth:`as_of` reads them)."""

    def __init__(self, base: Graph, deltas: tuple[Delta, ...] = (), copies: tuple[Delta, ...] = ()) -> None:
        super().__init__([base, *(d.triples for d in deltas)])
        self.base = base
        self.deltas = deltas
        self.copies = copies

    def _held_by(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
        """Per triple (sorted by p, s, o), the stream of the delta that holds
        it: ``IN_BASE`` for the base, ``ABSENT`` when the graph does not hold
        it. Each layer is probed only with the triples the layers before it lack."""
        held = np.full(len(s), ABSENT, dtype=np.int64)
        held[_contains(self.base, s, p, o)] = IN_BASE
        for d in self.deltas:
            rest = np.flatnonzero(held == ABSENT)
            if not len(rest):
                break
            held[rest[_contains(d.triples, s[rest], p[rest], o[rest])]] = d.stream
        return held

    def appended(
        self, s: np.ndarray, p: np.ndarray, o: np.ndarray, ts: np.ndarray, stream: int
    ) -> LayeredGraph:
        """A new version with the batch absorbed: its triples new to the graph
        as a delta, and the triples another stream's delta holds as copies of
        ``stream`` (unless ``stream`` has one already). Duplicates within the
        batch keep their earliest timestamp. From an update (``NO_STREAM``),
        the triples a stream delta holds become stored data: they move to the
        update's delta, and their copies go."""
        if not len(s):
            return self
        order = np.lexsort((ts, o, s, p))
        s, p, o, ts = s[order], p[order], o[order], ts[order]
        first = np.ones(len(s), dtype=bool)
        first[1:] = (s[1:] != s[:-1]) | (p[1:] != p[:-1]) | (o[1:] != o[:-1])
        s, p, o, ts = s[first], p[first], o[first], ts[first]
        held = self._held_by(s, p, o)
        new = held == ABSENT
        by_stream = (held != ABSENT) & (held != IN_BASE) & (held != NO_STREAM)
        if stream == NO_STREAM:
            graph = self.without(MemoryGraph(s[by_stream], p[by_stream], o[by_stream], unique=True)) \
                if by_stream.any() else self
            return graph._with_delta(Delta(_rows(s, p, o, new | by_stream), ts[new | by_stream], stream))
        copy = by_stream & (held != stream)
        if copy.any():
            for c in self.copies:
                if c.stream == stream:
                    rows = np.flatnonzero(copy)
                    copy[rows[_contains(c.triples, s[rows], p[rows], o[rows])]] = False
        copies = (*self.copies, Delta(_rows(s, p, o, copy), ts[copy], stream)) if copy.any() else self.copies
        graph = LayeredGraph(self.base, self.deltas, copies) if copies is not self.copies else self
        return graph._with_delta(Delta(_rows(s, p, o, new), ts[new], stream))

    def _with_delta(self, delta: Delta) -> LayeredGraph:
        """A new version with ``delta`` as a member. An update's delta (stored
        data: no window ever cuts it) first absorbs the earlier update deltas
        that are small or not much larger than itself, as tiers of an LSM:
        every member costs each pattern of each query a probe, and a trickle
        of one-triple updates would otherwise leave up to :data:`MAX_DELTAS`
        members (measured: a 0.4 ms query at 1M took 1.2-1.8 ms). A triple
        is merged O(log n) times; stream deltas stay apart, as a window may
        cut them by timestamp."""
        if not len(delta.ts):
            return self
        deltas = list(self.deltas)
        if delta.stream == NO_STREAM:
            for i in range(len(deltas) - 1, -1, -1):
                older = deltas[i]
                if older.stream != NO_STREAM:
                    continue
                rows = len(older.triples)
                if rows >= SMALL_DELTA_ROWS and rows > TIER_RATIO * len(delta.triples):
                    break
                delta = _merge([older, delta])
                del deltas[i]
        return LayeredGraph(self.base, (*deltas, delta), self.copies)

    def without(self, gone: MemoryGraph) -> LayeredGraph:
        """A new version without the triples of ``gone`` (SPARQL DELETE): a
        large base keeps them as tombstones (:mod:`engine.store.trimmed_graph`),
        a small one is rebuilt; deltas keep the timestamps of the rows that
        stay; the triples' copies go too."""
        return LayeredGraph(without_triples(self.base, gone), _without(self.deltas, gone),
                            _without(self.copies, gone))

    def as_of(self, cutoffs: dict[int, int]) -> UnionGraph:
        """The graph as a window closing at ``cutoffs[stream]`` must see it: a
        delta row of a stream in ``cutoffs`` from the cutoff on is left out,
        unless a copy of its triple is visible."""
        if not any(d.stream in cutoffs for d in self.deltas):
            return self
        members = [self.base]
        cut: list[Delta] = []
        for d in self.deltas:
            part = d.before(cutoffs[d.stream]) if d.stream in cutoffs else d.triples
            if part is not None:
                members.append(part)
            if part is not d.triples:
                cut.append(d)
        if cut and self.copies:
            revived = self._revived(cutoffs, cut)
            if revived is not None:
                members.append(revived)
        return UnionGraph(members)

    def _revived(self, cutoffs: dict[int, int], cut: list[Delta]) -> MemoryGraph | None:
        """The triples left out of the deltas ``cut`` that a visible copy brings back."""
        visible = [c.triples if c.stream not in cutoffs else c.before(cutoffs[c.stream]) for c in self.copies]
        visible = [v for v in visible if v is not None]
        if not visible:
            return None
        v = MemoryGraph(*(np.concatenate([g.s for g in visible]), np.concatenate([g.p for g in visible]),
                          np.concatenate([g.o for g in visible])))
        back = np.zeros(len(v), dtype=bool)
        for d in cut:
            hidden = d.rows(d.ts >= cutoffs[d.stream]).triples
            back |= hidden.contains(v.s, v.p, v.o)
        return MemoryGraph(v.s[back], v.p[back], v.o[back], unique=True) if back.any() else None

    def compacted(self, safe: dict[int, int]) -> LayeredGraph:
        """Merge what no pending window will cut through: the deltas of a stream
        whose rows are all older than ``safe[stream]`` (streams not in ``safe``
        have no pending window). Small deltas merge among themselves; all of
        them merge into the base once they hold a quarter of its size, and the
        copies of their triples go (a triple of the base is always visible).
        A base whose tombstones are a quarter of it is rebuilt without them first."""
        if isinstance(self.base, TrimmedGraph) and self.base.due():
            return LayeredGraph(self.base.rebuilt(), self.deltas, self.copies).compacted(safe)
        if not self.deltas:
            return self
        movable: list[Delta] = []
        pinned: list[Delta] = []
        for d in self.deltas:
            (movable if d.stream not in safe or d.max_ts < safe[d.stream] else pinned).append(d)
        delta_rows = sum(len(d.triples) for d in movable)
        if is_compact(self.base):  # rows that name a value ID stay beside its arrays
            delta_rows -= sum(_value_rows(d) for d in movable)
        if movable and delta_rows * 4 >= max(len(self.base), 65536):
            base = self.base
            if not is_compact(base):
                merged = _merged_base(base, movable)
                return LayeredGraph(merged, tuple(pinned), _copies_of(self.copies, pinned))
            s, p, o = all_columns(base)
            columns = (np.concatenate([s, *(d.triples.s for d in movable)]),
                       np.concatenate([p, *(d.triples.p for d in movable)]),
                       np.concatenate([o, *(d.triples.o for d in movable)]))
            # a compact base stays compact (27 bytes a triple, not up to 96)
            compact, values = split_values(*columns)
            kept = (values, *pinned) if values is not None else tuple(pinned)
            return LayeredGraph(compact, kept, _copies_of(self.copies, pinned))
        if len(self.deltas) > MAX_DELTAS or len(self.copies) > MAX_DELTAS:
            return LayeredGraph(self.base, (*_merged_by_stream(movable), *pinned),
                                tuple(_merged_by_stream(list(self.copies))))
        return self

    def split(self, safe: dict[int, int]) -> tuple[tuple[Delta, ...], LayeredGraph]:
        """``(folded, apart)`` for a checkpoint: the delta rows every pending
        window sees whole (``safe`` as in :meth:`compacted`, but row by row),
        which may join the base, and a graph over an empty base of the rows
        that must keep their timestamps, with their triples' copies."""
        folded: list[Delta] = []
        kept: list[Delta] = []
        for d in self.deltas:
            if d.stream not in safe or d.max_ts < safe[d.stream]:
                folded.append(d)
            elif d.min_ts >= safe[d.stream]:
                kept.append(d)
            else:
                need = d.ts >= safe[d.stream]
                folded.append(d.rows(~need))
                kept.append(d.rows(need))
        return tuple(folded), LayeredGraph(MemoryGraph.empty(), tuple(kept), _copies_of(self.copies, kept))


def _rows(s: np.ndarray, p: np.ndarray, o: np.ndarray, keep: np.ndarray) -> MemoryGraph:
    return MemoryGraph(s[keep], p[keep], o[keep], unique=True)


def _contains(graph: Graph, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
    """``graph.contains`` for probes sorted by (p, s, o): a forward search of
    the graph's own columns when they are in that order (every delta is, and
    a base this module built), so no sort order or hash set is built for a
    layer that a few batches later is merged away; else the graph's check."""
    if isinstance(graph, MemoryGraph) and graph.in_pso_order:
        return contains_sorted(graph.s, graph.p, graph.o, s, p, o)
    return graph.contains(s, p, o)


def _merged_base(base: Graph, movable: list[Delta]) -> MemoryGraph:
    """The base with the deltas' triples, as one graph: the deltas are made one
    sorted set (small: they hold at most a quarter of the base), then merged
    with the base's sorted columns in one linear pass, where a sort of
    everything would redo the base's order at every compaction."""
    added = MemoryGraph(np.concatenate([d.triples.s for d in movable]),
                        np.concatenate([d.triples.p for d in movable]),
                        np.concatenate([d.triples.o for d in movable]))
    ordered = MemoryGraph(base.s, base.p, base.o)  # no sort when already in (p, s, o) order
    return MemoryGraph(*merge_sorted(ordered.s, ordered.p, ordered.o, added.s, added.p, added.o), unique=True)


def _merged_by_stream(deltas: list[Delta]) -> list[Delta]:
    """One delta per stream (the order of first appearance kept)."""
    groups: dict[int, list[Delta]] = {}
    for d in deltas:
        groups.setdefault(d.stream, []).append(d)
    return [_merge(g) if len(g) > 1 else g[0] for g in groups.values()]


def _without(deltas: tuple[Delta, ...], gone: MemoryGraph) -> tuple[Delta, ...]:
    """The deltas without the rows of ``gone`` (timestamps of the others kept)."""
    kept = []
    for d in deltas:
        keep = ~gone.contains(d.triples.s, d.triples.p, d.triples.o)
        if keep.all():
            kept.append(d)
        elif keep.any():
            kept.append(d.rows(keep))
    return tuple(kept)


def _copies_of(copies: tuple[Delta, ...], deltas: list[Delta]) -> tuple[Delta, ...]:
    """The copies of triples that ``deltas`` hold (the others' triples went to the base)."""
    if not copies or not deltas:
        return ()
    kept = []
    for c in copies:
        t = c.triples
        keep = np.zeros(len(t), dtype=bool)
        for d in deltas:
            keep |= d.triples.contains(t.s, t.p, t.o)
        if keep.any():
            kept.append(c if keep.all() else c.rows(keep))
    return tuple(kept)
