"""The CSR arrays of ``engine.store.csr`` read and written as a stream of sorted edges.

:func:`engine.store.csr.build_adjacency` builds one direction of a graph from
all its edges at once: fine for a load, whose edges are in memory anyway, but
a checkpoint of a large store must not materialise it. Here the same arrays
are produced from edges that arrive sorted by (vertex, predicate, neighbour)
and without duplicates, a chunk at a time (:class:`AdjacencyWriter`, which
appends to the files as it goes), and an existing direction is read back
in that order a chunk at a time (:func:`adjacency_edges`), whether its
arrays are in memory or in files read by range
(:class:`~engine.store.array_files.FileArray`). :func:`merge_sorted` merges
such a stream with sorted edges held in memory (a graph's deltas). Memory
is a few chunks, whatever the graph's size.

Only one shard is written (a data directory's checkpoints are one shard);
the arrays equal what ``build_adjacency`` makes of the same edges.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from engine.store.array_files import FileArray, NpyWriter
from engine.store.csr import offset_dtype

#: edges per chunk read or written
CHUNK = 1 << 17
#: pair indexes gathered at once while the predicate index is written
INDEX_GROUP = 1 << 18

Edges = tuple[np.ndarray, np.ndarray, np.ndarray]


def adjacency_edges(arrays: Mapping[str, np.ndarray | FileArray],
                    chunk: int | None = None) -> Iterator[Edges]:
    """(vertex, predicate, neighbour) int64 chunks of one direction of one
    shard-of-one, in the arrays' order: sorted, no duplicates."""
    chunk = chunk or CHUNK
    vo, pp, po, nb = (arrays[name] for name in ("vertex_offsets", "pair_predicates", "pair_offsets",
                                                "neighbours"))
    edges, n_pairs = len(nb), len(pp)
    e = pair = vertex = 0  # the chunk's first edge, the pair holding it, that pair's vertex
    while e < edges:
        end = min(e + chunk, edges)
        # each pair after the first holds at least one edge from e on: end - e + 1 offsets suffice
        window = np.asarray(po[pair : min(pair + end - e + 1, n_pairs + 1)], dtype=np.int64)
        counts = np.clip(window[1:], e, end) - np.clip(window[:-1], e, end)
        used = np.flatnonzero(counts)
        pairs = pair + used
        vertices, vertex = _vertices_of(pairs, vo, vertex)
        counts = counts[used]
        predicates = np.asarray(pp[int(pairs[0]) : int(pairs[-1]) + 1], dtype=np.int64)[used - used[0]]
        yield (np.repeat(vertices, counts), np.repeat(predicates, counts),
               np.asarray(nb[e:end], dtype=np.int64))
        pair += int(np.searchsorted(window, end, side="right")) - 1
        e = end


def _vertices_of(pairs: np.ndarray, vertex_offsets, cursor: int) -> tuple[np.ndarray, int]:
    """The vertex of each pair (ascending pair indexes), reading
    ``vertex_offsets`` a block at a time from ``cursor`` (a vertex at or
    before the first pair's); returns them and the last pair's vertex."""
    found: list[np.ndarray] = []
    rest = pairs
    while len(rest):
        block = np.asarray(vertex_offsets[cursor : cursor + CHUNK + 1], dtype=np.int64)
        # pairs below the block's last offset belong to the block's vertices
        k = len(rest) if len(block) < CHUNK + 1 else int(np.searchsorted(rest, block[-1], side="left"))
        if k:
            found.append(cursor + np.searchsorted(block, rest[:k], side="right") - 1)
            rest = rest[k:]
        if len(rest):
            cursor += CHUNK
    vertices = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    return vertices, int(vertices[-1]) if len(vertices) else cursor


def sorted_edges(vertex: np.ndarray, predicate: np.ndarray, neighbour: np.ndarray) -> Edges:
    """In-memory edges sorted by (vertex, predicate, neighbour), duplicates dropped."""
    order = np.lexsort((neighbour, predicate, vertex))
    v, p, n = (np.asarray(c, dtype=np.int64)[order] for c in (vertex, predicate, neighbour))
    if len(v) > 1:
        keep = np.ones(len(v), dtype=bool)
        keep[1:] = (v[1:] != v[:-1]) | (p[1:] != p[:-1]) | (n[1:] != n[:-1])
        v, p, n = v[keep], p[keep], n[keep]
    return v, p, n


def chunks_of(edges: Edges, start: int = 0, chunk: int | None = None) -> Iterator[Edges]:
    """In-memory sorted edges from ``start`` on, a chunk at a time."""
    chunk = chunk or CHUNK
    for at in range(start, len(edges[0]), chunk):
        yield tuple(c[at : at + chunk] for c in edges)


def merge_sorted(stream: Iterator[Edges], extra: Edges) -> Iterator[Edges]:
    """The sorted union of a sorted chunk stream and sorted in-memory edges,
    still a chunk at a time: each chunk of ``stream`` takes the extra edges
    up to its last edge."""
    ev, ep, en = extra
    taken = 0
    for v, p, n in stream:
        if not len(v):
            continue
        cut = max(_upto(extra, int(v[-1]), int(p[-1]), int(n[-1])), taken)
        if cut > taken:
            v, p, n = sorted_edges(np.concatenate([v, ev[taken:cut]]), np.concatenate([p, ep[taken:cut]]),
                                   np.concatenate([n, en[taken:cut]]))
            taken = cut
        yield v, p, n
    yield from chunks_of(extra, taken)


def _upto(edges: Edges, v: int, p: int, n: int) -> int:
    """How many of the sorted ``edges`` are at or before (v, p, n)."""
    ev, ep, en = edges
    a, b = int(np.searchsorted(ev, v, "left")), int(np.searchsorted(ev, v, "right"))
    c = a + int(np.searchsorted(ep[a:b], p, "left"))
    d = a + int(np.searchsorted(ep[a:b], p, "right"))
    return c + int(np.searchsorted(en[c:d], n, "right"))


class AdjacencyWriter:
    """Writes one direction of one graph (one shard) into ``folder`` from
    sorted, distinct edges given a chunk at a time; ``ids`` is the dtype of
    term IDs and ``bound`` an upper bound of the edge count (it fixes the
    offsets' dtype)."""

    def __init__(self, folder: Path, ids: np.dtype, bound: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.ids = np.dtype(ids)
        self.offsets = offset_dtype(bound)
        self._vertex_offsets = NpyWriter(folder / "vertex_offsets.npy", self.offsets)
        self._pair_predicates = NpyWriter(folder / "pair_predicates.npy", self.ids)
        self._pair_offsets = NpyWriter(folder / "pair_offsets.npy", offset_dtype(bound))
        self._neighbours = NpyWriter(folder / "neighbours.npy", self.ids)
        self.edges = 0
        self.pairs = 0
        self._next_vertex = 0
        self._last: tuple[int, int] = (-1, -1)
        #: per chunk: (distinct predicates of its new pairs, their pair counts), (predicates, edge counts)
        self._pair_counts: list[tuple[np.ndarray, np.ndarray]] = []
        self._edge_counts: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, v: np.ndarray, p: np.ndarray, n: np.ndarray) -> None:
        """The next edges: after every edge added so far, sorted, distinct."""
        if not len(v):
            return
        new_pair = np.ones(len(v), dtype=bool)
        new_pair[1:] = (v[1:] != v[:-1]) | (p[1:] != p[:-1])
        new_pair[0] = (int(v[0]), int(p[0])) != self._last
        starts = np.flatnonzero(new_pair)
        pair_vertices = v[starts]
        top = int(v[-1])
        for first in range(self._next_vertex, top + 1, CHUNK):  # a vertex's offset: the pairs before it
            xs = np.arange(first, min(first + CHUNK, top + 1), dtype=np.int64)
            self._vertex_offsets.append(self.pairs + np.searchsorted(pair_vertices, xs, side="left"))
        self._next_vertex = max(self._next_vertex, top + 1)
        self._pair_offsets.append(self.edges + starts)
        self._pair_predicates.append(p[starts])
        self._neighbours.append(n)
        self._pair_counts.append(np.unique(p[starts], return_counts=True))
        self._edge_counts.append(np.unique(p, return_counts=True))
        self.pairs += len(starts)
        self.edges += len(v)
        self._last = (top, int(p[-1]))

    def close(self) -> int:
        """Finish the arrays (offsets' last entries, the predicate index); returns the edge count."""
        self._vertex_offsets.append(np.array([self.pairs] * (1 if self.edges else 2), dtype=np.int64))
        self._pair_offsets.append(np.array([self.edges], dtype=np.int64))
        for writer in (self._vertex_offsets, self._pair_offsets, self._pair_predicates, self._neighbours):
            writer.close()
        predicates, pair_counts = _totals(self._pair_counts)
        _, edge_counts = _totals(self._edge_counts)
        index_offsets = np.zeros(len(predicates) + 1, dtype=np.int64)
        np.cumsum(pair_counts, out=index_offsets[1:])
        for name, array, dtype in (("index_predicates", predicates, self.ids),
                                   ("index_offsets", index_offsets, self.offsets),
                                   ("index_triples", edge_counts, np.int64)):
            writer = NpyWriter(self.folder / f"{name}.npy", dtype)
            writer.append(array)
            writer.close()
        index_pairs = NpyWriter(self.folder / "index_pairs.npy", self.offsets)
        _write_index_pairs(FileArray(self.folder / "pair_predicates.npy"), predicates, pair_counts,
                           index_pairs)
        index_pairs.close()
        return self.edges


def _totals(counted: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys and summed counts over the chunks' ``(keys, counts)``."""
    if not counted:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    keys = np.concatenate([k for k, _ in counted])
    counts = np.concatenate([c for _, c in counted])
    distinct, inverse = np.unique(keys, return_inverse=True)
    return distinct, np.bincount(inverse, weights=counts, minlength=len(distinct)).astype(np.int64)


def _write_index_pairs(pair_predicates: FileArray, predicates: np.ndarray, pair_counts: np.ndarray,
                       out: NpyWriter) -> None:
    """Each predicate's pairs in pair order, predicates ascending (Wukong's
    index vertex): one pass over the pairs' predicates per group of
    predicates holding up to ``INDEX_GROUP`` pairs (a larger predicate is a
    group of its own and is written as the pass finds its pairs)."""
    total = len(pair_predicates)
    g = 0
    while g < len(predicates):
        h, held = g + 1, int(pair_counts[g])
        while h < len(predicates) and held + int(pair_counts[h]) <= INDEX_GROUP:
            held += int(pair_counts[h])
            h += 1
        lo, hi = int(predicates[g]), int(predicates[h - 1])
        found_p: list[np.ndarray] = []
        found_at: list[np.ndarray] = []
        for start in range(0, total, CHUNK):
            chunk = pair_predicates[start : start + CHUNK]
            if lo == hi:
                out.append(start + np.flatnonzero(chunk == lo))
                continue
            at = np.flatnonzero((chunk >= lo) & (chunk <= hi))
            found_p.append(chunk[at])
            found_at.append(start + at)
        if found_p:
            p = np.concatenate(found_p)
            out.append(np.concatenate(found_at)[np.argsort(p, kind="stable")])
        g = h
