"""A store directory built in one process, without Spark.

Data that fits one machine does not need a cluster job: Oxigraph's parser
reads each file into canonical N-Quads, the statements are split into
columns and encoded in whole-array steps (``engine.rdf.split_nquads``,
``CompactTermDictionary.encode_spellings``), and each graph's CSR arrays
are built in memory (``engine.store.csr``). The result is the same
directory ``rivulet load`` writes with Spark (one shard), so the server
maps it the same way, and several server processes can share it through the
page cache. ``rivulet serve --data`` runs this in a child process: the
parse's transient memory leaves with the child.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from engine.rdf import RdfSyntaxError, SpelledQuads, canonical_nquads, split_nquads
from engine.store import CompactTermDictionary, triples_by_graph
from engine.store.csr import build_adjacency
from engine.store.layout import DIRECTIONS, TERMS, Manifest, adjacency_dir


def build_store_directory(files: list[Path], target: Path, shards: int = 1) -> Manifest:
    """Load ``files`` (syntax from each suffix; TriG and N-Quads fill named
    graphs) into a new store directory ``target`` of ``shards`` vertex
    partitions. Written beside the target and renamed into place, so a
    failed load leaves nothing behind."""
    parsed = (_statements(path) for path in files)
    return write_store_directory(parsed, target, [str(f) for f in files], shards)


def _statements(path: Path) -> SpelledQuads:
    """A file's statements; a syntax error says which file, then where in it."""
    try:
        return split_nquads(canonical_nquads(path))
    except RdfSyntaxError as exc:
        raise RdfSyntaxError(f"{path}: {exc}") from None


def write_store_directory(parts: Iterable[SpelledQuads], target: Path, sources: list[str],
                          shards: int = 1) -> Manifest:
    """Write statements already in the store's spelling (blank node labels
    kept as they are) as the new store directory ``target``; vertex ``v``'s
    keys go to shard ``v % shards`` in each direction, as the Spark loader
    writes them."""
    if target.exists():
        raise FileExistsError(f"{target} exists; a store directory is built new")
    work = target.with_name(target.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    terms = CompactTermDictionary(values=False)  # its graphs are CSR arrays indexed by ID
    columns: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
    for quads in parts:
        for gid, triples in triples_by_graph(terms, quads).items():
            columns.setdefault(gid, []).append(triples)
    work.mkdir(parents=True)
    terms.arrays.save(work / TERMS)
    counts: dict[str, int] = {}
    for gid, parts in columns.items():
        s, p, o = (np.concatenate([part[i] for part in parts]) for i in range(3))
        bound = len(terms)
        counts[str(gid)] = 0
        for direction, (vertex, neighbour) in zip(DIRECTIONS, ((s, o), (o, s))):
            for shard in range(shards):
                rows = vertex % shards == shard if shards > 1 else slice(None)
                if shards > 1 and not rows.any():
                    continue
                arrays = build_adjacency(vertex[rows], p[rows], neighbour[rows], bound, shards)
                folder = adjacency_dir(work, shard, gid, direction)
                folder.mkdir(parents=True)
                for name, array in arrays.items():
                    np.save(folder / f"{name}.npy", array)
                if direction == DIRECTIONS[0]:
                    counts[str(gid)] += len(arrays["neighbours"])
    manifest = Manifest(triples=sum(counts.values()), terms=len(terms), shards=shards, graphs=counts,
                        sources=sources)
    manifest.write(work)
    work.rename(target)
    return manifest
