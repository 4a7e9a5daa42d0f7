"""Deletes from a large graph are tombstones over it, not a rebuilt copy, and
every read answers as a graph rebuilt without them would: random graphs,
random deletes, inserts and re-inserts of deleted triples through the
store's transactions, each state compared with an in-memory graph of the
expected triples through the whole Graph protocol (counts, matches with
random bound columns, contains, neighbour lists of every kind, columns), up
to and past the rebuild once the tombstones are a quarter of the base, and
through a checkpoint's writer, which leaves them out a chunk at a time."""

from __future__ import annotations

import numpy as np
import pytest

from engine.durability import checkpoint
from engine.store import CompactGraph, LayeredGraph, MemoryGraph, QuadStore, csr_stream
from engine.store.graph import neighbour_reader
from engine.store.layout import DIRECTIONS, adjacency_dir
from engine.store.trimmed_graph import TrimmedGraph

GRAPH = 1


def triples_of(graph) -> set[tuple[int, int, int]]:
    return set(zip(graph.s.tolist(), graph.p.tolist(), graph.o.tolist(), strict=True))


def rows_of(matches) -> list[tuple[int, ...]]:
    return sorted(zip(*(column.tolist() for column in matches), strict=True))


def loaded_store(rng: np.random.Generator, n: int) -> tuple[QuadStore, set[tuple[int, int, int]]]:
    """A store whose graph is compact CSR arrays of ``n`` random triples
    (a few predicates, subjects and objects drawn narrowly so that they repeat)."""
    s, p, o = rng.integers(1, 300, n), rng.integers(1, 8, n), rng.integers(1, 400, n)
    store = QuadStore()
    txn = store.begin(journaled=False)
    txn.load(GRAPH, s, p, o)
    txn.commit()
    return store, set(zip(s.tolist(), p.tolist(), o.tolist(), strict=True))


def write(store: QuadStore, kind: str, rows: list[tuple[int, int, int]]) -> None:
    s, p, o = (np.array(c, dtype=np.int64) for c in zip(*rows, strict=True))
    txn = store.begin(journaled=False)
    (txn.remove if kind == "delete" else txn.add)(GRAPH, s, p, o)
    txn.commit()


def assert_reads_as(graph, expected: set[tuple[int, int, int]], rng: np.random.Generator) -> None:
    """Every read of ``graph`` answers as the in-memory graph of ``expected``."""
    reference = MemoryGraph(*(np.array(c, dtype=np.int64) for c in zip(*sorted(expected), strict=True)))
    assert len(graph) == len(reference)
    assert triples_of(graph) == expected
    for _ in range(30):
        probe = [None if rng.random() < 0.5 else int(rng.integers(1, hi)) for hi in (300, 8, 400)]
        assert graph.count(*probe) == reference.count(*probe), probe
        assert graph.degree_stats(probe[1])[0] == reference.degree_stats(probe[1])[0]
        n = int(rng.integers(1, 5))
        columns = [None if v is None else rng.integers(max(v - 2, 1), v + 3, n) for v in probe]
        if all(c is None for c in columns):
            columns[1] = rng.integers(1, 8, n)
        assert rows_of(graph.match(*columns, n_rows=n)) == rows_of(reference.match(*columns, n_rows=n))
    sample = sorted(expected)[:: max(len(expected) // 40, 1)]
    probes = [*sample, *((int(rng.integers(1, 300)), int(rng.integers(1, 8)), int(rng.integers(1, 400)))
                         for _ in range(40))]
    s, p, o = (np.array(c, dtype=np.int64) for c in zip(*probes, strict=True))
    assert graph.contains(s, p, o).tolist() == [t in expected for t in probes]
    for predicate, excluded in ((int(rng.integers(1, 8)), frozenset()), (None, frozenset()),
                                (None, frozenset({1, 2}))):
        for backward in (False, True):
            read = neighbour_reader(graph, predicate, backward, excluded)
            want = neighbour_reader(reference, predicate, backward, excluded)
            for vertex in rng.integers(1, 400, 40).tolist():
                assert sorted(read(vertex)) == sorted(want(vertex)), (predicate, backward, excluded, vertex)


@pytest.mark.parametrize("seed", range(6))
def test_deletes_and_inserts_on_a_compact_graph_read_as_the_rebuilt_graph(seed):
    rng = np.random.default_rng(seed)
    store, expected = loaded_store(rng, 20_000)
    assert isinstance(store.snapshot().graph(GRAPH), CompactGraph)
    deleted: list[tuple[int, int, int]] = []
    for _ in range(12):
        held = sorted(expected)
        picked = rng.choice(len(held), size=int(rng.integers(1, 60)), replace=False)
        gone = [held[i] for i in picked.tolist()]
        gone.append((int(rng.integers(1, 300)), 3, 999))  # one the graph lacks: no change
        write(store, "delete", gone)
        expected -= set(gone)
        deleted += gone[:-1]
        if rng.random() < 0.5:  # some deleted triples come back, some new ones arrive
            back = [deleted[i] for i in rng.choice(len(deleted), size=min(len(deleted), 10)).tolist()]
            new = [(int(rng.integers(1, 300)), int(rng.integers(1, 8)), int(rng.integers(1, 400)))
                   for _ in range(10)]
            write(store, "insert", back + new)
            expected |= set(back + new)
        graph = store.snapshot().graph(GRAPH)
        assert isinstance(graph, LayeredGraph) and isinstance(graph.base, TrimmedGraph)
        assert isinstance(graph.base.base, CompactGraph)  # the loaded arrays, never copied
        assert_reads_as(graph, expected, rng)


def test_a_delete_leaves_the_compiled_lists_of_untouched_predicates_as_they_are():
    rng = np.random.default_rng(7)
    store, expected = loaded_store(rng, 5_000)
    victim = next(t for t in sorted(expected) if t[1] == 3)
    write(store, "delete", [victim])
    trimmed = store.snapshot().graph(GRAPH).base
    assert isinstance(trimmed, TrimmedGraph)
    untouched = neighbour_reader(trimmed, 4, backward=False)
    assert untouched.kernel_layout() == neighbour_reader(trimmed.base, 4, backward=False).kernel_layout()
    touched = neighbour_reader(trimmed, 3, backward=False)
    assert not hasattr(touched, "kernel_layout")  # read through matches where an edge went
    assert victim[2] not in touched(victim[0])


def test_tombstones_of_a_quarter_of_the_graph_are_merged_into_new_arrays():
    rng = np.random.default_rng(3)
    store, expected = loaded_store(rng, 300_000)
    held = sorted(expected)
    quarter = len(held) // 4
    write(store, "delete", held[: quarter - 1000])
    graph = store.snapshot().graph(GRAPH)
    assert isinstance(graph.base, TrimmedGraph) and not graph.base.due()
    write(store, "delete", held[quarter - 1000 : quarter + 10])
    graph = store.snapshot().graph(GRAPH)
    assert isinstance(graph.base, CompactGraph)  # rebuilt without them, still compact
    expected -= set(held[: quarter + 10])
    assert_reads_as(graph, expected, rng)


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_a_checkpoint_reads_a_trimmed_graph_a_chunk_at_a_time_without_its_tombstones(
        tmp_path, monkeypatch, direction):
    rng = np.random.default_rng(11)
    s, p, o = rng.integers(1, 300, 6_000), rng.integers(1, 8, 6_000), rng.integers(1, 400, 6_000)
    base = CompactGraph.build(s, p, o)
    directory = tmp_path / "store"
    for name in DIRECTIONS:  # saved and mapped, as a loaded store's graph is
        folder = adjacency_dir(directory, 0, GRAPH, name)
        folder.mkdir(parents=True)
        for array_name, array in base.direction(name).parts[0].arrays().items():
            np.save(folder / f"{array_name}.npy", array)
    mapped = CompactGraph.open(directory, GRAPH, 1, len(base))
    assert all(mapped.direction(d).parts[0].source is not None for d in DIRECTIONS)
    every = sorted(triples_of(base))
    picked = rng.choice(len(every), size=700, replace=False)
    gone = [every[i] for i in picked.tolist()]
    tombstones = MemoryGraph(*(np.array(c, dtype=np.int64) for c in zip(*gone, strict=True)))
    trimmed = TrimmedGraph(mapped, tombstones)
    monkeypatch.setattr(csr_stream, "CHUNK", 97)
    chunks = list(checkpoint._edges(trimmed, direction))
    assert len(chunks) > 10
    vertex, predicate, neighbour = (np.concatenate([c[i] for c in chunks]) for i in range(3))
    s, o = (vertex, neighbour) if direction == DIRECTIONS[0] else (neighbour, vertex)
    written = list(zip(s.tolist(), predicate.tolist(), o.tolist(), strict=True))
    assert sorted(written) == sorted(set(every) - set(gone))
    assert written == sorted(written, key=lambda t: (t[0], t[1], t[2]) if direction == DIRECTIONS[0]
                             else (t[2], t[1], t[0]))
