"""A clock cohort (engine/stream/clock_cohorts.py) answers for its members
what each member's own clock answers, combined: the oldest transient data
and the earliest stored delta any member needs, whether any member may be
due, and how many windows a watermark would close for all of them. Checked
on generated cohorts whose members stand at different indices (as after a
restart, or while the first windows of new queries are pending), some not
started, over time windows of one or several STEPs and count windows, with
a stream whose log and watermark vary."""

from __future__ import annotations

import random

import pytest

from engine.api import Store
from engine.rdf import IRI
from engine.stream import StreamDefinition, StreamEngine
from engine.stream.errors import TooManyWindows

EX = "http://example.org/"
STREAM = IRI(EX + "s")
WINDOWS = [
    f"FROM STREAM <{STREAM.value}> [RANGE 1s STEP 100ms]",
    f"FROM STREAM <{STREAM.value}> [RANGE 3s STEP 1s]",
    f"FROM NAMED WINDOW <{EX}w1> ON <{STREAM.value}> [RANGE PT2S STEP PT0.5S] "
    f"FROM NAMED WINDOW <{EX}w2> ON <{STREAM.value}> [RANGE PT0.7S STEP PT0.3S]",
    f"FROM STREAM <{STREAM.value}> [TRIPLES 5]",
]


def _query(name: str, windows: str) -> str:
    if "NAMED WINDOW" in windows:
        return f"REGISTER RSTREAM {name} AS SELECT * {windows} WHERE {{ WINDOW <{EX}w1> {{ ?s ?p ?o }} }}"
    return f"REGISTER QUERY {name} AS SELECT * {windows} WHERE {{ ?s ?p ?o }}"


@pytest.mark.parametrize("seed", range(30))
def test_a_cohort_answers_what_its_members_answer_together(seed: int) -> None:
    rng = random.Random(seed)
    engine = StreamEngine(Store())
    engine.declare_stream(StreamDefinition("s", STREAM))
    state = engine.stream("s")
    windows = rng.choice(WINDOWS)
    for k in range(rng.randint(1, 6)):
        engine.register(_query(f"q{k}", windows))
    now = rng.randint(0, 5) * 1000
    for _ in range(rng.randint(0, 4)):
        now += rng.randint(1, 900)
        engine.ingest("s", [(now, [(IRI(EX + "a"), IRI(EX + "p"), IRI(EX + f"o{rng.randint(0, 9)}"))])])
    schedules = [running.schedule for running in engine.queries.values()]
    for schedule in schedules:  # members at different places, some not started
        if schedule.next_index is not None and rng.random() < 0.7:
            schedule.next_index = max(1, schedule.next_index + rng.randint(-30, 3))
        elif schedule.count is None and rng.random() < 0.2:
            schedule.next_index = None
    (cohort,) = list(engine._clocks)
    running = [s for s in schedules if s.next_index is not None]

    assert cohort.may_be_due() == any(s.due() is not None for s in schedules)
    oldest = [s.oldest_needed() for s in running]
    expected_ts = min((ts for ts, _ in oldest if ts is not None), default=None)
    expected_seq = min((seq for _, seq in oldest if seq is not None), default=None)
    assert cohort.oldest_needed() == (expected_ts, expected_seq)
    bounds = [b for s in schedules if (b := s.store_bound(state)) is not None]
    assert cohort.store_bound(state) == (min(bounds) if bounds else None)
    watermark = now + rng.randint(0, 5000)
    assert cohort.windows_until(watermark) == sum(s.windows_until(watermark) for s in schedules)


def test_a_heartbeat_closing_too_many_windows_names_only_the_queries_it_would_close() -> None:
    engine = StreamEngine(Store())
    engine.declare_stream(StreamDefinition("s", STREAM))
    engine.declare_stream(StreamDefinition("t", IRI(EX + "t")))
    for k in range(5):
        engine.register(_query(f"q{k}", WINDOWS[0]))
    engine.register(f"REGISTER QUERY other AS SELECT * FROM STREAM <{EX}t> [RANGE 1s STEP 100ms] "
                    "WHERE { ?s ?p ?o }")
    engine.register(_query("counted", WINDOWS[3]))  # closes by triples: no window of time
    engine.ingest("s", [(50, [(IRI(EX + "a"), IRI(EX + "p"), IRI(EX + "b"))])])
    with pytest.raises(TooManyWindows) as refused:
        engine.heartbeat("s", 10**9)
    message = str(refused.value)
    assert f"{5 * (10**9 // 100):,} windows" in message
    assert "and 2 more queries" in message and "other" not in message and "counted" not in message
    assert engine.stream("s").watermark == 50
