"""Opening a store written by ``rivulet load``.

Every array is memory-mapped, not read: the open costs a few file opens per
graph and shard whatever the store's size, and the operating system's page
cache, shared between processes, holds whatever queries touch. A single
process serves all shards of the store at once (each graph routes a vertex
to its shard by ID); a cluster node will open only its own shard.
"""

from __future__ import annotations

from pathlib import Path

from engine.store.compact_dictionary import CompactTermDictionary
from engine.store.compact_graph import CompactGraph
from engine.store.layout import TERMS, Manifest
from engine.store.quad_store import QuadStore


def open_quad_store(path: Path) -> QuadStore:
    """A QuadStore over the loaded store at ``path``; later updates and stream
    items go to in-memory overlays, never to the files."""
    manifest = Manifest.read(path)
    store = QuadStore(CompactTermDictionary.open(path / TERMS))
    txn = store.begin()
    for graph_id, triples in manifest.graphs.items():
        txn.graphs[int(graph_id)] = CompactGraph.open(path, int(graph_id), manifest.shards, triples)
    txn.commit()
    return store
