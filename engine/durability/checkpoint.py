"""A checkpoint: one snapshot of the store written as a compact store directory.

The snapshot's triples are spelled as N-Quads in whole-column steps (each
distinct term spelled once, the columns joined by Arrow), already in the
store's spelling, and written by the same code as ``rivulet serve --data``
(:func:`engine.loader.local_load.write_store_directory`), so a checkpoint is
the directory format ``rivulet load`` writes and the server maps it at start
instead of replaying history. Blank node labels are kept (log records after
the checkpoint name them); terms are numbered anew, which is why the log
spells terms, never their IDs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.durability.records import ntriples_of_ids
from engine.rdf import format_term, split_nquads
from engine.store import DEFAULT_GRAPH, Snapshot
from engine.store.layout import Manifest

#: triples spelled per step
DUMP_CHUNK = 1_000_000


def write_checkpoint(snapshot: Snapshot, terms, target: Path) -> Manifest:
    """Write ``snapshot`` as the store directory ``target`` (built beside it
    and renamed into place: a checkpoint directory is whole or absent)."""
    from engine.loader.local_load import write_store_directory

    parts = (split_nquads(_graph_nquads(graph, graph_id, terms))
             for graph_id, graph in sorted(snapshot.graphs.items()) if len(graph))
    return write_store_directory(parts, target, ["checkpoint"])


def _graph_nquads(graph, graph_id: int, terms) -> bytes:
    suffix = ".\n" if graph_id == DEFAULT_GRAPH else f"{format_term(terms.decode(graph_id))} .\n"
    return b"".join(ntriples_of_ids(terms, *(np.asarray(c[start : start + DUMP_CHUNK], dtype=np.int64)
                                            for c in (graph.s, graph.p, graph.o)), suffix)
                    for start in range(0, len(graph), DUMP_CHUNK))
