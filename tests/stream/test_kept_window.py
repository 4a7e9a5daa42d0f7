"""The window graph a query keeps across steps (its batches read without the
triples of an unchanging FROM graph, worked out once per batch) matches
exactly what a graph rebuilt from scratch out of the window's rows and the
stored graph matches, step after step: random batches (tiny ones that the
log merges, big ones), random RANGE and STEP (STEP > RANGE too), two
streams, count windows, triples repeated within and across batches and
stored as well, triples entering and leaving in the same step, batches
expiring as the window moves on."""

import numpy as np
import pytest

from engine.store import MemoryGraph, TimedTriples, WindowGraph
from engine.stream import kept_window
from engine.stream.kept_window import KeptWindow
from engine.stream.transient import TransientLog, local_window_graph

#: a small vocabulary, so that triples repeat and are often stored as well
SUBJECTS, OBJECTS, PREDICATES = 9, 9, (100, 101, 102)


def random_rows(rng, n: int, ts_from: int, ts_to: int) -> tuple[np.ndarray, ...]:
    ts = np.sort(rng.integers(ts_from, ts_to, n))
    return (ts, rng.integers(1, SUBJECTS, n), rng.choice(PREDICATES, n), rng.integers(1, OBJECTS, n))


def stored_graph(rng) -> MemoryGraph:
    """Stored triples over two of the stream's predicates and one of its own."""
    n = int(rng.integers(5, 60))
    return MemoryGraph(rng.integers(1, SUBJECTS, n), rng.choice((100, 101, 200), n),
                       rng.integers(1, OBJECTS, n))


def rebuilt(rows: list[tuple[np.ndarray, ...]], beside: MemoryGraph) -> MemoryGraph:
    """The window and the stored graph as one graph, made from scratch."""
    columns = [np.concatenate([r[i] for r in rows] + [getattr(beside, name)])
               for i, name in ((1, "s"), (2, "p"), (3, "o"))]
    return MemoryGraph(*columns)


def as_set(matches) -> set:
    rows, s, p, o = matches
    found = list(zip(rows.tolist(), s.tolist(), p.tolist(), o.tolist(), strict=True))
    assert len(found) == len(set(found)), "a match was reported twice"
    return set(found)


def assert_same_graph(rng, graph: WindowGraph, expected: MemoryGraph) -> None:
    """Every pattern shape, probed with random rows (few, and enough for the
    distinct-rows path), matches the same triples; membership agrees."""
    for n_rows in (1, 40):
        bound = {name: rng.integers(0, SUBJECTS + 1, n_rows) for name in ("s", "o")}
        bound["p"] = rng.choice((*PREDICATES, 200, 999), n_rows)
        for mask in range(8):
            s, p, o = (bound[name] if mask & (1 << k) else None for k, name in enumerate(("s", "p", "o")))
            assert as_set(graph.match(s, p, o, n_rows)) == as_set(expected.match(s, p, o, n_rows))
        s, p, o = bound["s"], bound["p"], bound["o"]
        assert np.array_equal(graph.contains(s, p, o), expected.contains(s, p, o))


@pytest.mark.parametrize("seed", range(8))
def test_time_windows_kept_across_steps_equal_rebuilt(seed, monkeypatch):
    """Batches are filtered from a random size on (0: all of them), so that
    windows mix filtered batches with ones whose matches are looked up."""
    rng = np.random.default_rng(seed)
    settled = int(rng.choice((0, 0, 30, 300)))
    monkeypatch.setattr(kept_window, "SETTLED_ROWS", settled)
    range_ms = int(rng.choice((50, 100, 300)))
    step_ms = int(rng.choice((20, 50, 100, 400)))  # 400: STEP > RANGE, windows skip rows
    beside = stored_graph(rng)
    logs = [TransientLog(), TransientLog()]
    sent: list[list[tuple]] = [[], []]
    kept = KeptWindow()
    disjoint_steps = 0
    for step in range(1, 17):
        close = step * step_ms
        for log, rows in zip(logs, sent, strict=True):
            for _ in range(int(rng.integers(0, 4))):  # tiny batches merge, big ones stand alone
                batch = random_rows(rng, int(rng.choice((1, 3, 40, 500))), close - step_ms, close)
                start_at = max(log.total and int(rows[-1][0][-1]), int(batch[0][0]))
                batch = (np.maximum(batch[0], start_at), *batch[1:])
                log.append(*batch)
                rows.append(batch)
        start = close - range_ms
        parts = kept.parts([log.window(start, close) for log in logs], (beside,), close)
        graph = local_window_graph(parts, (beside,))
        in_window = [tuple(column[(r[0] >= start) & (r[0] < close)] for column in r)
                     for rows in sent for r in rows]
        assert_same_graph(rng, graph, rebuilt(in_window, beside))
        disjoint_steps += graph.disjoint
        for log in logs:  # rows before the next window's start leave for good
            log.expire(close + step_ms - range_ms, None)
    if settled == 0:
        assert disjoint_steps >= 13, "the kept batches were not read without the stored triples"


def test_small_batches_are_looked_up_per_match():
    """Batches the log may still merge are not filtered: their matches are looked up."""
    rng = np.random.default_rng(5)
    log, kept, beside = TransientLog(), KeptWindow(), stored_graph(rng)
    log.append(*random_rows(rng, kept_window.SETTLED_ROWS + 1, 0, 100))
    log.append(*random_rows(rng, 5, 100, 200))
    for close in (200, 300):
        parts = kept.parts([log.window(0, close)], (beside,), close)
        graph = local_window_graph(parts, (beside,))
    assert [part.outside(beside) for part in graph.parts] == [True, False]


def test_a_changing_from_graph_is_merged_per_match():
    """A FROM graph that is a new one at every step is not filtered into the
    batches: the window graph looks its matches up, and still equals the rebuilt one."""
    rng = np.random.default_rng(99)
    log, rows, kept = TransientLog(), [], KeptWindow()
    for step in range(1, 8):
        close = step * 100
        batch = random_rows(rng, 50, close - 100, close)
        log.append(*batch)
        rows.append(batch)
        beside = stored_graph(rng)
        graph = local_window_graph(kept.parts([log.window(close - 200, close)], (beside,), close), (beside,))
        assert not graph.disjoint
        window = [tuple(c[(r[0] >= close - 200) & (r[0] < close)] for c in r) for r in rows]
        assert_same_graph(rng, graph, rebuilt(window, beside))


@pytest.mark.parametrize("seed", range(4))
def test_count_windows_without_stored_triples_equal_rebuilt(seed, monkeypatch):
    """A count window's rows, copied per window as ``read_window`` does, read
    without the stored triples match what the rebuilt graph matches."""
    monkeypatch.setattr(kept_window, "SETTLED_ROWS", 0)
    rng = np.random.default_rng(100 + seed)
    beside, log = stored_graph(rng), TransientLog()
    count = int(rng.choice((5, 40, 300)))
    kept = KeptWindow()
    for step in range(1, 10):
        log.append(*random_rows(rng, int(rng.choice((3, 60, 400))), step * 100, (step + 1) * 100))
        content = log.sequence_range(log.total - count, log.total)
        batch = TimedTriples(content.ts, content.s, content.p, content.o, maybe_repeats=True)
        graph = local_window_graph(kept.parts([[batch]], (beside,), step), (beside,))
        assert_same_graph(rng, graph, rebuilt([(content.ts, content.s, content.p, content.o)], beside))
        assert graph.disjoint == (step > 1)


def test_a_batch_filters_once_per_stored_graph():
    """The rows outside a stored graph are worked out once and kept on the batch."""
    batch = TimedTriples(np.arange(4), np.array([1, 2, 3, 4]), np.full(4, 100), np.array([5, 6, 7, 8]),
                         maybe_repeats=False)
    batch.build_index()
    stored = MemoryGraph(np.array([2, 9]), np.array([100, 100]), np.array([6, 9]))
    outside = batch.without(stored)
    assert outside is batch.without(stored)
    assert outside.outside(stored) and not batch.outside(stored)
    assert list(zip(outside.s.tolist(), outside.o.tolist())) == [(1, 5), (3, 7), (4, 8)]
    unrelated = MemoryGraph(np.array([1]), np.array([200]), np.array([5]))
    assert batch.without(unrelated) is batch and batch.outside(unrelated)
