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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.store import EMPTY, TimedTriples, TimeSlice, fingerprints

#: batches smaller than this are merged with a small predecessor
SMALL_BATCH = 4096


@dataclass(frozen=True)
class Chunk:
    """One or more consecutive batches of the log, indexed, numbered by arrival."""

    triples: TimedTriples
    first_seq: int

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
        return self.first_seq + len(self.triples.ts)


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


class TransientLog:
    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.total = 0  # triples ever appended (the next sequence number)

    def append(self, ts: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray, index: bool = True) -> None:
        """Log one batch; with ``index``, build its key orders now (someone reads the stream).

        A small batch absorbs its predecessors while they are no larger than it
        (a binary counter): a row is re-sorted at most 1 + log2(SMALL_BATCH) times
        and the log's tail holds few small chunks."""
        if not len(ts):
            return
        first_seq = self.total
        self.total += len(ts)
        columns = [ts, s, p, o]
        while (self.chunks and len(self.chunks[-1].ts) <= len(columns[0])
               and len(self.chunks[-1].ts) + len(columns[0]) <= SMALL_BATCH):
            previous = self.chunks.pop()
            first_seq = previous.first_seq
            columns = [np.concatenate([a, b]) for a, b in
                       zip((previous.ts, previous.s, previous.p, previous.o), columns, strict=True)]
        ts, s, p, o = columns
        batch = TimedTriples(ts, s, p, o, self._maybe_repeats(s, p, o))
        if index:
            batch.build_index()
        self.chunks.append(Chunk(batch, first_seq))

    def _maybe_repeats(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> bool:
        """Whether a triple of these rows may occur twice among them or in a live
        chunk: equal fingerprints, tested once per batch by binary search."""
        prints = np.sort(fingerprints(s, p, o))
        if len(prints) > 1 and bool((prints[1:] == prints[:-1]).any()):
            return True
        for chunk in self.chunks:
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

    def window(self, start: int, end: int) -> list[TimedTriples | TimeSlice]:
        """The batches (or their time slices) holding the rows with ``start <= ts < end``."""
        parts: list[TimedTriples | TimeSlice] = []
        for c in self.chunks:
            batch = c.triples
            if batch.max_ts < start:
                continue
            if batch.min_ts >= end:
                break
            parts.append(batch.between(start, end))
        return parts

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
            lo, hi = max(start, c.first_seq), min(end, c.last_seq)
            if hi > lo:
                a, b = lo - c.first_seq, hi - c.first_seq
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
