"""One shard's part of the store: its graphs in both roles, by version.

A shard holds, for every graph, the triples whose subject it owns (role
``out``) and, reversed, those whose object it owns (role ``in``); each role
is an ordinary :class:`~engine.store.quad_store.QuadStore`, so layered
deltas, stream timestamps (as-of reads for windows) and compaction are the
single-node code's. The loaded base is the shard's directory of the store
``rivulet load --shards N`` wrote, memory-mapped as it is.

Versions: the coordinator numbers its commits, every shard applies every
commit (an empty part too), so version ``v`` means the same state on every
shard, and a query that read version ``v`` on one shard reads ``v`` on all:
a consistent snapshot across shards. The last :data:`KEEP_VERSIONS` are
kept for queries in flight; an older one is gone (:class:`SnapshotGone`,
which the coordinator turns into a retryable error).

The shard's share of the streams' transient logs (:mod:`~engine.cluster.shard_streams`)
comes in the same commits, so a batch is absorbed by every shard before its
commit is acknowledged and the stream's watermark moves: a window that is
due finds every shard's share of it. Logs are not versioned: a window
reads them by time, and rows at or after its close are never in it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from engine.cluster.partition import IN, OUT, ROLES
from engine.cluster.shard_ops import STREAM_KINDS, ShardOp
from engine.cluster.shard_streams import ShardStreams, WindowSpan
from engine.sparql.exec import merged
from engine.store.availability import StoreUnavailable
from engine.store.compact_graph import Adjacency, CompactGraph, Direction
from engine.store.graph import Graph, Matches
from engine.store.layered_graph import LayeredGraph
from engine.store.layout import Manifest, adjacency_dir
from engine.store.memory_graph import EMPTY
from engine.store.quad_store import QuadStore, Snapshot
from engine.store.window_graph import WindowGraph

#: snapshot versions a shard keeps for queries in flight
KEEP_VERSIONS = 64


class SnapshotGone(StoreUnavailable):
    """The version a read asks for is no longer (or not yet) kept here: the
    query is retried on a newer snapshot."""


class VersionGap(RuntimeError):
    """A commit arrived out of order: the shard is at ``version``."""

    def __init__(self, version: int) -> None:
        super().__init__(f"the shard is at version {version}")
        self.version = version


def open_base(store_dir: Path, shard: int) -> tuple[int, dict[str, dict[int, Graph]]]:
    """The shard's part of a loaded store, per role and graph, memory-mapped;
    returns the store's shard count too."""
    manifest = Manifest.read(store_dir)
    shards = manifest.shards
    graphs: dict[str, dict[int, Graph]] = {OUT: {}, IN: {}}
    for key in manifest.graphs:
        graph_id = int(key)
        for role in ROLES:
            part = Adjacency.open(adjacency_dir(store_dir, shard, graph_id, role), shards, shard)
            parts: list[Adjacency | None] = [None] * shards
            parts[shard] = part
            edges = len(part.neighbours) if part is not None else 0
            # role "in" keys the object: its files are the store's "in" direction,
            # read here as the out-edges of reversed triples
            graphs[role][graph_id] = CompactGraph(Direction(parts), Direction([None] * shards), edges)
    return shards, graphs


class ShardState:
    """A shard's graphs, the versions queries read, and the commits it applies."""

    def __init__(self, shard: int, shards: int, base: dict[str, dict[int, Graph]] | None = None,
                 version: int = 0, streams: ShardStreams | None = None) -> None:
        self.shard, self.shards = shard, shards
        #: this shard's share of the streams' transient logs
        self.streams = streams or ShardStreams()
        self.roles: dict[str, QuadStore] = {}
        for role in ROLES:
            store = QuadStore()
            if base is not None:
                txn = store.begin(journaled=False)
                txn.graphs.update(base[role])
                txn.commit()
            self.roles[role] = store
        self.version = version
        self._versions: OrderedDict[int, dict[str, Snapshot]] = OrderedDict()
        self._keep()
        self._lock = threading.Lock()

    def _keep(self) -> None:
        self._versions[self.version] = {role: store.snapshot() for role, store in self.roles.items()}
        while len(self._versions) > KEEP_VERSIONS:
            self._versions.popitem(last=False)

    # ------------------------------------------------------------ writes
    def apply(self, version: int, ops: list[ShardOp], retain: dict[int, int]) -> bool:
        """Apply commit ``version`` (False: it was applied already, as a
        retried commit after a restart finds)."""
        with self._lock:
            if version <= self.version:
                return False
            if version != self.version + 1:
                raise VersionGap(self.version)
            txns = {}
            try:
                for role, store in self.roles.items():
                    store.retain_timestamps(retain)
                    txns[role] = store.begin(journaled=False)
                for op in ops:
                    if op.kind not in STREAM_KINDS:
                        _apply_op(txns, op)
            except BaseException:
                for role, txn in txns.items():
                    self.roles[role].abort(txn)
                raise
            for txn in txns.values():
                txn.commit()
            for op in ops:
                if op.kind in STREAM_KINDS:
                    self.streams.apply(op)
            self.version = version
            self._keep()
            return True

    def snapshot_graphs(self) -> dict[str, dict[int, Graph]]:
        """The current graphs of each role (for a checkpoint)."""
        return {role: dict(store.snapshot().graphs) for role, store in self.roles.items()}

    # ------------------------------------------------------------- reads
    def graph(self, version: int, graph_id: int, role: str, cutoffs: dict[int, int] | None = None
              ) -> Graph | None:
        """The graph of ``role`` as version ``version`` has it (as of the
        window closes ``cutoffs`` per stream when given); None when the graph
        does not exist."""
        snapshots = self._versions.get(version)
        if snapshots is None:
            raise SnapshotGone(f"shard {self.shard} keeps versions {min(self._versions)}.."
                               f"{max(self._versions)}, not {version}")
        graph = snapshots[role].graph(graph_id)
        if graph is not None and cutoffs and isinstance(graph, LayeredGraph):
            return graph.as_of(cutoffs)
        return graph

    def match(self, version: int, graph_id: int, role: str, s: np.ndarray | None, p: np.ndarray | None,
              o: np.ndarray | None, n_rows: int, cutoffs: dict[int, int] | None = None) -> Matches:
        """One step of a query on this shard's rows (a fork-join's branch)."""
        graph = self.graph(version, graph_id, role, cutoffs)
        if graph is None:
            return EMPTY, EMPTY, EMPTY, EMPTY
        return graph.match(s, p, o, n_rows)

    def window_graph(self, version: int, role: str, windows: tuple[tuple[WindowSpan, ...], ...],
                     beside: tuple[int, ...], cutoffs: dict[int, int] | None) -> WindowGraph:
        """This shard's share of a window in ``role`` (its streams' spans per
        query window), beside its part of the stored graphs ``beside`` as of
        ``cutoffs`` (C-SPARQL's FROM graphs, merged)."""
        stored = [g for g in (self.graph(version, graph_id, role, cutoffs) for graph_id in beside)
                  if g is not None]
        return WindowGraph(self.streams.window(role, windows), beside=merged(stored) if stored else None)

    def count(self, version: int, graph_id: int, role: str, s: int | None, p: int | None, o: int | None,
              cutoffs: dict[int, int] | None = None) -> int:
        graph = self.graph(version, graph_id, role, cutoffs)
        return graph.count(s, p, o) if graph is not None else 0

    def degree_stats(self, version: int, graph_id: int, p: int | None,
                     cutoffs: dict[int, int] | None = None) -> tuple[int, int, int]:
        """(triples, distinct subjects, distinct objects) of this shard's
        share: subjects from the ``out`` role, objects from the ``in`` role
        (each vertex counted on its owner only, so the shards' figures add up)."""
        out = self.graph(version, graph_id, OUT, cutoffs)
        into = self.graph(version, graph_id, IN, cutoffs)
        triples, subjects, _ = out.degree_stats(p) if out is not None else (0, 0, 0)
        objects = into.degree_stats(p)[1] if into is not None else 0
        return triples, subjects, objects

    def columns(self, version: int, graph_id: int, cutoffs: dict[int, int] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every triple of the ``out`` role (whole-graph reads, rare)."""
        graph = self.graph(version, graph_id, OUT, cutoffs)
        if graph is None or not len(graph):
            return EMPTY, EMPTY, EMPTY
        return graph.s, graph.p, graph.o

    def sizes(self, version: int) -> dict[int, int]:
        """Triples per graph (the ``out`` role: each triple once across shards)."""
        graphs = self._snapshot(version)[OUT].graphs
        return {graph_id: len(graph) for graph_id, graph in graphs.items()}

    def _snapshot(self, version: int) -> dict[str, Snapshot]:
        snapshots = self._versions.get(version)
        if snapshots is None:
            raise SnapshotGone(f"shard {self.shard} no longer keeps version {version}")
        return snapshots


def loaded_regions(base: dict[str, dict[int, Graph]], shard: int) -> dict[str, np.ndarray]:
    """The memory-mapped arrays of the loaded base that in-place readers may
    read, named ``g<graph>/<role>/<array>``. They never change: a graph
    that is written to gets deltas or a new base, and the coordinator, which
    knows which graphs its commits touched, reads those by fork-join."""
    regions = {}
    for role, graphs in base.items():
        for graph_id, graph in graphs.items():
            part = graph.direction(OUT).parts[shard] if isinstance(graph, CompactGraph) else None
            if part is not None:
                for name, array in part.arrays().items():
                    regions[f"g{graph_id}/{role}/{name}"] = array
    return regions


def _apply_op(txns: dict, op: ShardOp) -> None:
    if op.role is None:
        for txn in txns.values():
            getattr(txn, op.kind)(op.graph)
        return
    txn = txns[op.role]
    if op.kind == "append":
        s, p, o, ts = op.columns
        txn.append(op.graph, s, p, o, ts, op.stream)
    elif op.kind == "remove":
        txn.remove(op.graph, *op.columns)
    elif op.kind == "load":
        txn.load(op.graph, *op.columns)
    else:
        txn.add(op.graph, *op.columns)
