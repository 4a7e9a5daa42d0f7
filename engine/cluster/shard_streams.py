"""A shard's part of the stream index: its share of every stream's transient log.

Wukong+S partitions the transient store like the persistent one, so that a
stream's rows sit beside the stored triples of the same vertices. Here a
shard keeps, per stream and role, a :class:`~engine.stream.transient.TransientLog`
of the rows it owns: role ``out`` the rows whose subject it owns, role
``in`` those whose object it owns, reversed as ``(o, p, s)`` (as the stored
graphs, ``engine.cluster.partition``). Each log indexes its batches once, as
one node's does, and a window read on this shard is the batches of its
share, matched beside the shard's own part of the stored graphs: a window
step needs no other shard's data.

The rows keep their stream-wide arrival numbers (count windows and
f:timestamp read them in arrival order); the coordinator says how far back
pending windows read (``expire``), and older chunks are freed.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from engine.cluster.partition import OUT, ROLES
from engine.cluster.shard_ops import ShardOp, expiry_bounds
from engine.store import EMPTY, TimedTriples, TimeSlice
from engine.stream.transient import TransientLog

#: (stream, start ms, end ms): one stream window's rows, as a window read names them
WindowSpan = tuple[int, int, int]


class ShardStreams:
    """This shard's share of the streams' rows, per stream and role."""

    def __init__(self) -> None:
        self.logs: dict[tuple[int, str], TransientLog] = {}

    def _log(self, stream: int, role: str) -> TransientLog:
        log = self.logs.get((stream, role))
        if log is None:
            log = self.logs[(stream, role)] = TransientLog()
        return log

    def apply(self, op: ShardOp) -> None:
        """Take a ``log`` op's rows, free what an ``expire`` op allows, or
        forget every stream's rows (``reset_streams``)."""
        if op.kind == "log":
            s, p, o, ts, seq = op.columns
            self._log(op.stream, op.role).append(ts, s, p, o, index=op.index, seq=seq)
        elif op.kind == "reset_streams":
            self.logs = {}
        elif op.kind == "expire":
            before_ts, before_seq = expiry_bounds(op)
            for role in ROLES:
                log = self.logs.get((op.stream, role))
                if log is not None:
                    log.expire(before_ts, before_seq)
                    if not log.chunks:  # (rows carry their arrival numbers: a new log continues it)
                        del self.logs[(op.stream, role)]
        else:
            raise ValueError(f"not a stream op: {op.kind}")

    def window(self, role: str, windows: tuple[tuple[WindowSpan, ...], ...]
               ) -> list[list[TimedTriples | TimeSlice]]:
        """Per query window, the batches of this shard's share that its
        streams' spans cover (time slices at the borders)."""
        parts = []
        for spans in windows:
            found = []
            for stream, start, end in spans:
                log = self.logs.get((stream, role))
                if log is not None:
                    found.extend(log.window(start, end))
            parts.append(found)
        return parts

    def rows(self, stream: int, start: int, end: int, by_sequence: bool
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(seq, ts, s, p, o)`` of this shard's ``out`` rows of ``stream``
        with timestamp (or, ``by_sequence``, arrival number) in ``[start, end)``:
        every row of the stream is on exactly one shard in that role."""
        log = self.logs.get((stream, OUT))
        parts = []
        for chunk in log.chunks if log is not None else ():
            if by_sequence:
                lo, hi = chunk.sequence_positions(start, end)
            else:
                lo = int(np.searchsorted(chunk.ts, start, side="left"))
                hi = int(np.searchsorted(chunk.ts, end, side="left"))
            if hi > lo:
                columns = (chunk.seq, chunk.ts, chunk.s, chunk.p, chunk.o)
                parts.append(tuple(column[lo:hi] for column in columns))
        if not parts:
            return EMPTY, EMPTY, EMPTY, EMPTY, EMPTY
        seq, ts, s, p, o = (np.concatenate([part[i] for part in parts]) for i in range(5))
        return seq, ts, s, p, o

    def __len__(self) -> int:
        """Rows held in the ``out`` role (each of them once across shards)."""
        return sum(len(log) for (_, role), log in self.logs.items() if role == OUT)

    # ------------------------------------------------------------ checkpoints
    def arrays(self) -> Iterator[tuple[str, np.ndarray]]:
        """Every live row, as named columns (``<stream>/<role>/<column>``), for a checkpoint."""
        for (stream, role), log in self.logs.items():
            if not log.chunks:
                continue
            for name in ("seq", "ts", "s", "p", "o"):
                column = np.concatenate([getattr(chunk, name) for chunk in log.chunks])
                yield f"{stream}/{role}/{name}", column

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray]) -> ShardStreams:
        """The logs a checkpoint's :meth:`arrays` wrote (each share one chunk,
        indexed when first read)."""
        streams = cls()
        keys = {name.rsplit("/", 1)[0] for name in arrays}
        for key in sorted(keys):
            stream, role = key.split("/")
            columns = {name: arrays[f"{key}/{name}"] for name in ("seq", "ts", "s", "p", "o")}
            streams._log(int(stream), role).append(columns["ts"], columns["s"], columns["p"], columns["o"],
                                                   index=False, seq=columns["seq"])
        return streams
