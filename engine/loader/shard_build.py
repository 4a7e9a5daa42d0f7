"""Job 2: encode the statements to IDs and write the shards.

A task per saved batch of statement hashes turns hashes into IDs with one
``searchsorted`` on the sorted hash array (memory-mapped, not joined) and
cuts the edges into chunks, one per (direction, shard): ``out`` keyed by the
subject's shard, ``in`` by the object's. Spark shuffles the chunks -- a few
large records per task, not one per edge -- so that each writer task
receives exactly one (direction, shard) and builds its CSR arrays with
``writer.write_partition``, which spills the chunks as they arrive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pyspark.sql import SparkSession

from engine.loader.parse_lines import ERROR_MARK, LoadError
from engine.loader.writer import write_partition
from engine.store.csr import id_dtype
from engine.store.layout import DIRECTIONS


@dataclass
class ShardStats:
    """What the writer tasks wrote."""

    graphs: dict[int, int] = field(default_factory=dict)
    nbytes: int = 0


def to_ids(hashes: np.ndarray, sorted_hashes: np.ndarray) -> np.ndarray:
    """IDs (1 + hash rank) of hashes that are all in the dictionary."""
    at = np.searchsorted(sorted_hashes, hashes)
    if len(at) and (at.max() >= len(sorted_hashes) or np.any(sorted_hashes[at] != hashes)):
        raise LoadError(f"{ERROR_MARK}a term is missing from the dictionary (internal error)")
    return at + 1


def _encoder(hashes_path: str, shards: int, n_terms: int):
    dtype = id_dtype(n_terms)

    def run(paths):
        sorted_hashes = np.load(hashes_path, mmap_mode="r")
        for path in paths:
            hs, hp, ho, hg = np.load(path)
            s, p, o = to_ids(hs, sorted_hashes), to_ids(hp, sorted_hashes), to_ids(ho, sorted_hashes)
            g = np.zeros(len(s), dtype=np.int64)
            named = hg != 0
            if named.any():
                g[named] = to_ids(hg[named], sorted_hashes)
            for d, (vertex, neighbour) in enumerate(((s, o), (o, s))):
                owner = vertex % shards
                for k in range(shards):
                    sel = np.flatnonzero(owner == k) if shards > 1 else slice(None)
                    chunk = np.stack([g[sel], vertex[sel], p[sel], neighbour[sel]]).astype(dtype)
                    if chunk.shape[1]:
                        yield d * shards + k, chunk.tobytes()

    return run


def _writer(root: str, shards: int, n_terms: int):
    dtype = id_dtype(n_terms)

    def run(index: int, chunks):
        arrays = (np.frombuffer(payload, dtype=dtype).reshape(4, -1) for _, payload in chunks)
        yield index // shards, write_partition(Path(root), DIRECTIONS[index // shards], index % shards,
                                               shards, n_terms, arrays)

    return run


def build_shards(spark: SparkSession, quad_files: list[str], hashes: Path, n_terms: int, shards: int,
                 root: Path) -> ShardStats:
    """Run job 2; returns triples per graph and bytes written."""
    sc = spark.sparkContext
    tasks = max(1, min(len(quad_files), 4 * sc.defaultParallelism))
    chunks = sc.parallelize(sorted(quad_files), tasks).mapPartitions(_encoder(str(hashes), shards, n_terms))
    result = ShardStats()
    written = chunks.partitionBy(2 * shards, lambda part: part) \
        .mapPartitionsWithIndex(_writer(str(root), shards, n_terms)).collect()
    for direction, stats in written:
        for graph_id, (edges, nbytes) in stats.items():
            result.nbytes += nbytes
            if direction == 0:
                result.graphs[graph_id] = result.graphs.get(graph_id, 0) + edges
    return result
