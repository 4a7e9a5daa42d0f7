"""The persistent store: a default graph and named graphs of ID triples.

Readers take a :class:`Snapshot` (an immutable mapping of graph ID to
:class:`~engine.store.graph.Graph`) and keep seeing it for the whole query,
whatever writers do meanwhile. Writers work in a :class:`Transaction` on
copies of the graphs they touch and publish a new snapshot on commit, in one
reference swap: an update that fails part-way changes nothing, and a query
never sees half of an update.

A store may have a journal (:class:`~engine.store.journal.Journal`, the
write-ahead log of the durability layer): a journaled transaction records
each change it makes, the journal writes them before the new snapshot is
published (under the write lock, so the log's order is the commit order),
and ``commit`` returns only once the journal says they are durable (after
the lock is released, so one disk flush can cover several writers). Stream
absorption is not journaled here: the stream layer logs its batches itself.

Stream deltas are compacted at commit, but only as far as pending windows
allow: the stream layer hands the store those limits
(:meth:`QuadStore.retain_timestamps`) whenever they change, so the store
never calls up into the stream layer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.rdf import SpelledQuads, TermDictionary
from engine.store.compact_dictionary import CompactTermDictionary
from engine.store.graph import Graph
from engine.store.journal import Change, Journal
from engine.store.layered_graph import NO_STREAM, LayeredGraph, compact_layers
from engine.store.memory_graph import MemoryGraph

#: graph ID of the default graph (term IDs of named graphs are >= 1)
DEFAULT_GRAPH = 0
#: in-memory graphs at least this large take updates as deltas, not rebuilds
DELTA_MIN = 65536
#: a load of at least this many triples into an empty graph builds compact
#: arrays (a smaller one stays a MemoryGraph: its vertex offsets, one per
#: term ID in the store, would outweigh its triples)
COMPACT_MIN = 4096


def triples_by_graph(terms: TermDictionary, quads: SpelledQuads, default_graph: int = DEFAULT_GRAPH
                     ) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A bulk load's statements as ID columns per graph ID: each distinct
    spelling is encoded once, in whole-array steps; statements of the
    default graph go to ``default_graph``."""
    if not len(quads):
        return {}
    ids = terms.encode_spellings(quads.terms)
    graph_ids = np.where(quads.g >= 0, ids[np.maximum(quads.g, 0)], default_graph)
    s, p, o = ids[quads.s], ids[quads.p], ids[quads.o]
    by_graph = {}
    for gid in np.unique(graph_ids).tolist():
        rows = graph_ids == gid
        by_graph[gid] = (s[rows], p[rows], o[rows])
    return by_graph


@dataclass(frozen=True)
class Snapshot:
    """One consistent state of every graph; ``version`` grows with each commit."""

    graphs: dict[int, Graph]
    version: int = 0

    def graph(self, graph_id: int) -> Graph | None:
        return self.graphs.get(graph_id)

    def named_graph_ids(self) -> list[int]:
        return [g for g in self.graphs if g != DEFAULT_GRAPH]


@dataclass
class Transaction:
    """A private working copy of the graphs; nothing is visible until commit."""

    store: QuadStore
    base: Snapshot
    #: whether the changes go to the store's journal (stream absorption: no)
    journaled: bool = True
    #: the journal position of the stream batch this transaction absorbs (None: none); a
    #: store kept durable elsewhere (a cluster's) commits it under that position
    batch: int | None = None
    graphs: dict[int, Graph] = field(init=False)
    #: the changes made, in order, for the journal
    changes: list[Change] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.graphs = dict(self.base.graphs)

    def _record(self, kind: str, graph_id: int, *columns: np.ndarray) -> None:
        if self.journaled and self.store.journal is not None:
            self.changes.append(Change(kind, graph_id, columns))

    def snapshot(self) -> Snapshot:
        """The state as this transaction sees it now (for WHERE clauses)."""
        return Snapshot(dict(self.graphs), self.base.version)

    def exists(self, graph_id: int) -> bool:
        return graph_id in self.graphs

    def graph(self, graph_id: int) -> Graph:
        """The graph as this transaction sees it (empty when it does not exist)."""
        return self.graphs.get(graph_id) or MemoryGraph.empty()

    def add(self, graph_id: int, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> None:
        """Add triples. A small in-memory graph is rebuilt; a large, layered or
        memory-mapped one gets a delta (no copy of the graph, and the
        timestamps of stream deltas stay intact for pending windows)."""
        if len(s) == 0 and graph_id in self.graphs:
            return
        self._record("add", graph_id, s, p, o)
        graph = self.graph(graph_id)
        if isinstance(graph, MemoryGraph) and len(graph) < DELTA_MIN:
            self.graphs[graph_id] = graph.with_changes(MemoryGraph(s, p, o), None)
            return
        layered = graph if isinstance(graph, LayeredGraph) else LayeredGraph(graph)
        self.graphs[graph_id] = layered.appended(s, p, o, np.zeros(len(s), dtype=np.int64), NO_STREAM)

    def load(self, graph_id: int, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> None:
        """Add a bulk load's triples: an empty graph becomes compact CSR arrays
        (int32 IDs, both directions, about 27 bytes a triple) when the load is
        large enough (the triples that name a value ID beside them, as a
        delta of no stream); otherwise the triples are added as by :meth:`add`."""
        if len(s) >= COMPACT_MIN and len(self.graph(graph_id)) == 0:
            self._record("add", graph_id, s, p, o)
            self.graphs[graph_id] = compact_layers(s, p, o)
            return
        self.add(graph_id, s, p, o)

    def append(
        self, graph_id: int, s: np.ndarray, p: np.ndarray, o: np.ndarray, ts: np.ndarray, stream: int
    ) -> None:
        """Absorb stream triples as a timestamped delta (no rebuild of the graph)."""
        layered = self.graph(graph_id)
        if not isinstance(layered, LayeredGraph):
            layered = LayeredGraph(layered)
        self.graphs[graph_id] = layered.appended(s, p, o, ts, stream)

    def compact(self, safe: dict[int, int]) -> None:
        """Let every layered graph merge the deltas no pending window needs apart."""
        for graph_id, graph in self.graphs.items():
            if isinstance(graph, LayeredGraph):
                self.graphs[graph_id] = graph.compacted(safe)

    def remove(self, graph_id: int, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> None:
        if graph_id not in self.graphs or len(s) == 0:
            return
        self._record("remove", graph_id, s, p, o)
        graph = self.graphs[graph_id]
        gone = MemoryGraph(s, p, o)
        if isinstance(graph, MemoryGraph) and len(graph) < DELTA_MIN:
            self.graphs[graph_id] = graph.with_changes(None, gone)
            return
        # a large graph keeps the deleted triples as tombstones, not a rebuilt copy
        layered = graph if isinstance(graph, LayeredGraph) else LayeredGraph(graph)
        self.graphs[graph_id] = layered.without(gone)

    def create(self, graph_id: int) -> None:
        if graph_id not in self.graphs:
            self._record("create", graph_id)
        self.graphs.setdefault(graph_id, MemoryGraph.empty())

    def clear(self, graph_id: int) -> None:
        if graph_id in self.graphs:
            self._record("clear", graph_id)
            self.graphs[graph_id] = MemoryGraph.empty()

    def drop(self, graph_id: int) -> None:
        self._record("drop", graph_id)
        if graph_id == DEFAULT_GRAPH:
            self.graphs[DEFAULT_GRAPH] = MemoryGraph.empty()
        else:
            self.graphs.pop(graph_id, None)

    def commit(self) -> Snapshot:
        """Publish the new state, compacting stream deltas as far as the
        timestamps the store must retain allow."""
        self.compact(self.store.retained_timestamps())
        snapshot, position = self.store._publish(self)
        if position is not None:
            self.store.journal.wait_durable(position)
        return snapshot


class QuadStore:
    """Term dictionary plus the current snapshot of all graphs."""

    def __init__(self, terms: TermDictionary | None = None) -> None:
        self.terms: TermDictionary = terms if terms is not None else CompactTermDictionary()
        self._snapshot = Snapshot({DEFAULT_GRAPH: MemoryGraph.empty()}, 0)
        self._write_lock = threading.Lock()
        self._writer: Transaction | None = None
        #: per stream number, the earliest window close a pending continuous query
        #: still reads the store as of; deltas of those streams at or after it are
        #: not compacted yet (no entry: nothing to retain)
        self._retained: dict[int, int] = {}
        #: where journaled transactions are written before they are published
        self.journal: Journal | None = None
        #: how the stream layer makes a stream's log when its rows live outside
        #: this process (a cluster's shards: ``stream_log_factory(stream_number)``);
        #: None: the stream layer keeps them itself
        self.stream_log_factory: Callable[[int], object] | None = None

    def retain_timestamps(self, bounds: dict[int, int]) -> None:
        """Keep stream deltas apart from ``bounds[stream]`` on: the stream layer
        calls this whenever its pending windows change, and every later commit
        compacts with the bounds it was last given."""
        self._retained = dict(bounds)

    def retained_timestamps(self) -> dict[int, int]:
        """The bounds last given to :meth:`retain_timestamps` ({} if none)."""
        return self._retained

    def snapshot(self) -> Snapshot:
        return self._snapshot

    def begin(self, journaled: bool = True, batch: int | None = None) -> Transaction:
        """Start a write transaction; writers are serialised by ``commit``.
        ``journaled=False``: its changes are not written to the journal (the
        stream layer logs the batches it absorbs itself); ``batch``: the
        journal position of the stream batch it absorbs."""
        self._write_lock.acquire()
        self._writer = Transaction(self, self._snapshot, journaled, batch)
        return self._writer

    def write_lock(self) -> threading.Lock:
        """The lock writers hold from ``begin`` to commit (a checkpoint takes
        it to cut the journal at a snapshot)."""
        return self._write_lock

    def abort(self, txn: Transaction) -> None:
        """Give up a transaction: nothing it did becomes visible."""
        if self._writer is txn:
            self._writer = None
            self._write_lock.release()

    def _publish(self, txn: Transaction) -> tuple[Snapshot, int | None]:
        """Journal the transaction's changes (if any), then publish its
        snapshot; returns it and the journal position to wait for (None when
        nothing was journaled). A journal that fails publishes nothing."""
        if self._writer is not txn:
            raise RuntimeError("commit of a transaction that is not the open one")
        try:
            position = self.journal.write(self, txn.changes) if txn.changes and self.journal else None
            self._snapshot = Snapshot(dict(txn.graphs), self._snapshot.version + 1)
            return self._snapshot, position
        finally:
            self._writer = None
            self._write_lock.release()
