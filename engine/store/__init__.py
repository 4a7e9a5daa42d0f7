"""Storage: stored graphs of integer-ID triples, the quad store's snapshots
and transactions, and the on-disk format of a loaded store.

- :mod:`~engine.store.graph`: the :class:`Graph` protocol every stored graph implements.
- :mod:`~engine.store.memory_graph`: sorted in-memory arrays (Wukong's key/value layout).
- :mod:`~engine.store.compact_graph`: a loaded store's graph, memory-mapped CSR arrays.
- :mod:`~engine.store.union_graph`: disjoint graphs read as one.
- :mod:`~engine.store.layered_graph`: a base plus timestamped stream deltas.
- :mod:`~engine.store.timed_triples`: one stream batch, indexed once at ingest (the stream index).
- :mod:`~engine.store.window_graph`: a window read in place from its batches, merged with stored graphs.
- :mod:`~engine.store.quad_store`: snapshots, transactions, retention of stream timestamps.
- :mod:`~engine.store.layout`: where each array of a loaded store lives (the loader writes it).
- :mod:`~engine.store.term_hash`: the 64-bit hash that numbers a loaded store's terms.
- :mod:`~engine.store.compact_dictionary`: a loaded store's term dictionary, memory-mapped.
- :mod:`~engine.store.base_store`: opening a loaded store.
- :mod:`~engine.store.row_budget`: the bound on the rows one step of a query may produce.
- :mod:`~engine.store.deadline`: when an evaluation must stop (its time limit, the server's shutdown).

The store depends only on :mod:`engine.rdf`; the loader imports the store,
never the reverse.
"""

from engine.store.availability import StoreUnavailable
from engine.store.base_store import open_quad_store
from engine.store.compact_dictionary import CompactTermDictionary
from engine.store.compact_graph import CompactGraph
from engine.store.deadline import QueryCancelled, Shutdown, deadline_check
from engine.store.graph import Graph, Matches
from engine.store.journal import Change, Journal
from engine.store.layered_graph import NO_STREAM, Delta, LayeredGraph
from engine.store.memory_graph import EMPTY, MemoryGraph, expand_ranges
from engine.store.quad_store import DEFAULT_GRAPH, QuadStore, Snapshot, Transaction, triples_by_graph
from engine.store.row_budget import RowBudgetExceeded, check_rows, checkpoint, row_budget
from engine.store.timed_triples import TimedTriples, TimeSlice, fingerprints
from engine.store.union_graph import UnionGraph
from engine.store.window_graph import WindowGraph

__all__ = [
    "Graph",
    "Matches",
    "MemoryGraph",
    "CompactGraph",
    "UnionGraph",
    "TimedTriples",
    "TimeSlice",
    "WindowGraph",
    "fingerprints",
    "LayeredGraph",
    "Delta",
    "NO_STREAM",
    "EMPTY",
    "expand_ranges",
    "QuadStore",
    "Snapshot",
    "Change",
    "Journal",
    "Transaction",
    "DEFAULT_GRAPH",
    "triples_by_graph",
    "RowBudgetExceeded",
    "QueryCancelled",
    "Shutdown",
    "deadline_check",
    "StoreUnavailable",
    "check_rows",
    "checkpoint",
    "row_budget",
    "CompactTermDictionary",
    "open_quad_store",
]
