"""GRAPH and WINDOW: run a pattern against another graph of the dataset.

Both switch the context's active graph for the inner pattern only. ``GRAPH
?g`` runs the pattern once per named graph and binds ``?g``; a WINDOW reads
one window of a continuous query's dataset.
"""

from __future__ import annotations

import numpy as np

from engine.rdf import IRI
from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.solutions import Solutions, concat
from engine.sparql.expr import ExprError


def graph_operator(node: A.Graph, cx: ExecutionContext) -> Solutions:
    """``GRAPH <iri>`` (empty when the dataset has no such graph) or ``GRAPH ?g``."""
    if isinstance(node.name, IRI):
        graph = cx.dataset.named.get(cx.terms.encode(node.name))
        if graph is None:
            return Solutions.empty()
        with cx.active_graph(graph):
            return cx.run(node.pattern)
    var = node.name.name
    parts = []
    for graph_id, graph in cx.dataset.named.items():
        with cx.active_graph(graph):
            part = cx.run(node.pattern)
        if var in part.columns:
            # rows that bind the graph variable must agree with the graph
            column = part.columns[var]
            part = part.mask((column == graph_id) | (column == 0))
        part = part.with_column(var, np.full(part.length, graph_id, dtype=np.int64))
        parts.append(part)
    return concat(parts) if parts else Solutions.empty([var])


def window(node: A.Window, cx: ExecutionContext) -> Solutions:
    """RSP-QL ``WINDOW <name>``: the pattern over the window's content."""
    graph = cx.dataset.windows.get(node.name)
    if graph is None:
        raise ExprError(f"unknown window <{node.name.value}>")
    with cx.active_graph(graph):
        return cx.run(node.pattern)
