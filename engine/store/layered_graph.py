"""A stored graph that absorbs stream batches: a base graph plus timestamped deltas.

Appending a batch must not rebuild the stored graph (that would cost the size
of the stored data on every batch), so each batch's new triples become a small
sorted delta, and reads go through all layers (:class:`UnionGraph`). Deltas
from streams remember each triple's application timestamp: a continuous query
evaluating the window that closes at ``t`` reads the graph *as of* ``t``
(only triples absorbed from items with timestamp ``< t``), which is Wukong+S's
consistent snapshot for that window, whatever has been ingested since.

Compaction merges deltas (first among themselves, then into the base) only
when no pending window can need an as-of view that cuts through them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.store.compact_graph import CompactGraph
from engine.store.graph import Graph
from engine.store.memory_graph import MemoryGraph
from engine.store.union_graph import UnionGraph

#: stream number of deltas that do not come from a stream (no application time)
NO_STREAM = -1
#: merge deltas among themselves beyond this many
MAX_DELTAS = 16


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
        keep = self.ts < cutoff
        t = self.triples
        return MemoryGraph(t.s[keep], t.p[keep], t.o[keep], unique=True)


def make_delta(s: np.ndarray, p: np.ndarray, o: np.ndarray, ts: np.ndarray, stream: int) -> Delta:
    """A delta from triples that are new to the graph and distinct from each other."""
    order = np.lexsort((o, s, p))
    triples = MemoryGraph(s[order], p[order], o[order], unique=True)
    return Delta(triples, ts[order], stream)


def _merge(deltas: list[Delta]) -> Delta:
    return make_delta(
        np.concatenate([d.triples.s for d in deltas]),
        np.concatenate([d.triples.p for d in deltas]),
        np.concatenate([d.triples.o for d in deltas]),
        np.concatenate([d.ts for d in deltas]),
        deltas[0].stream,
    )


class LayeredGraph(UnionGraph):
    """Base graph (in memory or memory-mapped) plus absorbed deltas."""

    def __init__(self, base: Graph, deltas: tuple[Delta, ...] = ()) -> None:
        super().__init__([base, *(d.triples for d in deltas)])
        self.base = base
        self.deltas = deltas

    def appended(
        self, s: np.ndarray, p: np.ndarray, o: np.ndarray, ts: np.ndarray, stream: int
    ) -> LayeredGraph:
        """A new version with the triples not yet in the graph added as a delta.
        Duplicates within the batch keep their earliest timestamp."""
        if not len(s):
            return self
        order = np.lexsort((ts, o, s, p))
        s, p, o, ts = s[order], p[order], o[order], ts[order]
        first = np.ones(len(s), dtype=bool)
        first[1:] = (s[1:] != s[:-1]) | (p[1:] != p[:-1]) | (o[1:] != o[:-1])
        s, p, o, ts = s[first], p[first], o[first], ts[first]
        new = ~self.contains(s, p, o)
        if not new.any():
            return self
        delta = Delta(MemoryGraph(s[new], p[new], o[new], unique=True), ts[new], stream)
        return LayeredGraph(self.base, (*self.deltas, delta))

    def without(self, gone: MemoryGraph) -> LayeredGraph:
        """A new version without the triples of ``gone`` (SPARQL DELETE): the
        base is rebuilt only if it holds some of them; deltas keep the
        timestamps of the rows that stay."""
        base = self.base
        if base.contains(gone.s, gone.p, gone.o).any():
            base = base.with_changes(None, gone)
        deltas = []
        for d in self.deltas:
            keep = ~gone.contains(d.triples.s, d.triples.p, d.triples.o)
            if keep.all():
                deltas.append(d)
            elif keep.any():
                t = d.triples
                deltas.append(Delta(MemoryGraph(t.s[keep], t.p[keep], t.o[keep], unique=True), d.ts[keep],
                                    d.stream))
        return LayeredGraph(base, tuple(deltas))

    def as_of(self, cutoffs: dict[int, int]) -> UnionGraph:
        """The graph as a window closing at ``cutoffs[stream]`` must see it."""
        if not any(d.stream in cutoffs for d in self.deltas):
            return self
        members = [self.base]
        for d in self.deltas:
            part = d.before(cutoffs[d.stream]) if d.stream in cutoffs else d.triples
            if part is not None:
                members.append(part)
        return UnionGraph(members)

    def compacted(self, safe: dict[int, int]) -> LayeredGraph:
        """Merge what no pending window will cut through: the deltas of a stream
        whose rows are all older than ``safe[stream]`` (streams not in ``safe``
        have no pending window). Small deltas merge among themselves; all of
        them merge into the base once they hold a quarter of its size."""
        if not self.deltas:
            return self
        movable: list[Delta] = []
        pinned: list[Delta] = []
        for d in self.deltas:
            (movable if d.stream not in safe or d.max_ts < safe[d.stream] else pinned).append(d)
        delta_rows = sum(len(d.triples) for d in movable)
        if movable and delta_rows * 4 >= max(len(self.base), 65536):
            base = self.base
            s, p, o = base.s, base.p, base.o
            columns = (np.concatenate([s, *(d.triples.s for d in movable)]),
                       np.concatenate([p, *(d.triples.p for d in movable)]),
                       np.concatenate([o, *(d.triples.o for d in movable)]))
            # a compact base stays compact (27 bytes a triple, not up to 96)
            merged = CompactGraph.build(*columns) if isinstance(base, CompactGraph) else MemoryGraph(*columns)
            return LayeredGraph(merged, tuple(pinned))
        if len(self.deltas) > MAX_DELTAS:
            groups: dict[int, list[Delta]] = {}
            for d in movable:
                groups.setdefault(d.stream, []).append(d)
            merged_deltas = [_merge(g) if len(g) > 1 else g[0] for g in groups.values()]
            return LayeredGraph(self.base, (*merged_deltas, *pinned))
        return self
