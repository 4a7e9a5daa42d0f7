"""A committed transaction as the shards apply it.

The coordinator's transaction records what it did (``Op``: add, remove,
append, create, clear, drop, in order) with ID columns; :func:`split_ops`
cuts that list into one list per shard, each keeping the rows the shard owns
in each role (``engine.cluster.partition``). Graph-level operations (create,
clear, drop) go to every shard, so every shard knows every graph. Ops are
plain tuples of NumPy arrays and ints: cheap to send through Ray and to log.

Three kinds change the streams' transient logs rather than a graph
(:data:`STREAM_KINDS`): ``log`` carries a batch's rows (every triple, timing
and timeless, with its timestamp and arrival number), split by key like the
triples of a graph; ``expire`` tells every shard how far back the stream's
pending windows still read; ``reset_streams`` empties every stream log (a
coordinator that starts again sends the rows its windows need anew).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.cluster.partition import IN, OUT, rows_by_shard

#: kinds that carry triples, split by key among the shards
TRIPLE_KINDS = ("add", "remove", "append", "load", "log")
#: kinds that change a stream's transient log, not a stored graph
STREAM_KINDS = ("log", "expire", "reset_streams")
#: an expiry bound that does not constrain (no window of that kind reads the stream)
NO_BOUND = np.iinfo(np.int64).min


@dataclass(frozen=True)
class Op:
    """One change to one graph: ``columns`` is (s, p, o) for add, remove and
    load, (s, p, o, ts) for append; ``stream`` only for append. For a
    stream's log (``graph`` unused): (s, p, o, ts, seq) for log, with
    ``index`` when a query reads the stream (its shares are indexed at
    once); ``(before_ts, before_seq)`` in one array for expire."""

    kind: str
    graph: int
    columns: tuple[np.ndarray, ...] = ()
    stream: int = -1
    index: bool = False


@dataclass(frozen=True)
class ShardOp:
    """An op as one shard applies it, to one role (None: graph-level)."""

    kind: str
    graph: int
    role: str | None
    columns: tuple[np.ndarray, ...] = ()
    stream: int = -1
    index: bool = False


def split_ops(ops: list[Op], shards: int) -> list[list[ShardOp]]:
    """Each shard's part of ``ops``, in the same order."""
    parts: list[list[ShardOp]] = [[] for _ in range(shards)]
    for op in ops:
        if op.kind not in TRIPLE_KINDS:
            for part in parts:
                part.append(ShardOp(op.kind, op.graph, None, op.columns, op.stream))
            continue
        s, p, o, *rest = op.columns
        for role, key, columns in ((OUT, s, (s, p, o, *rest)), (IN, o, (o, p, s, *rest))):
            for k, rows in rows_by_shard(key, shards).items():
                parts[k].append(ShardOp(op.kind, op.graph, role, tuple(c[rows] for c in columns), op.stream,
                                        op.index))
        if op.kind in ("add", "load", "append"):
            # the graph exists on every shard even where it holds no row
            for part in parts:
                part.append(ShardOp("create", op.graph, None))
    return parts


def expiry_bounds(op: ShardOp | Op) -> tuple[int | None, int | None]:
    """``(before_ts, before_seq)`` of an expire op (None: no constraint)."""
    before_ts, before_seq = (int(v) for v in op.columns[0])
    return (None if before_ts == NO_BOUND else before_ts, None if before_seq == NO_BOUND else before_seq)


def expire_op(stream: int, before_ts: int | None, before_seq: int | None) -> Op:
    """The op that lets the shards free stream ``stream``'s rows no pending window reads."""
    bounds = np.array([NO_BOUND if before_ts is None else before_ts,
                       NO_BOUND if before_seq is None else before_seq], dtype=np.int64)
    return Op("expire", 0, (bounds,), stream)


def op_ids(ops: list[Op]) -> np.ndarray:
    """Every term ID the ops name (graph IDs included), distinct."""
    ids = [np.array([op.graph for op in ops], dtype=np.int64)]
    for op in ops:
        if op.kind in TRIPLE_KINDS:
            ids.extend(np.asarray(c, dtype=np.int64) for c in op.columns[:3])
    return np.unique(np.concatenate(ids)) if ids else np.zeros(0, dtype=np.int64)
