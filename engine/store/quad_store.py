"""The persistent store: a default graph and named graphs of ID triples.

Readers take a :class:`Snapshot` (an immutable mapping of graph ID to
:class:`MemoryGraph`) and keep seeing it for the whole query, whatever writers
do meanwhile. Writers work in a :class:`Transaction` on copies of the tables
they touch and publish a new snapshot on commit, in one reference swap: an
update that fails part-way changes nothing, and a query never sees half of
an update.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.rdf.terms import TermDictionary
from engine.store.layered_graph import NO_STREAM, LayeredGraph
from engine.store.memory_graph import MemoryGraph

#: graph ID of the default graph (term IDs of named graphs are >= 1)
DEFAULT_GRAPH = 0
#: in-memory graphs at least this large take updates as deltas, not rebuilds
DELTA_MIN = 65536


@dataclass(frozen=True)
class Snapshot:
    """One consistent state of every graph; ``version`` grows with each commit."""

    graphs: dict[int, MemoryGraph]
    version: int = 0

    def graph(self, graph_id: int) -> MemoryGraph | None:
        return self.graphs.get(graph_id)

    def named_graph_ids(self) -> list[int]:
        return [g for g in self.graphs if g != DEFAULT_GRAPH]


@dataclass
class Transaction:
    """A private working copy of the graphs; nothing is visible until commit."""

    store: QuadStore
    base: Snapshot
    graphs: dict[int, MemoryGraph] = field(init=False)

    def __post_init__(self) -> None:
        self.graphs = dict(self.base.graphs)

    def snapshot(self) -> Snapshot:
        """The state as this transaction sees it now (for WHERE clauses)."""
        return Snapshot(dict(self.graphs), self.base.version)

    def exists(self, graph_id: int) -> bool:
        return graph_id in self.graphs

    def table(self, graph_id: int) -> MemoryGraph:
        return self.graphs.get(graph_id) or MemoryGraph.empty()

    def add(self, graph_id: int, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> None:
        """Add triples. A small in-memory graph is rebuilt; a large, layered or
        memory-mapped one gets a delta (no copy of the graph, and the
        timestamps of stream deltas stay intact for pending windows)."""
        if len(s) == 0 and graph_id in self.graphs:
            return
        table = self.table(graph_id)
        if isinstance(table, MemoryGraph) and len(table) < DELTA_MIN:
            self.graphs[graph_id] = table.with_changes(MemoryGraph(s, p, o), None)
            return
        layered = table if isinstance(table, LayeredGraph) else LayeredGraph(table)
        self.graphs[graph_id] = layered.appended(s, p, o, np.zeros(len(s), dtype=np.int64), NO_STREAM)

    def append(
        self, graph_id: int, s: np.ndarray, p: np.ndarray, o: np.ndarray, ts: np.ndarray, stream: int
    ) -> None:
        """Absorb stream triples as a timestamped delta (no rebuild of the graph)."""
        table = self.graphs.get(graph_id)
        layered = table if isinstance(table, LayeredGraph) else LayeredGraph(table or MemoryGraph.empty())
        self.graphs[graph_id] = layered.appended(s, p, o, ts, stream)

    def compact(self, safe: dict[int, int]) -> None:
        """Let every layered graph merge the deltas no pending window needs apart."""
        for graph_id, table in self.graphs.items():
            if isinstance(table, LayeredGraph):
                self.graphs[graph_id] = table.compacted(safe)

    def remove(self, graph_id: int, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> None:
        if graph_id not in self.graphs or len(s) == 0:
            return
        table = self.graphs[graph_id]
        gone = MemoryGraph(s, p, o)
        if isinstance(table, LayeredGraph):
            self.graphs[graph_id] = table.without(gone)
        else:
            self.graphs[graph_id] = table.with_changes(None, gone)

    def create(self, graph_id: int) -> None:
        self.graphs.setdefault(graph_id, MemoryGraph.empty())

    def clear(self, graph_id: int) -> None:
        if graph_id in self.graphs:
            self.graphs[graph_id] = MemoryGraph.empty()

    def drop(self, graph_id: int) -> None:
        if graph_id == DEFAULT_GRAPH:
            self.graphs[DEFAULT_GRAPH] = MemoryGraph.empty()
        else:
            self.graphs.pop(graph_id, None)

    def commit(self) -> Snapshot:
        self.compact(self.store.compaction_bounds())
        return self.store._publish(self)


class QuadStore:
    """Term dictionary plus the current snapshot of all graphs."""

    def __init__(self) -> None:
        self.terms = TermDictionary()
        self._snapshot = Snapshot({DEFAULT_GRAPH: MemoryGraph.empty()}, 0)
        self._write_lock = threading.Lock()
        self._writer: Transaction | None = None
        #: per stream number, the earliest window close a pending continuous query
        #: still reads the store as of (set by the stream engine); deltas of
        #: those streams at or after it are not compacted yet
        self.compaction_bounds: Callable[[], dict[int, int]] = dict

    def snapshot(self) -> Snapshot:
        return self._snapshot

    def begin(self) -> Transaction:
        """Start a write transaction; writers are serialised by ``commit``."""
        self._write_lock.acquire()
        self._writer = Transaction(self, self._snapshot)
        return self._writer

    def abort(self, txn: Transaction) -> None:
        """Give up a transaction: nothing it did becomes visible."""
        if self._writer is txn:
            self._writer = None
            self._write_lock.release()

    def _publish(self, txn: Transaction) -> Snapshot:
        if self._writer is not txn:
            raise RuntimeError("commit of a transaction that is not the open one")
        try:
            self._snapshot = Snapshot(dict(txn.graphs), self._snapshot.version + 1)
            return self._snapshot
        finally:
            self._writer = None
            self._write_lock.release()
