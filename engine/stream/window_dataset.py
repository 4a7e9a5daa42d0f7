"""The dataset one window is evaluated over: its slice of the transient logs
and the stored graphs as of its close.

At the instant ``close`` each time window reads its latest window closed
by then (``[close - range, close)`` when the query's windows share their
STEP) of its stream's log in place, as the indexed batches it spans, and the
stored graphs as they were at ``close``; a count window reads its ``count`` triples and the store as of its
last item. Stored graphs that streams append to (a :class:`LayeredGraph`,
or a cluster's sharded graph) are cut at that time (``as_of``); every other
graph is read whole. C-SPARQL merges the windows into the default graph (with
the FROM graphs, without duplicates: :class:`WindowGraph` does it per match,
not per window); RSP-QL keeps the stored dataset and names each window. The
graph of a window is made by the log its parts come from
(:meth:`~engine.stream.transient.StreamLog.window_graph`): read in this
process, or, in a cluster, on the shards that hold the window's rows. The f:timestamp
function of C-SPARQL is answered from a copy of the window's rows, made only
when a query calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.rdf import XSD_INTEGER, Literal
from engine.sparql.exec import QueryDataset, QueryTerms, merged
from engine.sparql.expr import ExprError
from engine.sparql.syntax import ContinuousQuery
from engine.store import DEFAULT_GRAPH, Graph, MemoryGraph, TimedTriples
from engine.stream.kept_window import KeptWindow
from engine.stream.registry import StreamState
from engine.stream.schedule import WindowSchedule
from engine.stream.transient import WindowContent, local_window_graph

#: C-SPARQL's f:timestamp(?s, ?p, ?o): when the triple entered the window
TIMESTAMP_FUNCTION = "http://larkc.eu/csparql/sparql/jena/ext#timestamp"


@dataclass(frozen=True)
class Window:
    """One evaluation: per stream window of the query, the parts of the log it
    spans and its bounds ``[start, end)``; the bounds reported for the whole
    (the earliest start, the instant); the application time the stored
    graphs are read as of; its rows in arrival order, copied only if asked
    (f:timestamp); and how a graph is made of parts and stored graphs."""

    parts: list[list]
    start_ms: int
    end_ms: int
    as_of: int
    rows: Callable[[], list[WindowContent]]
    graph: Callable[[Sequence[Sequence], Sequence[Graph]], Graph] = local_window_graph
    #: each stream window's [start, end), in registration order
    bounds: tuple[tuple[int, int], ...] = ()


def read_window(spec: ContinuousQuery, schedule: WindowSchedule, close: int) -> Window:
    """The windows of ``spec`` at the instant ``close`` (ms, or sequence number).

    A time window is read in place from the stream index, each as its latest
    window closed at or before the instant (their own bounds when their STEPs
    differ); a count window is copied out of the log and indexed here (its
    rows do not align with batches)."""
    if schedule.count is not None:
        content = schedule.streams[0].log.sequence_range(close - schedule.count, close)
        if not len(content):
            return Window([[]], 0, 0, 0, lambda: [content], bounds=((0, 0),))
        batch = TimedTriples(content.ts, content.s, content.p, content.o, maybe_repeats=True)
        first, last = int(content.ts.min()), int(content.ts.max()) + 1
        return Window([[batch]], first, last, last, lambda: [content], bounds=((first, last),))
    spans = list(zip((s.log for s in schedule.streams), schedule.bounds(close), strict=True))
    return Window([log.window(start, end) for log, (start, end) in spans],
                  min(start for _, (start, _) in spans), close, close,
                  lambda: [log.time_range(start, end) for log, (start, end) in spans],
                  schedule.streams[0].log.window_graph, tuple(bounds for _, bounds in spans))


def _cut(graph: Graph, window: Window, streams: list[StreamState]) -> Graph:
    """``graph`` as of the window's close: a graph that streams append to
    without the triples of items at or after it (graphs that can be cut say
    so with ``as_of``)."""
    as_of = getattr(graph, "as_of", None)
    return as_of({s.number: window.as_of for s in streams}) if as_of is not None else graph


def stored_graphs(spec: ContinuousQuery, window: Window, streams: list[StreamState], graphs: dict,
                  terms: QueryTerms) -> tuple[Graph, ...]:
    """The stored graphs the query names with ``FROM``, as of the window's
    close; for RSP-QL without them, the store's default graph."""
    named = list(spec.query.dataset.default) if spec.query.dataset else []
    ids = [terms.encode(g) for g in named]
    if not ids and spec.language == "rspql":
        ids = [DEFAULT_GRAPH]
    return tuple(_cut(graphs.get(graph_id) or MemoryGraph.empty(), window, streams) for graph_id in ids)


def window_dataset(
    spec: ContinuousQuery, window: Window, streams: list[StreamState], graphs: dict, terms: QueryTerms,
    from_graphs: tuple[Graph, ...] | None = None, default: Graph | None = None,
    kept: KeptWindow | None = None,
) -> QueryDataset:
    """The dataset of ``window`` over the store snapshot's ``graphs``: the
    windows are read in place (:attr:`Window.graph`), beside the stored
    graphs cut as of the window's close. ``from_graphs`` are the
    :func:`stored_graphs`, and ``default`` their merge, if the caller has
    them already; ``kept``, what the query keeps of its window from step to
    step (:mod:`~engine.stream.kept_window`), if it keeps anything."""

    def stored(graph_id: int) -> Graph:
        return _cut(graphs.get(graph_id) or MemoryGraph.empty(), window, streams)

    query = spec.query
    if from_graphs is None:
        from_graphs = stored_graphs(spec, window, streams, graphs, terms)
    stored_named = list(query.dataset.named) if query.dataset else []
    named = {terms.encode(g): stored(terms.encode(g)) for g in stored_named}
    if spec.language == "rspql":
        if default is None and from_graphs:
            default = merged(list(from_graphs))
        if not query.dataset:
            named = {g: _cut(graph, window, streams) for g, graph in graphs.items() if g != DEFAULT_GRAPH}
        windows = {w.name: window.graph([parts], ())
                   for w, parts in zip(spec.windows, window.parts, strict=True)}
        return QueryDataset(default, named, windows)
    # C-SPARQL: the default graph is the RDF merge of the windows and the FROM graphs
    parts = window.parts if kept is None else kept.parts(window.parts, from_graphs, window.end_ms)
    return QueryDataset(window.graph(parts, from_graphs), named)


def timestamp_function(window_rows: Callable[[], list[WindowContent]], terms: QueryTerms):
    """f:timestamp over the window's rows: the latest timestamp of the triple.

    The first call copies the window's rows and sorts them by (s, p, o, ts)
    once; each call is then a binary search on the subject and a scan of its
    few rows."""
    index: list[np.ndarray] = []

    def build() -> None:
        contents = window_rows()
        s = np.concatenate([c.s for c in contents])
        p = np.concatenate([c.p for c in contents])
        o = np.concatenate([c.o for c in contents])
        ts = np.concatenate([c.ts for c in contents])
        order = np.lexsort((ts, o, p, s))
        index.extend((s[order], p[order], o[order], ts[order]))

    def timestamp(s, p, o) -> Literal:
        if not index:
            build()
        subjects, predicates, objects, stamps = index
        sid, pid, oid = terms.encode(s), terms.encode(p), terms.encode(o)
        lo = int(np.searchsorted(subjects, sid, side="left"))
        hi = int(np.searchsorted(subjects, sid, side="right"))
        hits = np.flatnonzero((predicates[lo:hi] == pid) & (objects[lo:hi] == oid))
        if not len(hits):
            raise ExprError("f:timestamp: the triple is not in the window")
        return Literal(str(int(stamps[lo + hits[-1]])), XSD_INTEGER)

    return timestamp
