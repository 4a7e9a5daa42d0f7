"""The stream rows a checkpoint keeps apart from the base, with their timestamps.

A stored graph that streams absorb into holds, besides its base, the rows of
recent batches with their application timestamps: a window still pending
reads the graph as of its close, without the rows of later items
(:class:`~engine.store.LayeredGraph`). A checkpoint folds into the base
every row all pending windows see anyway; the others (and the copies other
streams absorbed of their triples) go to ``stream_layers.npz`` in the
checkpoint directory, so that a restart reads the same as-of views as the
process that wrote it. The file names streams by name (stream numbers are
given anew at each start); a row of a stream no longer declared is stored
data, visible to every window.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from engine.store import NO_STREAM, LayeredGraph, QuadStore
from engine.store.layered_graph import Delta, make_delta

LAYERS_FILE = "stream_layers.npz"
#: the ``kind`` column: a delta row, or a copy of a delta's triple
DELTA, COPY = 0, 1


def save_layers(target: Path, apart: dict[int, LayeredGraph], names: dict[int, str]) -> None:
    """Write the rows ``apart`` keeps per graph ID (graphs with an empty base,
    see :meth:`LayeredGraph.split`), their streams named by ``names``
    (stream number -> name). Nothing is written when no graph keeps any."""
    graph, kind, stream, columns = [], [], [], []
    listed = sorted({d.stream for layered in apart.values() for d in (*layered.deltas, *layered.copies)})
    index = {number: i for i, number in enumerate(listed)}
    for graph_id, layered in apart.items():
        for code, layers in ((DELTA, layered.deltas), (COPY, layered.copies)):
            for d in layers:
                rows = len(d.ts)
                graph.append(np.full(rows, graph_id, dtype=np.int64))
                kind.append(np.full(rows, code, dtype=np.int8))
                stream.append(np.full(rows, index[d.stream], dtype=np.int32))
                columns.append((d.ts, d.triples.s, d.triples.p, d.triples.o))
    if not columns:
        return
    arrays = {name: np.concatenate([c[i] for c in columns]) for i, name in enumerate(("ts", "s", "p", "o"))}
    with open(target / LAYERS_FILE, "wb") as out:
        np.savez(out, graph=np.concatenate(graph), kind=np.concatenate(kind), stream=np.concatenate(stream),
                 names=np.array([names.get(number, "") for number in listed], dtype=str), **arrays)
        out.flush()
        os.fsync(out.fileno())


def restore_layers(directory: Path, quad_store: QuadStore, numbers: dict[str, int]) -> int:
    """Put back the rows checkpoint ``directory`` kept apart, onto the graphs
    opened from it, with the stream numbers ``numbers`` (name -> number) of
    this start; returns the rows put back. The store must have been told the
    pending windows' retention bounds already: the commit compacts within them."""
    path = directory / LAYERS_FILE
    if not path.exists():
        return 0
    with np.load(path) as data:
        columns = {name: data[name] for name in data.files}
    streams = np.array([numbers.get(str(name), NO_STREAM) for name in columns["names"]], dtype=np.int64)
    stream = streams[columns["stream"]] if len(streams) else columns["stream"].astype(np.int64)
    txn = quad_store.begin(journaled=False)
    try:
        for graph_id in np.unique(columns["graph"]).tolist():
            in_graph = columns["graph"] == graph_id
            deltas = _layers(columns, stream, in_graph & (columns["kind"] == DELTA))
            copies = _layers(columns, stream, in_graph & (columns["kind"] == COPY))
            known = tuple(c for c in copies if c.stream != NO_STREAM)
            opened = txn.graph(graph_id)
            if isinstance(opened, LayeredGraph):
                deltas, known = (*opened.deltas, *deltas), (*opened.copies, *known)
                opened = opened.base
            layered = LayeredGraph(opened, deltas, known)
            for gone in (c for c in copies if c.stream == NO_STREAM):  # its stream was dropped: stored data
                t = gone.triples
                layered = layered.appended(t.s, t.p, t.o, gone.ts, NO_STREAM)
            txn.graphs[graph_id] = layered
    except BaseException:
        quad_store.abort(txn)
        raise
    txn.commit()
    return int(len(stream))


def _layers(columns: dict[str, np.ndarray], stream: np.ndarray, rows: np.ndarray) -> tuple[Delta, ...]:
    """One delta per stream of the selected rows."""
    layers = []
    for number in np.unique(stream[rows]).tolist():
        pick = rows & (stream == number)
        layers.append(make_delta(columns["s"][pick], columns["p"][pick], columns["o"][pick],
                                 columns["ts"][pick], number))
    return tuple(layers)
