"""The transient store of one stream: every triple of every item, by time.

Items arrive in timestamp order, so the log is a list of chunks (one per
ingested batch) whose timestamps never decrease. A time window reads
``[start, end)`` with two binary searches per chunk that overlaps it; a count
window reads by arrival sequence number. Whole chunks are freed once no
registered window can reach them. The log is the per-batch stream index of
the design: reading a window costs the window's size, never the stored data's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.store import EMPTY


@dataclass(frozen=True)
class Chunk:
    ts: np.ndarray
    s: np.ndarray
    p: np.ndarray
    o: np.ndarray
    first_seq: int

    @property
    def last_seq(self) -> int:
        return self.first_seq + len(self.ts)


@dataclass(frozen=True)
class WindowContent:
    """Triples of a window with the timestamp of each row (duplicates not yet collapsed)."""

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

    def append(self, ts: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> None:
        if len(ts):
            self.chunks.append(Chunk(ts, s, p, o, self.total))
            self.total += len(ts)

    def __len__(self) -> int:
        return sum(len(c.ts) for c in self.chunks)

    def first_ts(self) -> int | None:
        """Timestamp of the oldest row still in the log."""
        return int(self.chunks[0].ts[0]) if self.chunks else None

    def time_range(self, start: int, end: int) -> WindowContent:
        """Rows with ``start <= ts < end``."""
        parts = []
        for c in self.chunks:
            if not len(c.ts) or c.ts[-1] < start or c.ts[0] >= end:
                continue
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
