"""A shard's durability: its commit log and checkpoints, in its own directory.

    <data>/shards/<k>/wal/<first LSN>.log       engine.durability.wal frames
    <data>/shards/<k>/checkpoints/<version>/    one .npz per role and graph, and
                                                streams.npz: the live rows of its stream logs
    <data>/shards/<k>/checkpoints/<version>/checkpoint.json   written last

A commit is logged (and flushed) before the shard applies it and answers,
so a commit the coordinator saw acknowledged survives a kill of the shard's
process; the record's LSN is the commit's version (every shard logs every
commit, an empty part too). A checkpoint writes the graphs that differ from
the loaded base as ID columns (deltas keep their stream timestamps, which
pending windows read as of, and the copies other streams absorbed of
their triples), never as text, and the graphs still equal to
the base as a reference to it, and the rows of the shard's stream logs that
pending windows may still read; then the log segments it covers are
removed. Recovery: the base, the newest complete checkpoint, the log after it.
"""

from __future__ import annotations

import json
import logging
import pickle
import shutil
import time
from pathlib import Path

import numpy as np

from engine.cluster.shard_ops import ShardOp
from engine.cluster.shard_state import ShardState, open_base
from engine.cluster.shard_streams import ShardStreams
from engine.durability.log_scan import recover_log
from engine.durability.wal import WriteAheadLog, fsync_directory
from engine.store.graph import Graph
from engine.store.layered_graph import Delta, LayeredGraph, compact_layers
from engine.store.memory_graph import MemoryGraph
from engine.store.quad_store import COMPACT_MIN

log = logging.getLogger("rivulet.cluster")

CHECKPOINT_FILE = "checkpoint.json"
STREAMS_FILE = "streams.npz"


def shard_directory(data_dir: Path, shard: int) -> Path:
    return data_dir / "shards" / str(shard)


class ShardFiles:
    """The log and checkpoints of one shard; ``recover`` opens them."""

    def __init__(self, directory: Path, wal: WriteAheadLog, loaded: dict[str, dict[int, Graph]],
                 checkpoint_bytes: int, checkpointed: int = 0) -> None:
        self.directory = directory
        #: the version of the newest checkpoint (0: none; the store as loaded)
        self.checkpointed = checkpointed
        self.wal = wal
        #: the loaded base per role and graph (checkpoints refer to it, readers read it in place)
        self.loaded = loaded
        self.checkpoint_bytes = checkpoint_bytes

    @classmethod
    def recover(cls, data_dir: Path, shard: int, shards: int, store_dir: Path | None, sync: bool = True,
                checkpoint_mb: float = 64.0) -> tuple[ShardFiles, ShardState, dict]:
        """Open (creating if new) shard ``shard``'s directory and rebuild its
        state; returns the files, the state and what recovery did."""
        started = time.monotonic()
        directory = shard_directory(data_dir, shard)
        (directory / "checkpoints").mkdir(parents=True, exist_ok=True)
        loaded: dict[str, dict[int, Graph]] = {"out": {}, "in": {}}
        if store_dir is not None:
            store_shards, loaded = open_base(store_dir, shard)
            if store_shards != shards:
                raise ValueError(f"{store_dir} was loaded in {store_shards} shard(s), not {shards}: "
                                 f"load it again with rivulet load --shards {shards}")
        version, graphs, streams = _read_checkpoint(directory, loaded)
        state = ShardState(shard, shards, graphs, version, streams)
        replayed = 0
        for record in recover_log(directory / "wal", state.version).records:  # torn tail cut, damage refused
            commit_version, ops, retain = pickle.loads(record.payload)
            state.apply(commit_version, ops, retain)
            replayed += 1
        wal = WriteAheadLog(directory / "wal", state.version + 1, sync)
        files = cls(directory, wal, loaded, int(checkpoint_mb * 2**20), version)
        report = {"shard": shard, "checkpoint": version, "replayed": replayed, "version": state.version,
                  "seconds": round(time.monotonic() - started, 3)}
        log.info("shard %d recovered: checkpoint %d, %d log records replayed, at version %d, in %.2f s",
                 shard, version, replayed, state.version, report["seconds"])
        return files, state, report

    def log_commit(self, version: int, ops: list[ShardOp], retain: dict[int, int]) -> None:
        """Log one commit and wait until it is durable."""
        lsn = self.wal.append(pickle.dumps((version, ops, retain), protocol=5))
        if lsn != version:
            raise RuntimeError(f"shard log at LSN {lsn} for commit {version}")
        self.wal.wait_durable(lsn)

    def wants_checkpoint(self) -> bool:
        return self.wal.bytes_since_rotation >= self.checkpoint_bytes

    def checkpoint(self, state: ShardState) -> int:
        """Write the state as of its current version (the caller stops
        commits meanwhile); returns that version."""
        version = state.version
        target = self.directory / "checkpoints" / f"{version:020d}"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        contents: dict[str, dict[str, str]] = {}
        for role, graphs in state.snapshot_graphs().items():
            contents[role] = {}
            for graph_id, graph in graphs.items():
                contents[role][str(graph_id)] = _write_graph(target / f"{role}-g{graph_id}.npz", graph,
                                                             self.loaded[role].get(graph_id))
        with (target / STREAMS_FILE).open("wb") as out:
            np.savez(out, **dict(state.streams.arrays()))
        (target / CHECKPOINT_FILE).write_text(json.dumps({"version": version, "graphs": contents}))
        fsync_directory(target)
        self.wal.rotate()
        for old in sorted((self.directory / "checkpoints").iterdir()):
            if old.name < target.name:
                shutil.rmtree(old, ignore_errors=True)
        for segment in self.wal.segments()[:-1]:
            segment.unlink()
        self.checkpointed = version
        return version

    def close(self) -> None:
        self.wal.close()


def _write_graph(path: Path, graph: Graph, loaded: Graph | None) -> str:
    """Save one graph; returns how it was saved: "loaded" (the base as
    loaded, no deltas), "layered" (a base and timestamped deltas) or "plain"."""
    if graph is loaded:
        return "loaded"
    arrays: dict[str, np.ndarray] = {}
    kind = "plain"
    base = graph
    if isinstance(graph, LayeredGraph):
        kind = "layered-loaded" if graph.base is loaded else "layered"
        base = graph.base
        for prefix, layers in (("d", graph.deltas), ("c", graph.copies)):
            for i, delta in enumerate(layers):
                t = delta.triples
                arrays.update({f"{prefix}{i}_s": t.s, f"{prefix}{i}_p": t.p, f"{prefix}{i}_o": t.o,
                               f"{prefix}{i}_ts": delta.ts, f"{prefix}{i}_stream": np.array([delta.stream])})
    if kind != "layered-loaded":
        arrays.update(s=base.s, p=base.p, o=base.o)
    with path.open("wb") as out:
        np.savez(out, **arrays)
    return kind


def _read_graph(path: Path, kind: str, loaded: Graph | None) -> Graph:
    if kind == "loaded":
        return loaded
    with np.load(path) as data:
        if kind == "layered-loaded":
            base = loaded
        else:
            s, p, o = data["s"], data["p"], data["o"]
            base = compact_layers(s, p, o) if len(s) >= COMPACT_MIN else MemoryGraph(s, p, o)
        if kind == "plain":
            return base
        return LayeredGraph(base, _read_layers(data, "d"), _read_layers(data, "c"))


def _read_layers(data, prefix: str) -> tuple[Delta, ...]:
    """The deltas (``d``) or copies (``c``) :func:`_write_graph` saved."""
    layers = []
    i = 0
    while f"{prefix}{i}_s" in data:
        name = f"{prefix}{i}_"
        triples = MemoryGraph(data[name + "s"], data[name + "p"], data[name + "o"], unique=True)
        layers.append(Delta(triples, data[name + "ts"], int(data[name + "stream"][0])))
        i += 1
    return tuple(layers)


def _read_checkpoint(directory: Path, loaded: dict[str, dict[int, Graph]]
                     ) -> tuple[int, dict[str, dict[int, Graph]], ShardStreams]:
    """(version, graphs per role, stream logs) of the newest complete
    checkpoint, or the loaded base at version 0."""
    complete = [d for d in sorted((directory / "checkpoints").iterdir()) if (d / CHECKPOINT_FILE).exists()]
    if not complete:
        return 0, loaded, ShardStreams()
    newest = complete[-1]
    manifest = json.loads((newest / CHECKPOINT_FILE).read_text())
    graphs: dict[str, dict[int, Graph]] = {}
    for role, kinds in manifest["graphs"].items():
        graphs[role] = {int(g): _read_graph(newest / f"{role}-g{g}.npz", kind, loaded[role].get(int(g)))
                        for g, kind in kinds.items()}
    with np.load(newest / STREAMS_FILE) as data:
        streams = ShardStreams.restore({name: data[name] for name in data.files})
    return int(manifest["version"]), graphs, streams
