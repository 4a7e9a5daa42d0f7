"""The quad store's commit compacts stream deltas only as far as the bounds
the stream layer handed down allow."""

import numpy as np

from engine.store import DEFAULT_GRAPH, LayeredGraph, QuadStore


def ids(*values):
    return np.array(values, dtype=np.int64)


def commit_twenty_stream_deltas(store: QuadStore) -> LayeredGraph:
    txn = store.begin()
    for ts in range(20):
        txn.append(DEFAULT_GRAPH, ids(ts + 1), ids(10), ids(ts + 1), ids(ts), stream=0)
    txn.commit()
    graph = store.snapshot().graph(DEFAULT_GRAPH)
    assert isinstance(graph, LayeredGraph)
    return graph


def test_without_bounds_every_delta_may_be_merged():
    graph = commit_twenty_stream_deltas(QuadStore())
    assert len(graph.deltas) == 1 and len(graph) == 20


def test_deltas_from_a_retained_timestamp_on_keep_their_timestamps():
    store = QuadStore()
    store.retain_timestamps({0: 5})
    graph = commit_twenty_stream_deltas(store)
    assert len(graph.deltas) == 1 + 15
    assert len(graph.as_of({0: 5})) == 5
    assert len(graph.as_of({0: 12})) == 12


def test_the_last_bounds_given_are_the_ones_used():
    store = QuadStore()
    store.retain_timestamps({0: 5})
    store.retain_timestamps({})
    assert store.retained_timestamps() == {}
    assert len(commit_twenty_stream_deltas(store).deltas) == 1
