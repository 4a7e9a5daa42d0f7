"""A committed transaction as the shards apply it.

The coordinator's transaction records what it did (``Op``: add, remove,
append, create, clear, drop, in order) with ID columns; :func:`split_ops`
cuts that list into one list per shard, each keeping the rows the shard owns
in each role (``engine.cluster.partition``). Graph-level operations (create,
clear, drop) go to every shard, so every shard knows every graph. Ops are
plain tuples of NumPy arrays and ints: cheap to send through Ray and to log.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.cluster.partition import IN, OUT, rows_by_shard

#: kinds that carry triples; the others name a graph only
TRIPLE_KINDS = ("add", "remove", "append", "load")


@dataclass(frozen=True)
class Op:
    """One change to one graph: ``columns`` is (s, p, o) for add, remove and
    load, (s, p, o, ts) for append; ``stream`` only for append."""

    kind: str
    graph: int
    columns: tuple[np.ndarray, ...] = ()
    stream: int = -1


@dataclass(frozen=True)
class ShardOp:
    """An op as one shard applies it, to one role (None: graph-level)."""

    kind: str
    graph: int
    role: str | None
    columns: tuple[np.ndarray, ...] = ()
    stream: int = -1


def split_ops(ops: list[Op], shards: int) -> list[list[ShardOp]]:
    """Each shard's part of ``ops``, in the same order."""
    parts: list[list[ShardOp]] = [[] for _ in range(shards)]
    for op in ops:
        if op.kind not in TRIPLE_KINDS:
            for part in parts:
                part.append(ShardOp(op.kind, op.graph, None))
            continue
        s, p, o, *rest = op.columns
        for role, key, columns in ((OUT, s, (s, p, o, *rest)), (IN, o, (o, p, s, *rest))):
            for k, rows in rows_by_shard(key, shards).items():
                parts[k].append(ShardOp(op.kind, op.graph, role, tuple(c[rows] for c in columns), op.stream))
        if op.kind in ("add", "load", "append"):
            # the graph exists on every shard even where it holds no row
            for part in parts:
                part.append(ShardOp("create", op.graph, None))
    return parts


def op_ids(ops: list[Op]) -> np.ndarray:
    """Every term ID the ops name (graph IDs included), distinct."""
    ids = [np.array([op.graph for op in ops], dtype=np.int64)]
    for op in ops:
        if op.kind in TRIPLE_KINDS:
            ids.extend(np.asarray(c, dtype=np.int64) for c in op.columns[:3])
    return np.unique(np.concatenate(ids)) if ids else np.zeros(0, dtype=np.int64)
