"""The transient store of one stream: every triple of every item, by time,
indexed once per batch (the stream index of Wukong+S).

Items arrive in timestamp order, so the log is a list of batches whose
timestamps never decrease, each a
:class:`~engine.store.timed_triples.TimedTriples`: the batch's rows sorted in
the store's key orders, built once at ingest and shared by every query. A
time window ``[start, end)`` is read as the batches it spans (two
comparisons per batch, a time slice at the borders); nothing is copied or
sorted per window. A count window reads by arrival sequence number.

At ingest each batch tests its rows' fingerprints against the live batches
before it, so that a window knows whether its matches can repeat a triple.
Tiny batches (a producer posting one item per request) are merged with their
small predecessors, so a window spans few batches whatever the producer's
request size. Whole batches are freed once no registered window
can reach them.

A cluster's shard keeps its share of a stream's rows in the same kind of
log (``engine.cluster.shard_streams``): their arrival numbers are then not
consecutive, so each chunk keeps them (``seq``) instead of deriving them
from its first one. The stream engine reads a log through :class:`StreamLog`,
which this log and the cluster coordinator's log both implement.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from engine.sparql.exec import merged
from engine.store import EMPTY, Graph, TimedTriples, TimeSlice, WindowGraph, fingerprints

#: batches smaller than this are merged with a small predecessor
SMALL_BATCH = 4096


@dataclass(frozen=True)
class Chunk:
    """One or more consecutive batches of the log, indexed, numbered by arrival."""

    triples: TimedTriples
    first_seq: int
    #: the arrival number of each row, when they are not consecutive (a shard's share)
    seq: np.ndarray | None = None

    @property
    def ts(self) -> np.ndarray:
        return self.triples.ts

    @property
    def s(self) -> np.ndarray:
        return self.triples.s

    @property
    def p(self) -> np.ndarray:
        return self.triples.p

    @property
    def o(self) -> np.ndarray:
        return self.triples.o

    @property
    def last_seq(self) -> int:
        """One past the arrival number of the chunk's last row."""
        if self.seq is not None:
            return int(self.seq[-1]) + 1
        return self.first_seq + len(self.triples.ts)

    @property
    def term_ids(self) -> np.ndarray:
        """The IDs the chunk's rows name (the references it holds on terms)."""
        return np.concatenate([self.s, self.p, self.o])

    def sequence_positions(self, start: int, end: int) -> tuple[int, int]:
        """Positions ``[a, b)`` of the rows whose arrival number is in ``[start, end)``."""
        if self.seq is not None:
            return (int(np.searchsorted(self.seq, start, side="left")),
                    int(np.searchsorted(self.seq, end, side="left")))
        lo, hi = max(start, self.first_seq), min(end, self.last_seq)
        return (lo - self.first_seq, hi - self.first_seq) if hi > lo else (0, 0)


@dataclass(frozen=True)
class WindowContent:
    """Rows of a window with the timestamp of each (duplicates not collapsed),
    in arrival order: what f:timestamp and count windows read."""

    ts: np.ndarray
    s: np.ndarray
    p: np.ndarray
    o: np.ndarray

    def __len__(self) -> int:
        return len(self.ts)


def _concat(parts: list[tuple]) -> WindowContent:
    if not parts:
        return WindowContent(EMPTY, EMPTY, EMPTY, EMPTY)
    return WindowContent(*(np.concatenate([part[i] for part in parts]) for i in range(4)))


class StreamLog(Protocol):
    """What the stream engine asks of a stream's log: this module's
    :class:`TransientLog`, or a cluster coordinator's log whose rows live on
    the shards (``engine.cluster.sharded_stream_log``)."""

    #: triples ever appended (the next arrival number)
    total: int
    #: whether windows read the rows in this process (or elsewhere, on a cluster's shards)
    in_process: bool

    def append(self, ts: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray, index: bool = True,
               txn=None) -> None: ...
    def __len__(self) -> int: ...
    def first_ts(self) -> int | None: ...
    def window(self, start: int, end: int) -> list: ...
    def local_window(self, start: int, end: int) -> list: ...
    def window_graph(self, windows: Sequence[Sequence], stored: Sequence[Graph]) -> Graph: ...
    def time_range(self, start: int, end: int) -> WindowContent: ...
    def sequence_range(self, start: int, end: int) -> WindowContent: ...
    def expire(self, before_ts: int | None, before_seq: int | None) -> list: ...
    def discard(self) -> list: ...


def _last_ts(chunk: Chunk) -> int:
    return chunk.triples.max_ts


def local_window_graph(windows: Sequence[Sequence[TimedTriples | TimeSlice]],
                       stored: Sequence[Graph]) -> Graph:
    """The windows' batches read in place in this process, beside the merge
    of the ``stored`` graphs (C-SPARQL's FROM graphs; none for RSP-QL's
    named windows)."""
    return WindowGraph(windows, beside=merged(list(stored)) if stored else None)


class TransientLog:
    """A stream's rows by time, indexed per batch, in this process."""

    in_process = True

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.total = 0  # triples ever appended (the next sequence number)

    def append(self, ts: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray, index: bool = True,
               txn=None, seq: np.ndarray | None = None) -> None:
        """Log one batch; with ``index``, build its key orders now (someone reads the stream).
        ``txn`` (the store transaction absorbing the batch) is not needed here:
        the rows stay in this log. ``seq``: the rows' arrival numbers, when
        they are not the next consecutive ones (a shard's share of a batch).

        A small batch absorbs its predecessors while they are no larger than it
        (a binary counter): a row is re-sorted at most 1 + log2(SMALL_BATCH) times
        and the log's tail holds few small chunks. The chunk list is replaced,
        never changed in place, so a reader in another thread (a shard serving
        a window while it takes the next batch) sees it before or after."""
        if not len(ts):
            return
        first_seq = self.total if seq is None else int(seq[0])
        self.total = self.total + len(ts) if seq is None else max(self.total, int(seq[-1]) + 1)
        chunks = list(self.chunks)
        columns = [ts, s, p, o] if seq is None else [ts, s, p, o, np.asarray(seq, dtype=np.int64)]
        while (chunks and len(chunks[-1].ts) <= len(columns[0])
               and len(chunks[-1].ts) + len(columns[0]) <= SMALL_BATCH):
            previous = chunks.pop()
            first_seq = previous.first_seq
            earlier = (previous.ts, previous.s, previous.p, previous.o)
            if seq is not None:
                earlier = (*earlier, previous.seq)
            columns = [np.concatenate([a, b]) for a, b in zip(earlier, columns, strict=True)]
        ts, s, p, o = columns[:4]
        batch = TimedTriples(ts, s, p, o, self._maybe_repeats(chunks, s, p, o))
        if index:
            batch.build_index()
        chunks.append(Chunk(batch, first_seq, None if seq is None else columns[4]))
        self.chunks = chunks

    @staticmethod
    def _maybe_repeats(chunks: list[Chunk], s: np.ndarray, p: np.ndarray, o: np.ndarray) -> bool:
        """Whether a triple of these rows may occur twice among them or in a live
        chunk: equal fingerprints, tested once per batch by binary search."""
        prints = np.sort(fingerprints(s, p, o))
        if len(prints) > 1 and bool((prints[1:] == prints[:-1]).any()):
            return True
        for chunk in chunks:
            earlier = chunk.triples.sorted_fingerprints
            at = np.searchsorted(earlier, prints)
            if bool((earlier[np.minimum(at, len(earlier) - 1)] == prints).any()):
                return True
        return False

    def __len__(self) -> int:
        return sum(len(c.ts) for c in self.chunks)

    def first_ts(self) -> int | None:
        """Timestamp of the oldest row still in the log."""
        return int(self.chunks[0].ts[0]) if self.chunks else None

    def _first_reaching(self, chunks: list[Chunk], ts: int) -> int:
        """The position of the first chunk with a row at or after ``ts``
        (``len(chunks)`` if none): a binary search, since chunks are in time
        order, so that a window step reads only the chunks it spans, not the
        log's older ones."""
        return bisect_left(chunks, ts, key=_last_ts)

    def window(self, start: int, end: int) -> list[TimedTriples | TimeSlice]:
        """The batches (or their time slices) holding the rows with ``start <= ts < end``."""
        parts: list[TimedTriples | TimeSlice] = []
        chunks = self.chunks
        for k in range(self._first_reaching(chunks, start), len(chunks)):
            batch = chunks[k].triples
            if batch.min_ts >= end:
                break
            parts.append(batch.between(start, end))
        return parts

    def local_window(self, start: int, end: int) -> list[TimedTriples | TimeSlice]:
        """:meth:`window`: its parts are in this process already."""
        return self.window(start, end)

    #: the graph of parts from :meth:`window` beside stored graphs
    window_graph = staticmethod(local_window_graph)

    def sequence_at(self, ts: int) -> int:
        """The arrival number of the first row at or after ``ts`` (the next one
        to arrive if none has): rows keep timestamp order, so the rows of
        ``[start, end)`` are those numbered from ``sequence_at(start)`` to
        ``sequence_at(end)``, for any ``start`` not yet expired."""
        chunks = self.chunks
        k = self._first_reaching(chunks, ts)
        if k == len(chunks):
            return self.total
        c = chunks[k]
        position = int(np.searchsorted(c.ts, ts, side="left"))
        return c.first_seq + position if c.seq is None else int(c.seq[position])

    def time_range(self, start: int, end: int) -> WindowContent:
        """Rows with ``start <= ts < end``, copied in arrival order."""
        parts = []
        for c in self.chunks:
            if c.ts[-1] < start:
                continue
            if c.ts[0] >= end:
                break
            lo = int(np.searchsorted(c.ts, start, side="left"))
            hi = int(np.searchsorted(c.ts, end, side="left"))
            if hi > lo:
                parts.append((c.ts[lo:hi], c.s[lo:hi], c.p[lo:hi], c.o[lo:hi]))
        return _concat(parts)

    def sequence_range(self, start: int, end: int) -> WindowContent:
        """Rows with arrival sequence number in ``[start, end)``."""
        parts = []
        for c in self.chunks:
            if c.last_seq <= start or c.first_seq >= end:
                continue
            a, b = c.sequence_positions(start, end)
            if b > a:
                parts.append((c.ts[a:b], c.s[a:b], c.p[a:b], c.o[a:b]))
        return _concat(parts)

    def expire(self, before_ts: int | None, before_seq: int | None) -> list[Chunk]:
        """Free the chunks that no window can reach: entirely older than
        ``before_ts`` and than ``before_seq`` (None: no reader of that kind, no
        constraint). Chunks are in time order, so the first one kept ends the
        scan. Returns the freed chunks (their term references go too)."""
        cut = 0
        for c in self.chunks:
            old = (before_ts is None or c.ts[-1] < before_ts) and (
                before_seq is None or c.last_seq <= before_seq
            )
            if not old:
                break
            cut += 1
        freed, self.chunks = self.chunks[:cut], self.chunks[cut:]
        return freed

    def discard(self) -> list[Chunk]:
        """Free every chunk (the stream is dropped); returns them, as :meth:`expire`."""
        freed, self.chunks = self.chunks, []
        return freed
