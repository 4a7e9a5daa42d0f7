"""A window's graph in a cluster: each step runs on the shards that hold its rows.

A window of a stream is, on every shard, the batches of that shard's share
(:mod:`~engine.cluster.shard_streams`), and the shard also holds its part
of the stored graphs a C-SPARQL query merges with the window (in the same
role: a window triple and the stored triples of its subject, or object,
live on one shard). So a step of a window's query is one call to the owners
of its bound keys, which match their share of the window beside their part
of the stored graphs and answer the merged matches (one node's
:class:`~engine.store.window_graph.WindowGraph` run per shard); a pattern
with nothing bound goes to every shard's ``out`` role, where each triple is
exactly once.

The planner's statistics come from the batches' summaries the coordinator
keeps (``PredicateStats``) and the stored graphs' cached counts; only the
count of a pattern's bound constant asks its owner. A pattern whose
predicate no batch of the window holds reads the stored graph alone, with
its in-place reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from engine.cluster.partition import IN, OUT
from engine.cluster.sharded_graph import ShardedGraph, ShardSteps
from engine.store import EMPTY, Graph, Matches

if TYPE_CHECKING:
    from engine.cluster.sharded_store import ShardedQuadStore


@dataclass(frozen=True)
class PredicateStats:
    """Per predicate of one batch: triples, distinct subjects, distinct
    objects (Wukong's index vertices, as a batch's own index has them)."""

    predicates: np.ndarray
    triples: np.ndarray
    subjects: np.ndarray
    objects: np.ndarray
    #: (triples, distinct subjects, distinct objects) of the whole batch
    total: tuple[int, int, int]

    @classmethod
    def of(cls, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> PredicateStats:
        """The statistics of a batch's rows (IDs below 2**31, as the store packs its keys)."""
        predicates, triples = np.unique(p, return_counts=True)
        _, subjects = np.unique(np.unique((p << 32) | s) >> 32, return_counts=True)
        _, objects = np.unique(np.unique((p << 32) | o) >> 32, return_counts=True)
        return cls(predicates, triples, subjects, objects, (len(s), len(np.unique(s)), len(np.unique(o))))

    def get(self, p: int | None) -> tuple[int, int, int]:
        if p is None:
            return self.total
        at = int(np.searchsorted(self.predicates, p))
        if at == len(self.predicates) or self.predicates[at] != p:
            return 0, 0, 0
        return int(self.triples[at]), int(self.subjects[at]), int(self.objects[at])


@dataclass(frozen=True)
class StreamSpan:
    """One stream's window ``[start, end)``, with the statistics of the batches it spans."""

    stream: int
    start: int
    end: int
    stats: tuple[PredicateStats, ...]


class ShardedWindowGraph(ShardSteps):
    """The :class:`~engine.store.graph.Graph` of a query's windows (spans per
    query window, read as one set) beside the ``stored`` graphs, on the shards."""

    def __init__(self, store: ShardedQuadStore, windows: Sequence[Sequence[StreamSpan]],
                 stored: Sequence[Graph]) -> None:
        self.calls = store.calls
        self.windows = [tuple(spans) for spans in windows if spans]
        self.spans = tuple(tuple((w.stream, w.start, w.end) for w in spans) for spans in self.windows)
        self._stats = [batch for spans in self.windows for span in spans for batch in span.stats]
        self.stored = [g for g in stored if len(g)]
        for graph in self.stored:
            if not isinstance(graph, ShardedGraph):
                raise TypeError("a window on the shards is merged with sharded graphs, "
                                f"not {type(graph).__name__}")
        self.beside = tuple(g.graph_id for g in self.stored)
        #: every stored graph was cut as of the same window close
        self.cutoffs = next((g.cutoffs for g in self.stored if g.cutoffs), None)
        self.version = self.stored[0].version if self.stored else store.snapshot().version

    # ------------------------------------------------------------ sizes
    def __len__(self) -> int:
        """Rows of the batches the window spans (whole: the border batches
        count fully, an upper bound) plus the stored triples."""
        return sum(stats.total[0] for stats in self._stats) + sum(len(g) for g in self.stored)

    def _window_stats(self, p: int | None) -> tuple[int, int, int]:
        totals = [0, 0, 0]
        for stats in self._stats:
            for i, n in enumerate(stats.get(p)):
                totals[i] += n
        return totals[0], totals[1], totals[2]

    def _holds(self, p: np.ndarray | None) -> bool:
        """Whether a batch of the window may hold predicate ``p`` (a column;
        only a column of one constant is checked)."""
        if not self._stats:
            return False
        if p is None or not len(p) or not bool((p == p[0]).all()):
            return True
        return self._window_stats(int(p[0]))[0] > 0

    def count(self, s: int | None, p: int | None, o: int | None) -> int:
        if any(v is not None and v <= 0 for v in (s, p, o)):
            return 0
        window_has_p = self._window_stats(p)[0] > 0
        if (s is None and o is None) or not window_has_p:
            stored = sum(g.count(s, p, o) for g in self.stored)
            return stored + (self._window_stats(p)[0] if s is None and o is None else 0)
        role, key, other = (OUT, s, o) if s is not None else (IN, o, None)
        owner = key % self.calls.shards
        call = ("window_count", (self.version, role, self.spans, self.beside, self.cutoffs, key, p, other))
        return self.calls.fork({owner: call})[owner]

    def degree_stats(self, p: int | None) -> tuple[int, int, int]:
        """Summed over the batches and the stored graphs (distinct counts are an upper bound)."""
        totals = list(self._window_stats(p))
        for graph in self.stored:
            for i, n in enumerate(graph.degree_stats(p)):
                totals[i] += n
        return totals[0], totals[1], totals[2]

    # ------------------------------------------------------------ steps
    def match(self, s: np.ndarray | None, p: np.ndarray | None, o: np.ndarray | None, n_rows: int
              ) -> Matches:
        if not self._holds(p):
            if len(self.stored) == 1:  # the stored graph alone, read in place where it can be
                return self.stored[0].match(s, p, o, n_rows)
            if not self.stored:
                return EMPTY, EMPTY, EMPTY, EMPTY
        return super().match(s, p, o, n_rows)

    def _step(self, role: str, key: np.ndarray | None, p: np.ndarray | None, other: np.ndarray | None,
              n_rows: int) -> tuple[str, tuple]:
        return "window_match", (self.version, role, self.spans, self.beside, self.cutoffs, key, p, other,
                                n_rows)

    @cached_property
    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every triple once (the rare operators that scan a whole graph)."""
        _, s, p, o = self.match(None, None, None, 1)
        return s, p, o
