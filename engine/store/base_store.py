"""Opening a store written by ``rivulet load``.

Every array is memory-mapped, not read: the open costs a few file opens per
graph and shard whatever the store's size, and the operating system's page
cache, shared between processes, holds whatever queries touch. A single
process serves all shards of the store at once (each graph routes a vertex
to its shard by ID); a cluster node will open only its own shard.
"""

from __future__ import annotations

from pathlib import Path

from engine.store.layout import TERMS, Manifest
from engine.store.mapped_dictionary import MappedTermDictionary
from engine.store.mapped_graph import MappedGraph
from engine.store.quad_store import QuadStore


def open_quad_store(path: Path) -> QuadStore:
    """A QuadStore over the loaded store at ``path``; later updates and stream
    items go to in-memory overlays, never to the files."""
    manifest = Manifest.read(path)
    store = QuadStore(MappedTermDictionary(path / TERMS))
    txn = store.begin()
    for graph_id, triples in manifest.graphs.items():
        txn.graphs[int(graph_id)] = MappedGraph.open(path, int(graph_id), manifest.shards, triples)
    txn.commit()
    return store
