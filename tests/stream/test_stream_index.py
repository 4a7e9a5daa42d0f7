"""A window read in place from indexed batches matches exactly what a graph
built from the window's rows matches: the set, its borders, the merge with
stored graphs."""

import numpy as np
import pytest

from engine.store import MemoryGraph, TimedTriples, TimeSlice, WindowGraph
from engine.stream.transient import SMALL_BATCH, TransientLog

RNG_SEED = 7


def ids(*values):
    return np.array(values, dtype=np.int64)


def random_log(rng, batches: int, per_batch: int, vocabulary: int = 12) -> tuple[TransientLog, np.ndarray]:
    """A log of batches at 10 ms apart with repeated triples (a small
    vocabulary), and all its rows as (ts, s, p, o) columns."""
    log = TransientLog()
    rows = []
    for b in range(batches):
        ts = np.sort(rng.integers(b * 100, (b + 1) * 100, per_batch))
        s, o = rng.integers(1, vocabulary, per_batch), rng.integers(1, vocabulary, per_batch)
        p = rng.integers(100, 103, per_batch)
        log.append(ts, s, p, o)
        rows.append(np.stack([ts, s, p, o]))
    return log, np.concatenate(rows, axis=1)


def as_set(matches) -> set:
    rows, s, p, o = matches
    found = list(zip(rows.tolist(), s.tolist(), p.tolist(), o.tolist(), strict=True))
    assert len(found) == len(set(found)), "a window match was reported twice"
    return set(found)


def reference(rows: np.ndarray, start: int, end: int) -> MemoryGraph:
    keep = (rows[0] >= start) & (rows[0] < end)
    return MemoryGraph(rows[1][keep], rows[2][keep], rows[3][keep])


PROBES = [
    ("subject and predicate", lambda c: (c, np.full(len(c), 101), None)),
    ("predicate and object", lambda c: (None, np.full(len(c), 100), c)),
    ("subject only", lambda c: (c, None, None)),
    ("object only", lambda c: (None, None, c)),
    ("all bound", lambda c: (c, np.full(len(c), 102), c[::-1].copy())),
]


@pytest.mark.parametrize("label,probe", PROBES, ids=[p[0] for p in PROBES])
@pytest.mark.parametrize("n_rows", [3, 200])  # 200: the probe column is reduced to distinct rows
def test_window_matches_equal_a_graph_of_the_window_rows(label, probe, n_rows):
    rng = np.random.default_rng(RNG_SEED)
    log, rows = random_log(rng, batches=8, per_batch=30)
    column = rng.integers(0, 14, n_rows)  # 0 and 12-13: values no triple has
    for start, end in [(0, 800), (150, 650), (333, 334), (790, 2000)]:
        window = WindowGraph([log.window(start, end)])
        expected = reference(rows, start, end)
        args = probe(column)
        assert as_set(window.match(*args, n_rows)) == as_set(expected.match(*args, n_rows)), (start, end)
        assert window.contains(rows[1], rows[2], rows[3]).tolist() == \
            expected.contains(rows[1], rows[2], rows[3]).tolist()


def test_predicate_scans_and_full_columns_are_the_window_set():
    rng = np.random.default_rng(RNG_SEED)
    log, rows = random_log(rng, batches=5, per_batch=40)
    window = WindowGraph([log.window(120, 430)])
    expected = reference(rows, 120, 430)
    assert as_set(window.match(None, ids(101), None, 1)) == as_set(expected.match(None, ids(101), None, 1))
    assert as_set(window.match(None, None, None, 1)) == as_set(expected.match(None, None, None, 1))
    assert sorted(zip(window.s.tolist(), window.p.tolist(), window.o.tolist())) == \
        sorted(zip(expected.s.tolist(), expected.p.tolist(), expected.o.tolist()))


def test_a_batch_cut_by_the_window_border_is_read_as_a_time_slice():
    log = TransientLog()
    for b in range(3):
        log.append(ids(b * 10, b * 10 + 5), ids(1, 2), ids(7, 7), ids(3, 4))
    # the log merged these small batches: slice them by time anyway
    parts = log.window(5, 25)
    assert all(isinstance(part, (TimedTriples, TimeSlice)) for part in parts)
    _, s, _, _ = WindowGraph([parts]).match(None, ids(7), None, 1)
    assert sorted(s.tolist()) == [1, 2]  # ts 5, 10, 15, 20 repeat two triples: a set
    _, s, _, _ = WindowGraph([log.window(11, 16)]).match(None, ids(7), None, 1)
    assert s.tolist() == [2]  # only the row at ts 15


def test_the_same_triple_in_two_streams_or_two_batches_is_one_match():
    first, second = TransientLog(), TransientLog()
    first.append(ids(1), ids(5), ids(9), ids(6))
    second.append(ids(2), ids(5), ids(9), ids(6))
    window = WindowGraph([first.window(0, 10), second.window(0, 10)])
    assert len(window.match(ids(5), ids(9), None, 1)[0]) == 1
    # and within one stream, across batches large enough not to be merged
    log = TransientLog()
    big = SMALL_BATCH
    log.append(np.zeros(big, dtype=np.int64), np.arange(1, big + 1), np.full(big, 9), np.full(big, 6))
    log.append(ids(5), ids(1), ids(9), ids(6))
    assert len(log.chunks) == 2 and log.chunks[-1].triples.maybe_repeats
    window = WindowGraph([log.window(0, 10)])
    assert len(window.match(ids(1), ids(9), None, 1)[0]) == 1


def test_batches_without_repeats_say_so():
    log = TransientLog()
    log.append(ids(1, 1), ids(1, 2), ids(9, 9), ids(3, 3))
    log.append(ids(2), ids(4), ids(9), ids(3))
    assert not any(chunk.triples.maybe_repeats for chunk in log.chunks)
    log.append(ids(3), ids(4), ids(9), ids(3))
    assert log.chunks[-1].triples.maybe_repeats


def test_a_stored_graph_beside_the_window_is_merged_as_a_set():
    log = TransientLog()
    log.append(ids(1, 1, 1), ids(1, 2, 3), ids(9, 9, 8), ids(5, 5, 5))
    stored = MemoryGraph(ids(1, 7), ids(9, 9), ids(5, 5))  # (1 9 5) is in both
    window = WindowGraph([log.window(0, 10)], beside=stored)
    rows, s, _, _ = window.match(None, ids(9), ids(5), 1)
    assert sorted(s.tolist()) == [1, 2, 7]
    column = np.array([1, 2, 7, 3] * 20)  # a long probe: reduced to distinct rows first
    rows, s, p, o = window.match(column, np.full(len(column), 9), None, len(column))
    assert len(rows) == 60 and set(zip(s.tolist(), o.tolist())) == {(1, 5), (2, 5), (7, 5)}
    assert window.contains(ids(7, 3, 4), ids(9, 8, 8), ids(5, 5, 5)).tolist() == [True, True, False]


def test_tiny_batches_merge_into_few_chunks_and_keep_their_sequence_numbers():
    log = TransientLog()
    for i in range(1000):
        log.append(ids(i), ids(i + 1), ids(9), ids(5))
    assert len(log.chunks) <= 12
    assert log.total == 1000
    content = log.sequence_range(500, 503)
    assert content.s.tolist() == [501, 502, 503]
    assert log.time_range(10, 13).s.tolist() == [11, 12, 13]


@pytest.mark.parametrize("seed", range(12))
def test_generated_logs_and_windows_match_a_graph_of_the_window_rows(seed):
    """Batches of every size (merged in the log or not), repeated triples,
    windows anywhere: each window matches what a graph of its rows matches."""
    rng = np.random.default_rng(100 + seed)
    log, rows = TransientLog(), []
    for b in range(int(rng.integers(2, 12))):
        n = int(rng.choice([1, 3, 40, SMALL_BATCH // 3, SMALL_BATCH + 5]))
        ts = np.sort(rng.integers(b * 100, (b + 1) * 100, n))
        s, o = rng.integers(1, 9, n), rng.integers(1, 9, n)
        p = rng.integers(100, 103, n)
        log.append(ts, s, p, o)
        rows.append(np.stack([ts, s, p, o]))
    rows = np.concatenate(rows, axis=1)
    column = rng.integers(0, 10, 20)
    for _ in range(6):
        start, end = sorted(rng.integers(0, 1300, 2).tolist())
        window = WindowGraph([log.window(start, end)])
        expected = reference(rows, start, end)
        for _, probe in PROBES:
            args = probe(column)
            assert as_set(window.match(*args, len(column))) == as_set(expected.match(*args, len(column)))
