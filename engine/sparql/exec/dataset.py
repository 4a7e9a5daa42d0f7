"""The RDF dataset a query runs against, and building it from a store snapshot."""

from __future__ import annotations

import threading

import numpy as np

from engine.rdf import IRI
from engine.sparql.exec.query_terms import QueryTerms
from engine.store import DEFAULT_GRAPH, Graph, MemoryGraph, Snapshot


class QueryDataset:
    """The RDF dataset a query runs against: one default graph and named graphs;
    for an RSP-QL continuous query also its windows, by window IRI."""

    def __init__(
        self,
        default: Graph,
        named: dict[int, Graph],
        windows: dict[IRI, Graph] | None = None,
    ) -> None:
        self.default = default
        self.named = named
        self.windows = windows or {}


#: recent merges, by the identity of the graphs merged (see merged)
_MERGES: dict[tuple[int, ...], tuple[tuple[Graph, ...], Graph]] = {}
MERGES_KEPT = 8
_MERGES_LOCK = threading.Lock()


def merged(graphs: list[Graph]) -> Graph:
    """The RDF merge of several graphs (IDs are global, so a plain union).
    Merging two or more copies their triples and sorts them again. A
    continuous query with several ``FROM`` graphs asks for the same merge of
    the same (immutable) graphs at every window: the last few merges are
    kept, keyed by the graphs' identity (each entry holds its graphs, so an
    identity is not reused while it is kept)."""
    graphs = [g for g in graphs if len(g)]
    if not graphs:
        return MemoryGraph.empty()
    if len(graphs) == 1:
        return graphs[0]
    key = tuple(map(id, graphs))
    found = _MERGES.get(key)
    if found is not None:
        return found[1]
    union = MemoryGraph(
        np.concatenate([g.s for g in graphs]),
        np.concatenate([g.p for g in graphs]),
        np.concatenate([g.o for g in graphs]),
    )
    with _MERGES_LOCK:  # queries run in several threads
        if len(_MERGES) >= MERGES_KEPT:
            _MERGES.pop(next(iter(_MERGES)))
        _MERGES[key] = (tuple(graphs), union)
    return union


def default_graph(snapshot: Snapshot, union_default: bool = False) -> Graph:
    """The default graph of a query naming no graph: the store's own, or
    with ``union_default`` the RDF merge of every graph (see :func:`build_dataset`)."""
    default = snapshot.graphs.get(DEFAULT_GRAPH) or MemoryGraph.empty()
    if union_default:
        default = merged([default, *(snapshot.graphs[g] for g in snapshot.named_graph_ids())])
    return default


def build_dataset(
    snapshot: Snapshot,
    terms: QueryTerms,
    default_graphs: list[IRI] | None = None,
    named_graphs: list[IRI] | None = None,
    union_default: bool = False,
) -> QueryDataset:
    """With no graphs named, the store's own default graph and all its named
    graphs, or with ``union_default`` the RDF merge of all of them as the
    default graph (a server's ``--union-default-graph``: a triple in several
    graphs is one triple of the merge); otherwise exactly the graphs named
    (unknown ones are empty)."""
    if default_graphs is None and named_graphs is None:
        named = {g: snapshot.graphs[g] for g in snapshot.named_graph_ids()}
        return QueryDataset(default_graph(snapshot, union_default), named)
    empty = MemoryGraph.empty()
    default = merged([snapshot.graphs.get(terms.encode(g), empty) for g in default_graphs or []])
    named = {}
    for g in named_graphs or []:
        gid = terms.encode(g)
        named[gid] = snapshot.graphs.get(gid, empty)
    return QueryDataset(default, named)
