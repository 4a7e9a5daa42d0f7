"""Which shard owns a vertex: ``ID % shards``, the rule ``rivulet load
--shards N`` writes the store's files by (``engine.store.layout``).

Every triple lives on two shards: by subject (the ``out`` role, to follow a
vertex's out-edges) on the subject's owner, and reversed as ``(o, p, s)``
(the ``in`` role) on the object's owner. A pattern with a bound subject or
object is then answered by the one shard that owns the bound vertex, and a
scan by every shard's ``out`` role, each triple once.
"""

from __future__ import annotations

import numpy as np

#: triples keyed by subject, stored as (s, p, o)
OUT = "out"
#: triples keyed by object, stored reversed as (o, p, s)
IN = "in"
ROLES = (OUT, IN)


def owners(vertices: np.ndarray, shards: int) -> np.ndarray:
    """The shard of each vertex ID (IDs of stored terms are positive)."""
    return np.asarray(vertices, dtype=np.int64) % shards


def rows_by_shard(vertices: np.ndarray, shards: int) -> dict[int, np.ndarray]:
    """Positions of the rows each shard owns (shards with none left out);
    rows whose vertex is not a stored term (ID <= 0) belong to nobody."""
    vertices = np.asarray(vertices, dtype=np.int64)
    if shards == 1:
        rows = np.flatnonzero(vertices > 0)
        return {0: rows} if len(rows) else {}
    owner = np.where(vertices > 0, vertices % shards, -1)
    order = np.argsort(owner, kind="stable")
    bounds = np.searchsorted(owner[order], np.arange(shards + 1))
    return {k: order[bounds[k]:bounds[k + 1]] for k in range(shards) if bounds[k + 1] > bounds[k]}
