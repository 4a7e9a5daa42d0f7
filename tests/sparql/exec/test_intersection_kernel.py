"""The compiled intersection step (engine/sparql/exec/intersection_kernel.pyx)
against a plain NumPy reference, on generated sorted lists of every awkward
shape: empty lists, single values, all-equal lists, disjoint ranges,
interleaved values, one huge list beside a tiny one, and negative or very
large IDs."""

from __future__ import annotations

import numpy as np
import pytest
from engine.sparql.exec.intersection_kernel import intersect_lists, keyed_ranges, paired_ranges

from engine.store.csr import build_adjacency
from engine.store.neighbour_lists import PAIRED, PairLists


def reference(first: tuple, second: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Row by row with np.intersect1d: the answer the kernel must give."""
    (fs, fv, fk), (ss, sv, sk) = first, second
    rows, values = [], []
    for i, (a, b) in enumerate(zip(fk.tolist(), sk.tolist(), strict=True)):
        common = np.intersect1d(fv[fs[a]:fs[a + 1]], sv[ss[b]:ss[b + 1]])
        rows.append(np.full(len(common), i, dtype=np.int64))
        values.append(common)
    return np.concatenate(rows or [np.zeros(0, np.int64)]), np.concatenate(values or [np.zeros(0, np.int64)])


def sorted_set(rng: np.random.Generator, shape: str, offset: int) -> np.ndarray:
    """One sorted, repeat-free list of the named shape."""
    if shape == "empty":
        return np.zeros(0, dtype=np.int64)
    if shape == "one":
        return np.array([offset + int(rng.integers(0, 50))], dtype=np.int64)
    if shape == "huge":
        return np.unique(rng.integers(0, 20_000, size=int(rng.integers(2_000, 8_000)))) + offset
    if shape == "dense":  # every value of a short run: equal lists when both sides pick it
        return np.arange(offset, offset + int(rng.integers(1, 40)), dtype=np.int64)
    if shape == "far":  # a range no other shape reaches: disjoint from everything else
        return np.unique(rng.integers(1 << 40, (1 << 40) + 1000, size=int(rng.integers(1, 30))))
    return np.unique(rng.integers(0, int(rng.integers(5, 400)), size=int(rng.integers(1, 60)))) + offset


SHAPES = ("empty", "one", "huge", "dense", "far", "small")


def lists(rng: np.random.Generator, n_lists: int, offset: int,
          shapes: tuple[str, ...] = SHAPES) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, values)`` of ``n_lists`` lists of random shapes."""
    parts = [sorted_set(rng, shapes[int(rng.integers(0, len(shapes)))], offset) for _ in range(n_lists)]
    starts = np.zeros(n_lists + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(p) for p in parts])
    return starts, np.concatenate(parts).astype(np.int64)


@pytest.mark.parametrize("seed", range(40))
def test_the_kernel_agrees_with_numpy(seed):
    rng = np.random.default_rng(seed)
    offset = int(rng.choice([0, -100, (1 << 33)]))  # IDs past 32 bits and negative (query-local) ones
    n_rows = int(rng.integers(0, 60))
    fs, fv = lists(rng, int(rng.integers(1, 12)), offset)
    ss, sv = lists(rng, int(rng.integers(1, 12)), offset)
    fk = rng.integers(0, len(fs) - 1, size=n_rows).astype(np.int64)
    sk = rng.integers(0, len(ss) - 1, size=n_rows).astype(np.int64)
    rows, values = intersect_lists(fs[:-1], fs[1:], fv, fk, ss[:-1], ss[1:], sv, sk)
    want_rows, want_values = reference((fs, fv, fk), (ss, sv, sk))
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(values, want_values)
    # the sides swapped give the same rows and values
    rows, values = intersect_lists(ss[:-1], ss[1:], sv, sk, fs[:-1], fs[1:], fv, fk)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(values, want_values)


def test_equal_disjoint_and_lopsided_lists():
    huge = np.arange(0, 1_000_000, 3, dtype=np.int64)
    tiny = np.array([2, 3, 999_999, 1_000_002], dtype=np.int64)
    lo, hi = np.array([0, len(huge)]), np.array([len(huge), len(huge) + len(tiny)])
    values = np.concatenate([huge, tiny])
    rows, found = intersect_lists(lo, hi, values, np.array([0, 0, 1]), lo, hi, values, np.array([1, 0, 1]))
    np.testing.assert_array_equal(rows, [0, 0] + [1] * len(huge) + [2] * 4)
    np.testing.assert_array_equal(found, [3, 999_999, *huge.tolist(), *tiny.tolist()])
    nothing = intersect_lists(np.array([0]), np.array([2]), np.array([1, 2]), np.array([0]),
                              np.array([0]), np.array([2]), np.array([3, 4]), np.array([0]))
    assert [len(part) for part in nothing] == [0, 0]


def test_a_key_outside_the_lists_is_refused():
    lo, hi, values = np.array([0]), np.array([1]), np.array([5])
    with pytest.raises(IndexError):
        intersect_lists(lo, hi, values, np.array([1]), lo, hi, values, np.array([0]))
    with pytest.raises(IndexError):
        intersect_lists(lo, hi + 1, values, np.array([0]), lo, hi, values, np.array([0]))
    with pytest.raises(ValueError):
        intersect_lists(lo, hi, values, np.array([0, 0]), lo, hi, values, np.array([0]))
    with pytest.raises(ValueError):
        keyed_ranges(np.array([1, 2]), 0, 2, 0, np.array([2, 1]))


@pytest.mark.parametrize("seed", range(20))
def test_keyed_ranges_agree_with_searchsorted(seed):
    """A vertex's range in a PSO/POS-like key column, as two searchsorted
    calls find it, including vertices absent, first, last and not stored (0 or below)."""
    rng = np.random.default_rng(seed)
    predicates = np.unique(rng.integers(1, 6, size=3))
    vertices = rng.integers(1, 300, size=int(rng.integers(0, 3000)))
    keys = np.sort((rng.choice(predicates, size=len(vertices)) << 32) | vertices)
    predicate = int(rng.choice(predicates))
    first = int(np.searchsorted(keys, predicate << 32))
    last = int(np.searchsorted(keys, (predicate + 1) << 32))
    asked = np.unique(np.concatenate([rng.integers(-3, 320, size=int(rng.integers(0, 80))), [0, 1, 299]]))
    lo, hi = keyed_ranges(keys, first, last, predicate << 32, asked)
    stored = asked > 0
    want_lo = np.searchsorted(keys, (predicate << 32) | asked, side="left")
    want_hi = np.searchsorted(keys, (predicate << 32) | asked, side="right")
    np.testing.assert_array_equal(lo[stored], want_lo[stored])
    np.testing.assert_array_equal(hi[stored], want_hi[stored])
    assert (lo[~stored] == hi[~stored]).all()


def paired_adjacency(rng: np.random.Generator, n_vertices: int, predicates: np.ndarray):
    """A compact graph's adjacency of one shard (engine/store/csr.py) over
    random edges, int32 as a store writes it, with some vertices that have
    no pairs at all."""
    n_edges = int(rng.integers(0, 600))
    vertex = rng.integers(1, n_vertices, size=n_edges)
    vertex = vertex[vertex % 7 != 3]  # vertices without a pair
    predicate = rng.choice(predicates, size=len(vertex))
    neighbour = rng.integers(1, 3 * n_vertices, size=len(vertex))
    bound = int(max(3 * n_vertices, predicates.max()))
    return build_adjacency(vertex, predicate, neighbour, bound, 1)


@pytest.mark.parametrize("seed", range(20))
def test_paired_ranges_agree_with_the_pair_reader(seed):
    """A vertex's list as a range of ``neighbours``, as the Python reader
    (:class:`~engine.store.neighbour_lists.PairLists`) finds it: vertices
    without the predicate's pair, without any pair, past the arrays, 0 and
    below, repeated and in any order."""
    rng = np.random.default_rng(seed)
    predicates = np.unique(rng.integers(1, 8, size=3))
    arrays = paired_adjacency(rng, int(rng.integers(2, 120)), predicates)
    for predicate in (*predicates.tolist(), 99):
        reader = PairLists(arrays["vertex_offsets"], arrays["pair_predicates"], arrays["pair_offsets"],
                           arrays["neighbours"], predicate)
        layout = reader.kernel_layout()
        assert layout is not None and layout[0] == PAIRED
        n_local = len(arrays["vertex_offsets"]) - 1
        asked = np.concatenate([rng.integers(-3, n_local + 5, size=int(rng.integers(0, 80))),
                                [0, -1, 1, n_local - 1, n_local, n_local + 1, 1 << 40]]).astype(np.int64)
        _, vertex_offsets, pair_predicates, pair_offsets, _, wanted = layout
        lo, hi = paired_ranges(vertex_offsets, pair_predicates, pair_offsets, wanted, asked)
        for vertex, a, b in zip(asked.tolist(), lo.tolist(), hi.tolist(), strict=True):
            assert arrays["neighbours"][a:b].tolist() == list(reader(vertex)), (predicate, vertex)
            assert a <= b


@pytest.mark.parametrize("seed", range(10))
def test_int32_and_int64_values_mix(seed):
    """Either side's values int32 (a compact graph's mapped column, read in
    place) gives the rows and values int64 values give."""
    rng = np.random.default_rng(seed)
    narrow = tuple(shape for shape in SHAPES if shape != "far")  # (IDs that fit in 32 bits)
    fs, fv = lists(rng, int(rng.integers(1, 12)), 0, narrow)
    ss, sv = lists(rng, int(rng.integers(1, 12)), 0, narrow)
    n_rows = int(rng.integers(0, 60))
    fk = rng.integers(0, len(fs) - 1, size=n_rows).astype(np.int64)
    sk = rng.integers(0, len(ss) - 1, size=n_rows).astype(np.int64)
    want_rows, want_values = reference((fs, fv, fk), (ss, sv, sk))
    for first, second in ((fv.astype(np.int32), sv), (fv, sv.astype(np.int32)),
                          (fv.astype(np.int32), sv.astype(np.int32))):
        rows, values = intersect_lists(fs[:-1], fs[1:], first, fk, ss[:-1], ss[1:], second, sk)
        assert rows.dtype == values.dtype == np.int64
        np.testing.assert_array_equal(rows, want_rows)
        np.testing.assert_array_equal(values, want_values)
