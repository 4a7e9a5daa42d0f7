"""Write one shard's edges as the CSR files of engine.store.compact_graph.

Runs on a Spark executor, once per (direction, shard) partition. The edges
arrive as chunks from the shuffle; each chunk's rows go at once to a spill
file per graph, and each graph's arrays are then built from its file by
``spilled_csr`` (the layout is ``engine.store.csr``'s), so a task holds a
chunk and one vertex range at a time, never the partition's edges.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from engine.loader.spilled_csr import EdgeSpill, build_spilled
from engine.store.layout import adjacency_dir


def write_partition(root: Path, direction: str, shard: int, shards: int, n_terms: int,
                    edges: np.ndarray | Iterable[np.ndarray]) -> dict[int, tuple[int, int]]:
    """Write every graph's adjacency of one (direction, shard).

    ``edges`` is a (4, n) array of graph, vertex, predicate, neighbour, or
    an iterable of such chunks. Returns graph ID -> (edges written, bytes written)."""
    chunks = [edges] if isinstance(edges, np.ndarray) else edges
    work = root / "_work" / f"edges-{direction}-{shard}-{uuid.uuid4().hex[:8]}"
    work.mkdir(parents=True)
    spills: dict[int, EdgeSpill] = {}
    try:
        for chunk in chunks:
            graph, vertex, predicate, neighbour = chunk
            for graph_id in np.unique(graph).tolist():
                rows = graph == graph_id
                if graph_id not in spills:
                    spills[graph_id] = EdgeSpill(work / f"graph-{graph_id}.rows")
                spills[graph_id].add(vertex[rows], predicate[rows], neighbour[rows])
        for spill in spills.values():
            spill.close()
        stats: dict[int, tuple[int, int]] = {}
        for graph_id, spill in sorted(spills.items()):
            target = adjacency_dir(root, shard, graph_id, direction)
            written = build_spilled(spill.path, 0, shard, shards, n_terms, target, work / "ranges")
            spill.path.unlink()
            if written:
                stats[graph_id] = (written, sum(f.stat().st_size for f in target.glob("*.npy")))
        return stats
    finally:
        for spill in spills.values():
            spill.close()
        shutil.rmtree(work, ignore_errors=True)
