"""A stream's log at a cluster's coordinator: the rows on the shards, a summary here.

The coordinator is where batches arrive and windows are scheduled, but a
batch's rows go to the shards that own their keys (``log`` ops in the
batch's commit, :mod:`~engine.cluster.shard_streams`). What the coordinator
keeps of each batch is a summary: its arrival numbers and time span (which
batches a window spans), the planner's per-predicate statistics (a window
is planned from them without asking a shard) and the term IDs it holds
(released when the batch expires). How far back pending windows read is
sent to the shards with the stream's next batch (an ``expire`` op), so
freeing costs no round trip of its own.

A window's graph (:class:`~engine.cluster.sharded_window_graph.ShardedWindowGraph`)
runs its steps on the shards; rows in arrival order (count windows,
f:timestamp) are gathered from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.cluster.shard_calls import broadcast
from engine.cluster.sharded_window_graph import PredicateStats, ShardedWindowGraph, StreamSpan
from engine.store import Graph, TimedTriples
from engine.stream.transient import WindowContent

if TYPE_CHECKING:
    from engine.cluster.sharded_store import ShardedQuadStore, ShardedTransaction


@dataclass(frozen=True)
class BatchSummary:
    """What the coordinator keeps of one batch whose rows are on the shards."""

    first_seq: int
    rows: int
    min_ts: int
    max_ts: int
    #: the IDs the batch's rows name, once per occurrence (as the engine held them)
    term_ids: np.ndarray
    stats: PredicateStats

    @property
    def last_seq(self) -> int:
        return self.first_seq + self.rows


class ShardedStreamLog:
    """Stream ``stream``'s log for the stream engine
    (:class:`~engine.stream.transient.StreamLog`), its rows on the shards of ``store``."""

    #: the rows are on the shards
    in_process = False

    def __init__(self, store: ShardedQuadStore, stream: int) -> None:
        self.store = store
        self.stream = stream
        self.chunks: list[BatchSummary] = []
        self.total = 0
        #: the expiry bounds last sent to the shards (None: none yet), and the
        #: ones to send with the next batch
        self._sent: tuple[int | None, int | None] | None = None
        self._pending: tuple[int | None, int | None] | None = None

    def append(self, ts: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray, index: bool = True,
               txn: ShardedTransaction | None = None) -> None:
        """Send a batch's rows to the shards in ``txn`` (the transaction that
        absorbs its timeless part: one commit, one fork); keep its summary."""
        if not len(ts):
            return
        if txn is None:
            raise ValueError("a sharded stream's batch travels in the store transaction that absorbs it")
        seq = np.arange(self.total, self.total + len(ts), dtype=np.int64)
        if self._pending is not None:
            txn.expire_stream(self.stream, *self._pending)
            self._sent, self._pending = self._pending, None
        txn.log_stream(self.stream, ts, s, p, o, seq, index)
        ids = np.concatenate([s, p, o])
        self.chunks = [*self.chunks, BatchSummary(self.total, len(ts), int(ts[0]), int(ts[-1]), ids,
                                                  PredicateStats.of(s, p, o))]
        self.total += len(ts)

    def __len__(self) -> int:
        return sum(batch.rows for batch in self.chunks)

    def first_ts(self) -> int | None:
        return self.chunks[0].min_ts if self.chunks else None

    def window(self, start: int, end: int) -> list[StreamSpan]:
        """The window ``[start, end)`` of this stream: one span naming the
        batches it covers (none when it covers none)."""
        batches = tuple(b for b in self.chunks if b.max_ts >= start and b.min_ts < end)
        return [StreamSpan(self.stream, start, end, tuple(b.stats for b in batches))] if batches else []

    def local_window(self, start: int, end: int) -> list[TimedTriples]:
        """The rows of ``[start, end)`` copied here from the shards, as one
        indexed part (the few rows a window step adds or drops, which an
        incremental evaluation starts from)."""
        content = self.time_range(start, end)
        if not len(content):
            return []
        return [TimedTriples(content.ts, content.s, content.p, content.o, maybe_repeats=True)]

    def window_graph(self, windows: Sequence[Sequence[StreamSpan]], stored: Sequence[Graph]) -> Graph:
        return ShardedWindowGraph(self.store, windows, stored)

    def time_range(self, start: int, end: int) -> WindowContent:
        return self._gather(start, end, by_sequence=False)

    def sequence_range(self, start: int, end: int) -> WindowContent:
        return self._gather(start, end, by_sequence=True)

    def _gather(self, start: int, end: int, by_sequence: bool) -> WindowContent:
        """The rows in a range, from every shard, in arrival order."""
        parts = [part for part in broadcast(self.store.calls, "window_rows", self.stream, start, end,
                                            by_sequence).values() if len(part[0])]
        if not parts:
            empty = np.zeros(0, dtype=np.int64)
            return WindowContent(empty, empty, empty, empty)
        seq, ts, s, p, o = (np.concatenate([part[i] for part in parts]) for i in range(5))
        order = np.argsort(seq, kind="stable")
        return WindowContent(ts[order], s[order], p[order], o[order])

    def expire(self, before_ts: int | None, before_seq: int | None) -> list[BatchSummary]:
        """Forget the batches no window can reach (see
        :meth:`~engine.stream.transient.TransientLog.expire`); the shards
        free their shares when the stream's next batch brings the bounds."""
        cut = 0
        for batch in self.chunks:
            old = (before_ts is None or batch.max_ts < before_ts) and (
                before_seq is None or batch.last_seq <= before_seq)
            if not old:
                break
            cut += 1
        freed, self.chunks = self.chunks[:cut], self.chunks[cut:]
        if freed or (before_ts, before_seq) != self._sent:
            self._pending = (before_ts, before_seq)
        return freed

    def discard(self) -> list[BatchSummary]:
        """Forget every batch of a dropped stream, and let the shards free
        their shares now, in a commit of its own: no later batch of this
        stream will carry the bounds (an expiry without bounds frees all)."""
        txn = self.store.begin(journaled=False)
        try:
            txn.expire_stream(self.stream, None, None)
        except BaseException:
            self.store.abort(txn)
            raise
        txn.commit()
        freed, self.chunks = self.chunks, []
        self._pending = None
        return freed
