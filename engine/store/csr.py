"""Wukong's ``(vertex, predicate, direction) -> neighbours`` layout as CSR arrays.

One direction of one graph in one shard is a two-level CSR over the shard's
vertices (local index ``vertex // shards``):

    vertex_offsets[v] .. vertex_offsets[v+1]   the vertex's (predicate) pairs
    pair_predicates[j]                         sorted within the vertex
    pair_offsets[j] .. pair_offsets[j+1]       the pair's neighbours
    neighbours                                 sorted within the pair
    index_predicates / index_offsets / index_pairs / index_triples
        per predicate, its pairs in vertex order (Wukong's index vertex:
        which vertices have the predicate) and how many edges it has

The same arrays are built by the Spark loader's writer tasks (and saved as
files) and by an in-memory load (and kept): sorting, de-duplication and the
offsets are whole-array NumPy operations, never a Python loop per edge.
"""

from __future__ import annotations

import numpy as np


def id_dtype(n_terms: int) -> np.dtype:
    """int32 IDs while the dictionary allows it (halves the store's size)."""
    return np.dtype(np.int32) if n_terms < 2**31 - 1 else np.dtype(np.int64)


def offset_dtype(largest: int) -> np.dtype:
    return np.dtype(np.int32) if largest < 2**31 - 1 else np.dtype(np.int64)


def _dense_ranks(values: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct sorted values, rank of each value) for non-negative values
    below ``bound``, in O(n + bound) instead of a sort."""
    present = np.zeros(bound + 1, dtype=bool)
    present[values] = True
    distinct = np.flatnonzero(present)
    rank = np.cumsum(present) - 1
    return distinct, rank[values]


def sorted_unique(columns: list[np.ndarray]) -> list[np.ndarray]:
    """Rows sorted by the columns (first most significant), duplicates dropped.
    Packs the columns into one int64 when their bit widths fit (one sort of
    plain integers); falls back to ``lexsort`` otherwise."""
    widths = [int(c.max()).bit_length() if len(c) else 0 for c in columns]
    if sum(widths) <= 63:
        key = np.zeros(len(columns[0]), dtype=np.int64)
        for col, width in zip(columns, widths):
            key = (key << width) | col.astype(np.int64)
        key = np.sort(key)  # (np.unique would hash first: far slower here)
        if len(key) > 1:
            key = key[np.r_[True, key[1:] != key[:-1]]]
        out = []
        for width in reversed(widths):
            out.append(key & ((1 << width) - 1))
            key = key >> width
        return out[::-1]
    order = np.lexsort(columns[::-1])
    cols = [c[order] for c in columns]
    keep = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        keep[1:] = np.logical_or.reduce([c[1:] != c[:-1] for c in cols])
    return [c[keep] for c in cols]


def build_adjacency(vertex: np.ndarray, predicate: np.ndarray, neighbour: np.ndarray, n_terms: int,
                    shards: int) -> dict[str, np.ndarray]:
    """The CSR arrays of one direction of one graph in one shard; the input
    edges may come in any order and repeat."""
    ids = id_dtype(n_terms)
    # up to the highest vertex present: a small graph in a large store must
    # not pay an offset for every term (IDs past the end have no pairs)
    n_local = (int(vertex.max()) // shards + 1) if len(vertex) else 1
    preds, p_rank = _dense_ranks(predicate, n_terms)
    local, p_rank, nbr = sorted_unique([vertex // shards, p_rank, neighbour])
    m = len(nbr)
    new_pair = np.ones(m, dtype=bool)
    if m > 1:
        new_pair[1:] = (local[1:] != local[:-1]) | (p_rank[1:] != p_rank[:-1])
    starts = np.flatnonzero(new_pair)
    pair_local, pair_rank = local[starts], p_rank[starts]
    sizes = np.diff(np.append(starts, m))
    vertex_offsets = np.zeros(n_local + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair_local, minlength=n_local), out=vertex_offsets[1:])
    by_predicate = np.argsort(pair_rank, kind="stable")
    per_predicate = np.bincount(pair_rank, minlength=len(preds))
    used = per_predicate > 0
    index_offsets = np.zeros(int(used.sum()) + 1, dtype=np.int64)
    np.cumsum(per_predicate[used], out=index_offsets[1:])
    triples = np.bincount(pair_rank, weights=sizes, minlength=len(preds))[used]
    pairs = len(starts)
    return {
        "vertex_offsets": vertex_offsets.astype(offset_dtype(pairs)),
        "pair_predicates": preds[pair_rank].astype(ids),
        "pair_offsets": np.append(starts, m).astype(offset_dtype(m)),
        "neighbours": nbr.astype(ids),
        "index_predicates": preds[used].astype(ids),
        "index_offsets": index_offsets.astype(offset_dtype(pairs)),
        "index_pairs": by_predicate.astype(offset_dtype(pairs)),
        "index_triples": triples.astype(np.int64),
    }
