"""The compiled lookups of short probe columns (engine/store/key_probe_kernel.pyx
in a sorted order of an in-memory graph or stream batch) and of probe columns
of any length (engine/store/adjacency_kernel.pyx in a compact graph's CSR
arrays, a checked neighbour found by a binary search) give the
same matches, in the same order, as the NumPy path they stand in for, and
the matches an independent scan of the triples finds (a triple a stream
batch holds twice is found twice, as a scan finds it). Generated graphs
(repeated triples in a batch, hub vertices, predicates sorted among a
vertex's pairs), generated probe columns of every shape (constants,
missing keys, query-local and zero IDs, IDs past the arrays), time
slices, int32 and int64 arrays, read-only (mapped) arrays; the row budget
is enforced as before."""

from itertools import product

import numpy as np
import pytest

from engine.store import compact_graph, memory_graph
from engine.store.compact_graph import Adjacency, CompactGraph, Direction
from engine.store.csr import build_adjacency
from engine.store.memory_graph import MemoryGraph
from engine.store.row_budget import RowBudgetExceeded, row_budget
from engine.store.timed_triples import TimedTriples, TimeSlice


def _triples(rng: np.random.Generator, n: int, vertices: int) -> tuple[np.ndarray, ...]:
    """``n`` triples over ``vertices`` IDs and 6 predicates, a few hubs, repeats allowed."""
    hubs = rng.integers(1, vertices, 3)
    s = np.where(rng.random(n) < 0.3, rng.choice(hubs, n), rng.integers(1, vertices, n))
    p = rng.integers(vertices, vertices + 6, n)
    o = np.where(rng.random(n) < 0.3, rng.choice(hubs, n), rng.integers(1, vertices, n))
    return s.astype(np.int64), p.astype(np.int64), o.astype(np.int64)


def _probe_column(rng: np.random.Generator, values: np.ndarray, rows: int, vertices: int) -> np.ndarray:
    """Values taken from the graph, plus absent, zero, query-local and out-of-range IDs."""
    pool = np.concatenate([values, [0, -5, vertices + 50, 2**31 - 1]]).astype(np.int64)
    if rng.random() < 0.3:  # one constant repeated, as a query constant is
        return np.full(rows, rng.choice(pool), dtype=np.int64)
    return rng.choice(pool, rows).astype(np.int64)


def _scan(s, p, o, ts, bounds, probe: dict[str, np.ndarray | None], rows: int) -> list[tuple]:
    """The matches by brute force: per probe row, every stored row that agrees."""
    found = []
    for row in range(rows):
        keep = np.ones(len(s), dtype=bool)
        for name, column in (("s", s), ("p", p), ("o", o)):
            if probe[name] is not None:
                keep &= column == probe[name][row]
        if bounds is not None:
            keep &= (ts >= bounds[0]) & (ts < bounds[1])
        found += [(row, int(a), int(b), int(c)) for a, b, c in zip(s[keep], p[keep], o[keep], strict=True)]
    return sorted(found)


def _as_rows(matches) -> list[tuple]:
    rows, s, p, o = matches
    return [(int(r), int(a), int(b), int(c)) for r, a, b, c in zip(rows, s, p, o, strict=True)]


def _first_occurrences(matches: list[tuple]) -> list[tuple]:
    return list(dict.fromkeys(matches))


def _numpy_path(monkeypatch, module, graph, probe: dict, rows: int):
    """The same match with the compiled lookup switched off."""
    with monkeypatch.context() as patch:
        patch.setattr(module, "KERNEL_ROWS_MAX" if module is compact_graph else "SORTED_PROBE_MIN", -1)
        return graph.match(probe["s"], probe["p"], probe["o"], rows)


_SHAPES = [shape for shape in product((False, True), repeat=3) if any(shape)]


@pytest.mark.parametrize("seed", range(30))
def test_sorted_orders_match_as_the_numpy_path_and_a_scan(seed: int, monkeypatch) -> None:
    rng = np.random.default_rng(seed)
    vertices = int(rng.choice([5, 40, 300]))
    s, p, o = _triples(rng, int(rng.choice([1, 30, 400])), vertices)
    ts = np.sort(rng.integers(0, 1000, len(s)))
    batch = TimedTriples(ts, s, p, o, maybe_repeats=True)
    start, end = sorted(rng.integers(0, 1000, 2).tolist())
    graphs = [(batch, ts, None), (TimeSlice(batch, start, end), ts, (start, end)),
              (MemoryGraph(s, p, o), None, None)]
    for (graph, stamps, bounds), shape in product(graphs, _SHAPES):
        rows = int(rng.integers(1, memory_graph.SORTED_PROBE_MIN + 1))
        columns = graph.batch if isinstance(graph, TimeSlice) else graph
        probe = {name: _probe_column(rng, getattr(columns, name), rows, vertices) if bound else None
                 for name, bound in zip("spo", shape, strict=True)}
        found = graph.match(probe["s"], probe["p"], probe["o"], rows)
        numpy_found = _as_rows(_numpy_path(monkeypatch, memory_graph, graph, probe, rows))
        # a batch may hold a triple twice: NumPy's search of long lists finds it once, the
        # kernel as often as it is there (as a scan does); windows deduplicate either way
        assert _first_occurrences(_as_rows(found)) == _first_occurrences(numpy_found)
        if stamps is None:  # a graph is a set: its own rows, deduplicated
            s_, p_, o_ = graph.s, graph.p, graph.o
        else:
            s_, p_, o_ = s, p, o
        assert sorted(_as_rows(found)) == _scan(s_, p_, o_, stamps, bounds, probe, rows)


def _compact(rng: np.random.Generator, s, p, o, wide: bool, read_only: bool) -> CompactGraph:
    """A compact graph of the triples, its arrays int64 (``wide``) or as built, read-only if asked."""
    bound = int(max(s.max(), o.max(), p.max()))

    def adjacency(a, b, c) -> Adjacency:
        arrays = build_adjacency(a, b, c, bound, 1)
        if wide:
            arrays = {name: array.astype(np.int64) for name, array in arrays.items()}
        for array in arrays.values():
            array.flags.writeable = not read_only
        return Adjacency(arrays, 1, 0)

    out, into = adjacency(s, p, o), adjacency(o, p, s)
    return CompactGraph(Direction([out]), Direction([into]), len(out.neighbours))


@pytest.mark.parametrize("seed", range(30))
def test_compact_graphs_match_as_the_numpy_path_and_a_scan(seed: int, monkeypatch) -> None:
    rng = np.random.default_rng(1000 + seed)
    vertices = int(rng.choice([5, 40, 300]))
    s, p, o = _triples(rng, int(rng.choice([1, 30, 400])), vertices)
    graph = _compact(rng, s, p, o, wide=bool(rng.integers(0, 2)), read_only=bool(rng.integers(0, 2)))
    unique = MemoryGraph(s, p, o)
    for shape in _SHAPES:
        if not shape[0] and not shape[2]:
            continue  # a predicate alone is read through the predicate index, not a vertex
        # short columns (a query's constants) and long ones (a window's vertices)
        rows = int(rng.integers(1, 4 * memory_graph.SORTED_PROBE_MIN))
        probe = {name: _probe_column(rng, column, rows, vertices) if bound else None
                 for name, bound, column in zip("spo", shape, (s, p, o), strict=True)}
        found = graph.match(probe["s"], probe["p"], probe["o"], rows)
        assert _as_rows(found) == _as_rows(_numpy_path(monkeypatch, compact_graph, graph, probe, rows))
        assert sorted(_as_rows(found)) == _scan(unique.s, unique.p, unique.o, None, None, probe, rows)


def test_compiled_lookups_keep_the_row_budget() -> None:
    """A lookup whose ranges hold more rows than the budget is refused as before."""
    rng = np.random.default_rng(7)
    s = np.full(500, 3, dtype=np.int64)
    p = np.full(500, 50, dtype=np.int64)
    o = np.arange(1, 501, dtype=np.int64)
    ts = np.arange(500, dtype=np.int64)
    constant = np.array([3], dtype=np.int64)
    for graph in (TimedTriples(ts, s, p, o, maybe_repeats=False), MemoryGraph(s, p, o),
                  _compact(rng, s, p, o, wide=False, read_only=True)):
        with row_budget(100), pytest.raises(RowBudgetExceeded):
            graph.match(constant, None, None, 1)
        with row_budget(500):
            assert len(graph.match(constant, None, None, 1)[0]) == 500


def test_strided_probe_columns_read_as_contiguous_ones() -> None:
    """A column viewed out of a wider array (a solution's column) is not the
    kernel's buffer: it is read the NumPy way, with the same matches."""
    rng = np.random.default_rng(11)
    s, p, o = _triples(rng, 200, 40)
    wide = np.stack([s[:10], p[:10]], axis=1)
    for graph in (MemoryGraph(s, p, o), _compact(rng, s, p, o, wide=False, read_only=False)):
        strided = graph.match(wide[:, 0], wide[:, 1], None, 10)
        contiguous = graph.match(wide[:, 0].copy(), wide[:, 1].copy(), None, 10)
        assert _as_rows(strided) == _as_rows(contiguous)


@pytest.mark.parametrize("seed", range(20))
def test_one_row_without_a_predicate_is_scanned_as_the_order_would_find_it(seed: int) -> None:
    """A small batch asked for one subject (or object, or both) and any
    predicate is scanned instead of sorted by subject: the same matches as
    once the order is built, and as a scan of the rows."""
    rng = np.random.default_rng(2000 + seed)
    vertices = int(rng.choice([5, 40]))
    s, p, o = _triples(rng, int(rng.choice([1, 30, 400])), vertices)
    ts = np.sort(rng.integers(0, 1000, len(s)))
    start, end = sorted(rng.integers(0, 1000, 2).tolist())
    columns = {"s": s, "p": p, "o": o}
    shapes = [(True, False, False), (False, False, True), (True, False, True)]
    for shape, sliced in product(shapes, (False, True)):
        batch = TimedTriples(ts, s, p, o, maybe_repeats=True)
        graph, bounds = (TimeSlice(batch, start, end), (start, end)) if sliced else (batch, None)
        probe = {name: _probe_column(rng, columns[name], 1, vertices) if bound else None
                 for name, bound in zip("spo", shape, strict=True)}
        scanned = sorted(_as_rows(graph.match(probe["s"], probe["p"], probe["o"], 1)))
        assert "spo" not in batch.__dict__ and "osp" not in batch.__dict__
        assert scanned == _scan(s, p, o, ts, bounds, probe, 1)
        _ = batch.spo, batch.osp  # now the orders are there: read through them
        assert sorted(_as_rows(graph.match(probe["s"], probe["p"], probe["o"], 1))) == scanned


@pytest.mark.parametrize("wide", [False, True])
def test_a_predicate_alone_reads_its_index_and_an_absent_one_nothing(wide: bool) -> None:
    """``(?, p, ?)`` on a compact graph (its offsets int32 or int64): the
    predicate's edges as a scan finds them, none for a predicate it lacks."""
    rng = np.random.default_rng(21)
    s, p, o = _triples(rng, 300, 40)
    graph = _compact(rng, s, p, o, wide=wide, read_only=True)
    unique = MemoryGraph(s, p, o)
    for predicate in (40, 43, 45, 7, 1000):
        probe = {"s": None, "p": np.array([predicate], dtype=np.int64), "o": None}
        found = graph.match(None, probe["p"], None, 1)
        assert all(column.dtype == np.int64 for column in found)
        assert sorted(_as_rows(found)) == _scan(unique.s, unique.p, unique.o, None, None, probe, 1)
