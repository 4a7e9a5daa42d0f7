"""Where each array of a loaded store lives: the one contract between the
loader that writes a store directory and the store that opens it.

    manifest.json                       counts, shard count, graphs, ID width
    terms/strings.bin                   N-Triples spellings, back to back
    terms/{hashes,offsets,kinds,numeric_ids,numeric_values}.npy
    terms/hash_ids.npy                  only when IDs are not hash ranks
    shards/<k>/g<graph id>/<out|in>/<array>.npy

Term IDs are 1 + the rank of the term's hash (see ``term_hash``), unless
``hash_ids`` gives the ID of each sorted hash (a store built by several
in-memory loads, whose later terms follow the earlier ones); graph 0 is
the default graph. Shard ``k`` holds the keys of the vertices whose ID is
``k`` modulo the shard count, in both directions, so that one cluster node
can own one shard directory.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

FORMAT = "rivulet-base-store"
VERSION = 1
MANIFEST = "manifest.json"
TERMS = "terms"
STRINGS = "strings.bin"
HASH_IDS = "hash_ids"
DIRECTIONS = ("out", "in")

#: arrays of one direction of one graph in one shard (see engine.store.compact_graph)
ADJACENCY_ARRAYS = (
    "vertex_offsets",
    "pair_predicates",
    "pair_offsets",
    "neighbours",
    "index_predicates",
    "index_offsets",
    "index_pairs",
    "index_triples",
)


@dataclass
class Manifest:
    """What a store directory holds, written last by the loader."""

    triples: int
    terms: int
    shards: int
    #: triples per graph ID (0 = default graph), as JSON keys are strings
    graphs: dict[str, int]
    invalid_lines: int = 0
    format: str = FORMAT
    version: int = VERSION
    sources: list[str] = field(default_factory=list)

    def write(self, directory: Path) -> None:
        (directory / MANIFEST).write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def read(cls, directory: Path) -> Manifest:
        data = json.loads((directory / MANIFEST).read_text())
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise ValueError(f"{directory} is not a rivulet store of version {VERSION}")
        return cls(**data)


def adjacency_dir(root: Path, shard: int, graph_id: int, direction: str) -> Path:
    return root / "shards" / str(shard) / f"g{graph_id}" / direction
