"""The streamed CSR writer and reader against ``build_adjacency``: the same arrays from the
same edges, whatever the chunk sizes, and the edges read back in order."""

from __future__ import annotations

import numpy as np
import pytest

from engine.store import csr_stream
from engine.store.array_files import FileArray
from engine.store.csr import build_adjacency
from engine.store.layout import ADJACENCY_ARRAYS


@pytest.mark.parametrize("seed", range(30))
def test_streamed_arrays_equal_the_built_ones_and_read_back_in_order(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 2000))
    top = int(rng.integers(2, 4000))  # sparse vertices: long runs of empty ones
    s, o = rng.integers(1, top, n), rng.integers(1, top, n)
    p = rng.integers(1, int(rng.integers(2, 30)), n)
    if seed % 5 == 0 and n:
        s[: n // 2] = 3  # one vertex with most edges: pairs and vertices split across chunks
    monkeypatch.setattr(csr_stream, "CHUNK", int(rng.integers(1, 50)))
    monkeypatch.setattr(csr_stream, "INDEX_GROUP", int(rng.integers(1, 60)))
    expected = build_adjacency(s, p, o, top + 1, 1)
    edges = csr_stream.sorted_edges(s, p, o)
    in_base = rng.random(len(edges[0])) < 0.6  # a stream merged with in-memory edges
    base, extra = tuple(c[in_base] for c in edges), tuple(c[~in_base] for c in edges)
    writer = csr_stream.AdjacencyWriter(tmp_path / "out", np.dtype(np.int32), max(n, 1))
    for chunk in csr_stream.merge_sorted(csr_stream.chunks_of(base, 0, int(rng.integers(1, 40))), extra):
        writer.add(*chunk)
    assert writer.close() == len(edges[0])
    for name in ADJACENCY_ARRAYS:
        written = np.load(tmp_path / "out" / f"{name}.npy")
        assert np.array_equal(written.astype(np.int64), expected[name].astype(np.int64)), name
    files = {name: FileArray(tmp_path / "out" / f"{name}.npy") for name in ADJACENCY_ARRAYS}
    chunks = list(csr_stream.adjacency_edges(files, int(rng.integers(1, 40))))
    for i in range(3):
        read = np.concatenate([c[i] for c in chunks]) if chunks else np.zeros(0, dtype=np.int64)
        assert np.array_equal(read, edges[i])
