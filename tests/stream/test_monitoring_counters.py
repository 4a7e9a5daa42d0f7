"""The counts the engine keeps for monitoring (read by the endpoint's /metrics):
late items, subscribers dropped, and each query's window statistics."""

import pytest

from engine.api import Store
from engine.rdf import IRI, Literal
from engine.stream import StreamDefinition, StreamEngine, WindowEvent
from engine.stream.broadcast import Broadcast
from engine.stream.errors import LateItem
from engine.stream.window_stats import SECONDS_BUCKETS, SecondsHistogram

EX = "http://example.org/"


@pytest.fixture
def engine():
    engine = StreamEngine(Store())
    engine.declare_stream(StreamDefinition("a", IRI(EX + "a")))
    yield engine
    engine.close()


def item(ts: int) -> tuple:
    return ts, [(IRI(EX + "x"), IRI(EX + "v"), Literal(str(ts)))]


def test_a_batch_refused_for_a_late_item_counts_all_its_items(engine):
    engine.ingest("a", [item(1000)])
    with pytest.raises(LateItem):
        engine.ingest("a", [item(1500), item(900), item(2000)])
    state = engine.stream("a")
    assert (state.items, state.late_items) == (1, 3)


def test_each_reported_window_is_counted_with_its_evaluation_and_delay(engine):
    running = engine.register(f"REGISTER QUERY q AS SELECT * FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                              "WHERE { ?s ?p ?o }")
    engine.ingest("a", [item(100), item(1200)])
    engine.heartbeat("a", 3000)
    assert running.sequence == 3
    stats = running.stats
    assert stats.windows == 3
    assert stats.evaluation.cumulative()[-1] == 3 and stats.delay.cumulative()[-1] == 3
    assert 0 < stats.evaluation.total_seconds < 30 and stats.delay.total_seconds >= 0


def test_a_dropped_subscriber_is_counted_once():
    broadcast = Broadcast(retain=10)
    stalled = broadcast.subscribe(capacity=1)
    broadcast.subscribe(capacity=100)
    for sequence in range(1, 5):
        broadcast.publish(WindowEvent("q", sequence, 0, 1000, "SELECT", []))
    assert stalled.dropped and len(broadcast) == 1
    assert broadcast.dropped == 1


def test_a_subscriber_cut_off_for_stalled_sends_is_counted_and_one_that_leaves_is_not():
    broadcast = Broadcast(retain=10)
    overflowed = broadcast.subscribe(capacity=1)
    stalled, leaving = broadcast.subscribe(), broadcast.subscribe()
    for sequence in range(1, 3):
        broadcast.publish(WindowEvent("q", sequence, 0, 1000, "SELECT", []))
    assert broadcast.dropped == 1
    broadcast.unsubscribe(overflowed, stalled=True)  # already counted when its queue overflowed
    broadcast.unsubscribe(stalled, stalled=True)
    broadcast.unsubscribe(leaving)
    broadcast.unsubscribe(stalled, stalled=True)  # a second call changes nothing
    assert (broadcast.dropped, len(broadcast)) == (2, 0)


def test_histogram_buckets_hold_durations_at_most_their_bound():
    histogram = SecondsHistogram()
    for seconds in (0.00005, 0.0001, 0.0002, 1.0, 31.0):
        histogram.observe(seconds)
    counts = dict(zip(SECONDS_BUCKETS, histogram.cumulative(), strict=False))
    assert counts[0.0001] == 2  # a duration equal to a bound is in its bucket
    assert counts[0.00025] == 3 and counts[1.0] == 4 and counts[30.0] == 4
    assert histogram.cumulative()[-1] == 5  # the last bucket: everything
    assert histogram.total_seconds == pytest.approx(32.00035)
