"""Write one shard's edges as the CSR files of engine.store.compact_graph.

Runs on a Spark executor, once per (direction, shard) partition: the arrays
are built by :func:`engine.store.csr.build_adjacency` (the layout is
described there) and saved one ``.npy`` file each.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.store.csr import build_adjacency
from engine.store.layout import adjacency_dir


def write_partition(root: Path, direction: str, shard: int, shards: int, n_terms: int,
                    edges: np.ndarray) -> dict[int, tuple[int, int]]:
    """Write every graph's adjacency of one (direction, shard).

    ``edges`` is a (4, n) array of graph, vertex, predicate, neighbour.
    Returns graph ID -> (edges written, bytes written)."""
    graph, vertex, predicate, neighbour = edges
    if len(graph) and graph.min() != graph.max():
        order = np.argsort(graph, kind="stable")
        graph, vertex, predicate, neighbour = graph[order], vertex[order], predicate[order], neighbour[order]
    cuts = np.flatnonzero(np.diff(graph)) + 1
    stats: dict[int, tuple[int, int]] = {}
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(graph)]):
        if hi == lo:
            continue
        graph_id = int(graph[lo])
        arrays = build_adjacency(vertex[lo:hi], predicate[lo:hi], neighbour[lo:hi], n_terms, shards)
        target = adjacency_dir(root, shard, graph_id, direction)
        target.mkdir(parents=True, exist_ok=True)
        for name, array in arrays.items():
            np.save(target / f"{name}.npy", array)
        stats[graph_id] = (len(arrays["neighbours"]), sum(a.nbytes for a in arrays.values()))
    return stats
