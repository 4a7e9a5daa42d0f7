"""A checkpoint and a restart in the middle of streams absorbing into one
graph give the same windows: the stored rows that pending windows read as
of their close keep their timestamps through the checkpoint
(``stream_layers.npz``), so the windows evaluated after the restart (and
those the recovery evaluates again from the log) equal the oracle's.

The scenarios are those of ``tests/stream/as_of_scenarios.py``: two or
three streams with independent clocks, repeated triples across streams,
large and small posts, deletes and inserts between posts; the restart
follows a clean close or a kill (``crash``: nothing closed or flushed).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.durability import DataDirectory
from engine.durability.checkpoint_layers import LAYERS_FILE, restore_layers, save_layers
from engine.rdf import IRI
from engine.store import LayeredGraph, QuadStore
from tests.durability.test_recovery import crash
from tests.stream.as_of_scenarios import G, generate, run_checked, terms

pytest.importorskip("pyoxigraph")


def rows_kept_apart(data: DataDirectory) -> int:
    """Rows of G that a checkpoint now would keep apart from the base."""
    quad_store = data.store.quad_store
    graph = quad_store.snapshot().graph(quad_store.terms.lookup(IRI(G)))
    if not isinstance(graph, LayeredGraph):
        return 0
    return sum(len(d.ts) for d in graph.split(quad_store.retained_timestamps())[1].deltas)


@pytest.mark.parametrize("seed", range(4))
def test_a_checkpoint_and_a_restart_give_the_same_windows(tmp_path, seed):
    rng = random.Random(seed)
    scenario = generate(300 + seed, large=1 if seed < 2 else 0)
    data = DataDirectory.open(tmp_path / "data", checkpoint_mb=1000)
    data.store.add(terms(scenario.loaded), graph=G)
    for definition in scenario.definitions():
        data.engine.declare_stream(definition)
    for text in scenario.queries().values():
        data.engine.register(text)
    current = [data]
    # restart right after the checkpoint (nothing replayed), or a few requests later (the log replayed)
    later = rng.choice([0, 3])
    clean = seed % 2 == 1  # a clean close, or a kill (nothing closed or flushed)
    checkpointed: list[int] = []

    def after_step(index: int) -> bool:
        data = current[0]
        if not checkpointed and index >= len(scenario.steps) // 4 and rows_kept_apart(data):
            assert data.take_checkpoint().taken
            checkpointed.append(index)
            assert (data.mapped or data.path).exists()
        if not checkpointed or index != checkpointed[0] + later:
            return False
        if clean:
            data.close()
        else:
            crash(data)
        current[0] = DataDirectory.open(tmp_path / "data", checkpoint_mb=1000)
        return True

    run_checked(scenario, lambda: current[0].engine, lambda: current[0].store, after_step)
    assert checkpointed, "no checkpoint had rows to keep apart: the scenario tests nothing"
    layers = list((tmp_path / "data" / "checkpoints").glob(f"*/{LAYERS_FILE}"))
    assert layers
    current[0].close()


def test_kept_rows_of_a_stream_no_longer_declared_come_back_as_stored_data(tmp_path):
    """``stream_layers.npz`` names streams, not numbers (given anew at each start):
    rows and copies of a stream the restarted engine does not declare are
    stored data, visible to every window; the others keep their timestamps."""
    store = QuadStore()
    a, b = 0, 1
    txn = store.begin(journaled=False)
    txn.append(7, *columns([(1, 1), (2, 2)]), np.array([1000, 5000]), a)
    txn.append(7, *columns([(3, 3), (2, 2)]), np.array([6000, 1500]), b)  # B's copy of (2, 2) at 1500
    txn.commit()
    folded, kept = store.snapshot().graph(7).split({a: 2000, b: 2000})
    assert sum(len(d.ts) for d in folded) == 1 and len(kept.copies) == 1
    save_layers(tmp_path, {7: kept}, {a: "A", b: "B"})

    def restored(numbers: dict[str, int]) -> LayeredGraph:
        again = QuadStore()
        assert restore_layers(tmp_path, again, numbers) == 3
        return again.snapshot().graph(7)

    both = restored({"A": 5, "B": 6})  # numbers of another start
    assert triples(both.as_of({5: 2000, 6: 2000})) == {(2, 2)}  # A's (2, 2) from 5000, B's copy from 1500
    assert triples(both.as_of({5: 2000})) == {(2, 2), (3, 3)}
    only_a = restored({"A": 5})
    assert triples(only_a.as_of({5: 2000})) == {(2, 2), (3, 3)}
    assert triples(only_a.as_of({5: 1000})) == {(2, 2), (3, 3)}  # B's copy made (2, 2) stored data


def columns(pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s = np.array([x for x, _ in pairs], dtype=np.int64)
    return s, np.full(len(pairs), 9, dtype=np.int64), np.array([y for _, y in pairs], dtype=np.int64)


def triples(graph) -> set[tuple[int, int]]:
    _, s, _, o = graph.match(None, None, None, 1)
    return set(zip(s.tolist(), o.tolist(), strict=True))
