"""Building the RDF dataset of a query or update from a store snapshot."""

from __future__ import annotations

import numpy as np

from engine.rdf.terms import IRI
from engine.sparql.exec.executor import QueryDataset
from engine.sparql.exec.query_terms import QueryTerms
from engine.store.memory_graph import MemoryGraph
from engine.store.quad_store import DEFAULT_GRAPH, Snapshot


def merged(tables: list[MemoryGraph]) -> MemoryGraph:
    """The RDF merge of several graphs (IDs are global, so a plain union).
    Merging two or more copies their triples: a continuous query with several
    ``FROM`` graphs pays that per window (one graph is read in place)."""
    tables = [t for t in tables if len(t)]
    if not tables:
        return MemoryGraph.empty()
    if len(tables) == 1:
        return tables[0]
    return MemoryGraph(
        np.concatenate([t.s for t in tables]),
        np.concatenate([t.p for t in tables]),
        np.concatenate([t.o for t in tables]),
    )


def build_dataset(
    snapshot: Snapshot,
    terms: QueryTerms,
    default_graphs: list[IRI] | None = None,
    named_graphs: list[IRI] | None = None,
) -> QueryDataset:
    """With no graphs named, the store's own default graph and all its named
    graphs; otherwise exactly the graphs named (unknown ones are empty)."""
    if default_graphs is None and named_graphs is None:
        named = {g: snapshot.graphs[g] for g in snapshot.named_graph_ids()}
        default = snapshot.graphs.get(DEFAULT_GRAPH) or MemoryGraph.empty()
        return QueryDataset(default, named)
    empty = MemoryGraph.empty()
    default = merged([snapshot.graphs.get(terms.encode(g), empty) for g in default_graphs or []])
    named = {}
    for g in named_graphs or []:
        gid = terms.encode(g)
        named[gid] = snapshot.graphs.get(gid, empty)
    return QueryDataset(default, named)
