"""Every window is evaluated within the engine's bounds (time, rows per step).

A window over them is reported by an error event with its own sequence
number, the query goes on with its next window, and the windows around it
are exactly what an unbounded evaluation gives: generated streams put
poison batches (a cartesian product over the row budget, a backtracking
REGEX over the time limit) at random windows, for each report policy and
each way of evaluating (in full, incrementally, shared by a group). A
heartbeat far ahead is refused for the windows of all queries together,
and the server's shutdown stops a window without failing it.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

import pytest

from engine.api import QueryCancelled, Store
from engine.durability import DataDirectory
from engine.rdf import IRI, Literal
from engine.stream import StreamDefinition, StreamEngine
from engine.stream.errors import TooManyWindows

EX = "http://example.org/"
STREAM = IRI(EX + "s")
P = IRI(EX + "p")
STEP_MS = 1000
#: rows one step may produce in these tests; a good window's product is at most 18 x 18
MAX_ROWS = 400
#: triples of a poison batch: its product (and any step of an incremental
#: evaluation over it, 40 x the window) is over MAX_ROWS
POISON_TRIPLES = 40
#: a literal REGEX("^(a|aa)+$") backtracks over for longer than any test waits
POISON_TEXT = "a" * 120 + "!"


def product_query(policy: str, name: str = "q", range_s: int = 3) -> str:
    """Every pair of objects of <p> in the window: a cartesian product."""
    return (f"REGISTER {policy} <{EX}{name}> AS SELECT ?x ?y "
            f"FROM NAMED WINDOW <{EX}w> ON <{STREAM.value}> [RANGE PT{range_s}S STEP PT1S] "
            f"WHERE {{ WINDOW <{EX}w> {{ ?a <{P.value}> ?x . ?b <{P.value}> ?y }} }}")


def regex_query(policy: str) -> str:
    return (f"REGISTER {policy} <{EX}q> AS SELECT ?o "
            f"FROM NAMED WINDOW <{EX}w> ON <{STREAM.value}> [RANGE PT2S STEP PT1S] "
            f'WHERE {{ WINDOW <{EX}w> {{ ?s <{P.value}> ?o FILTER(REGEX(STR(?o), "^(a|aa)+$")) }} }}')


def new_engine(**bounds) -> StreamEngine:
    engine = StreamEngine(Store(), **bounds)
    engine.declare_stream(StreamDefinition("s", STREAM))
    return engine


def value(term) -> str:
    return term.value if isinstance(term, IRI) else term.lexical


def batches(seed: int, windows: int, poison: dict[int, list]) -> list[tuple[int, list]]:
    """One to three items a window (0-2 triples each, some of them repeated),
    and the poison items of the windows in ``poison`` (window index -> its
    triples); then a heartbeat that closes the last window."""
    rng = random.Random(seed)
    items = []
    for k in range(windows):
        stamps = sorted(rng.sample(range(k * STEP_MS, (k + 1) * STEP_MS), rng.randint(1, 3)))
        for ts in stamps:
            count = rng.randint(0 if items else 1, 2)  # the first item starts the clock: not empty
            items.append((ts, [(IRI(f"{EX}s{rng.randint(0, 4)}"), P, Literal(str(rng.randint(0, 5))))
                               for _ in range(count)]))
        if k in poison:
            items.append(((k + 1) * STEP_MS - 1, poison[k]))
    items.append((windows * STEP_MS, []))
    return items


def replay(engine: StreamEngine, text: str, items: list) -> list:
    """The events of query ``text`` over ``items``, sent a few items per request."""
    subscription = engine.register(text).subscribe()
    for start in range(0, len(items), 3):
        engine.ingest("s", items[start:start + 3])
    return subscription.drain()


def answers(events) -> list[Counter]:
    return [Counter(tuple(value(t) for t in row) for row in event.rows) for event in events]


def check_around_failures(events, reference: list[Counter], poisoned: set[int], policy: str,
                          reason: str) -> None:
    """Window k fails iff it holds a poison batch; every other window reports
    what the unbounded ``reference`` (RSTREAM) gives, ISTREAM and DSTREAM
    against the last window that was evaluated (so a client adding up the
    changes keeps the right total)."""
    assert [e.sequence for e in events] == list(range(1, len(reference) + 1))
    last_good: Counter = Counter()
    for k, event in enumerate(events):
        if k in poisoned:
            assert event.error is not None and event.error.reason == reason, (k, event.error)
            assert event.rows == []
            continue
        assert event.error is None, (k, event.error)
        got = Counter(tuple(value(t) for t in row) for row in event.rows)
        expected = {"RSTREAM": reference[k], "ISTREAM": reference[k] - last_good,
                    "DSTREAM": last_good - reference[k]}[policy]
        assert got == expected, (k, policy)
        last_good = reference[k]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("policy", ["RSTREAM", "ISTREAM", "DSTREAM"])
@pytest.mark.parametrize("incremental", ["auto", "always", "never"])
def test_windows_over_the_row_budget_fail_and_the_others_are_exact(seed, policy, incremental):
    windows = 20
    rng = random.Random(1000 + seed)
    poison_at = {k for k in range(windows) if rng.random() < 0.15} | {rng.randrange(windows)}
    poison = {k: [(IRI(f"{EX}big{k}"), P, Literal(f"v{k}.{i}")) for i in range(POISON_TRIPLES)]
              for k in poison_at}
    items = batches(seed, windows, poison)
    reference = answers(replay(new_engine(incremental="never"), product_query("RSTREAM"), items))
    assert len(reference) == windows
    events = replay(new_engine(incremental=incremental, max_rows=MAX_ROWS), product_query(policy), items)
    # a poison batch is in the three windows (RANGE 3 STEP 1) that end after it
    poisoned = {k + d for k in poison_at for d in range(3) if k + d < windows}
    check_around_failures(events, reference, poisoned, policy, "row_limit")
    assert all("would hold" in e.error.message for e in events if e.error is not None)


@pytest.mark.parametrize(("policy", "incremental"), [("RSTREAM", "never"), ("ISTREAM", "always"),
                                                     ("DSTREAM", "auto")])
def test_a_backtracking_regex_fails_its_windows_at_the_time_limit(policy, incremental):
    windows = 10
    rng = random.Random(7)
    poison_at = set(rng.sample(range(windows - 1), 2))
    harmless = {k: [(IRI(f"{EX}p{k}"), P, Literal("b"))] for k in poison_at}  # matches nothing, at once
    poison = {k: [(IRI(f"{EX}p{k}"), P, Literal(POISON_TEXT))] for k in poison_at}
    reference = answers(replay(new_engine(incremental="never"), regex_query("RSTREAM"),
                               batches(3, windows, harmless)))
    engine = new_engine(incremental=incremental, timeout=0.2)
    started = time.monotonic()
    events = replay(engine, regex_query(policy), batches(3, windows, poison))
    poisoned = {k + d for k in poison_at for d in range(2) if k + d < windows}  # RANGE 2 STEP 1
    check_around_failures(events, reference, poisoned, policy, "time_limit")
    assert time.monotonic() - started < 60  # each failed window took about 0.2 s, not for ever
    running = engine.query(EX + "q").to_json()
    assert running["windows_failed"] == len(poisoned) and running["windows_reported"] == windows
    assert running["last_error"]["reason"] == "time_limit"
    assert running["last_error"]["sequence"] == max(poisoned) + 1


def test_one_query_of_a_shared_group_fails_alone(caplog):
    """Queries that share their evaluation: the group's evaluation is over
    the budget because of one query's constant; it falls back to one by one,
    so only that query's window fails."""

    def text(k: int) -> str:
        return (f"REGISTER QUERY g{k} AS SELECT ?x ?y FROM STREAM <{STREAM.value}> [RANGE 1s STEP 1s] "
                f"WHERE {{ <{EX}c{k}> <{P.value}> ?x . <{EX}c{k}> <{P.value}> ?y }}")

    rng = random.Random(5)
    items = []
    for k in range(12):
        for c in range(3):
            items.append((k * STEP_MS + 10 * c, [(IRI(f"{EX}c{c}"), P, Literal(str(rng.randint(0, 9))))
                                                 for _ in range(rng.randint(0, 3))]))
    poisoned = {4, 9}
    for k in poisoned:  # c0 gets 40 objects: its product alone is over the budget
        items.append((k * STEP_MS + 500, [(IRI(f"{EX}c0"), P, Literal(f"x{i}")) for i in range(40)]))
    items.sort(key=lambda item: item[0])
    items.append((12 * STEP_MS, []))

    def run(engine: StreamEngine) -> dict[int, list]:
        subscriptions = {c: engine.register(text(c)).subscribe() for c in range(3)}
        shape_ids = {engine.query(f"g{c}").shape_id for c in range(3)}
        assert len(shape_ids) == 1 and None not in shape_ids  # one group
        for start in range(0, len(items), 4):
            engine.ingest("s", items[start:start + 4])
        return {c: s.drain() for c, s in subscriptions.items()}

    reference = run(new_engine())
    with caplog.at_level("WARNING", logger="rivulet.streams"):
        bounded = run(new_engine(max_rows=MAX_ROWS))
    for c in (1, 2):
        assert answers(bounded[c]) == answers(reference[c]) and all(e.error is None for e in bounded[c])
    failed = {e.sequence - 1 for e in bounded[0] if e.error is not None}
    assert failed == poisoned
    good = [k for k in range(12) if k not in poisoned]
    assert [answers(bounded[0])[k] for k in good] == [answers(reference[0])[k] for k in good]
    assert any("each query is evaluated alone" in r.getMessage() for r in caplog.records)


def test_a_failed_window_of_a_register_stream_query_does_not_hold_up_its_readers():
    """REGISTER STREAM: the failed window constructs nothing, but the output
    stream's watermark moves past it, so the query reading it goes on."""
    engine = new_engine(max_rows=MAX_ROWS)
    engine.register(f"REGISTER STREAM <{EX}pairs> AS CONSTRUCT {{ ?a <{EX}with> ?y }} "
                    f"FROM STREAM <{STREAM.value}> [RANGE 1s STEP 1s] "
                    f"WHERE {{ ?a <{P.value}> ?x . ?b <{P.value}> ?y }}")
    reader = engine.register(f"REGISTER QUERY seen AS SELECT ?a ?y FROM STREAM <{EX}pairs> "
                             f"[RANGE 1s STEP 1s] WHERE {{ ?a <{EX}with> ?y }}").subscribe()
    poison = [(IRI(f"{EX}big"), P, Literal(f"v{i}")) for i in range(POISON_TRIPLES)]
    def seen() -> list:
        return [(e.end_ms, sorted(tuple(value(t) for t in row) for row in e.rows)) for e in reader.drain()]

    engine.ingest("s", [(100, [(IRI(EX + "a"), P, Literal("1"))]), (1500, poison), (2000, [])])
    upstream = engine.query(EX + "pairs")
    assert upstream.sequence == 2 and upstream.failures["row_limit"] == 1  # [0, 1000) and the poisoned one
    # each output item is at its window's close, in the reader's window that ends after it; the
    # failed window's close (2000) closes the reader's window at once
    assert seen() == [(2000, [(EX + "a", "1")])]
    engine.ingest("s", [(2500, [(IRI(EX + "a"), P, Literal("2"))]), (4000, [])])
    assert seen() == [(3000, []), (4000, [(EX + "a", "2")])]


def test_the_window_cap_is_for_all_queries_of_a_request_together(tmp_path):
    """Five queries of 1 ms windows and a heartbeat 100 s ahead: 100,000
    windows each, 500,000 in all, refused at once; nothing is ingested or logged."""
    data = DataDirectory.open(tmp_path / "data", sync=False, engine_options={"timeout": 5, "max_rows": 1000})
    try:
        engine = data.engine
        engine.declare_stream(StreamDefinition("s", STREAM))
        for k in range(5):
            engine.register(f"REGISTER QUERY m{k} AS SELECT ?o FROM STREAM <{STREAM.value}> "
                            f"[RANGE 1ms STEP 1ms] WHERE {{ ?s ?p ?o }}")
        engine.ingest("s", [(0, [(IRI(EX + "a"), P, Literal("1"))])])
        logged = data.log_bytes()
        with pytest.raises(TooManyWindows) as refused:
            engine.heartbeat("s", 100_000)
        assert "500,000 windows" in str(refused.value) and "100,000" in str(refused.value)
        assert refused.value.status == 422
        assert engine.stream("s").watermark == 0 and data.log_bytes() == logged
        assert all(engine.query(f"m{k}").sequence == 0 for k in range(5))
        summary = engine.heartbeat("s", 1000)  # 5 x 1000 windows: within the cap
        assert summary["windows_fired"] == 5000 and summary["windows_failed"] == 0
    finally:
        data.close()


def test_a_failed_window_is_retained_resumed_after_and_kept_by_a_checkpoint(tmp_path):
    """An error event is numbered and retained like any: a subscriber resumes
    before or after it, and a checkpoint keeps it for the next start."""
    data = DataDirectory.open(tmp_path / "data", sync=False, engine_options={"max_rows": MAX_ROWS})
    poisoned = {1, 3}
    items = batches(9, 5, {k: [(IRI(f"{EX}big{k}"), P, Literal(f"v{i}")) for i in range(POISON_TRIPLES)]
                           for k in poisoned})
    try:
        data.engine.declare_stream(StreamDefinition("s", STREAM))
        replay(data.engine, product_query("RSTREAM", range_s=1), items)
        kinds = [(e.sequence, e.error is not None) for e in data.engine.subscribe(EX + "q", 0).replay]
        assert kinds == [(1, False), (2, True), (3, False), (4, True), (5, False)]
        assert [e.sequence for e in data.engine.subscribe(EX + "q", 2).replay] == [3, 4, 5]
        data.checkpoint()
    finally:
        data.close()
    again = DataDirectory.open(tmp_path / "data", sync=False, engine_options={"max_rows": MAX_ROWS})
    try:
        replayed = again.engine.subscribe(EX + "q", 1).replay
        assert [(e.sequence, e.error.reason if e.error else None) for e in replayed] == [
            (2, "row_limit"), (3, None), (4, "row_limit"), (5, None)]
        assert again.engine.query(EX + "q").sequence == 5
    finally:
        again.close()


def test_the_shutdown_stops_a_window_without_failing_it():
    """Past the shutdown's grace a window being evaluated stops; the ingest
    returns (its batch is in), the window is neither reported nor lost."""
    engine = new_engine()  # no time limit: only the shutdown stops it
    subscription = engine.register(regex_query("RSTREAM")).subscribe()
    outcome: dict = {}

    def ingest() -> None:
        outcome["summary"] = engine.ingest("s", [(100, [(IRI(EX + "x"), P, Literal(POISON_TEXT))]),
                                                 (1000, [])])

    worker = threading.Thread(target=ingest, daemon=True)
    worker.start()
    time.sleep(0.3)
    engine.shutdown.begin(0.0)
    worker.join(30)
    assert not worker.is_alive()
    assert outcome["summary"]["windows_fired"] == 0 and outcome["summary"]["watermark_ms"] == 1000
    assert subscription.drain() == []
    running = engine.query(EX + "q")
    assert running.sequence == 0 and running.schedule.due() == 1000  # still due, not skipped


def test_an_update_over_its_time_limit_changes_nothing_and_frees_the_store():
    store = Store()
    store.update(f'INSERT DATA {{ <{EX}a> <{EX}p> "{POISON_TEXT}" }}')
    poison = (f'INSERT {{ <{EX}b> <{EX}matches> ?m }} WHERE {{ <{EX}a> <{EX}p> ?o '
              f'BIND(REGEX(?o, "^(a|aa)+$") AS ?m) }}')
    started = time.monotonic()
    with pytest.raises(QueryCancelled) as stopped:
        store.update(poison, time_limit=0.3)
    assert stopped.value.reason == "time_limit" and time.monotonic() - started < 30
    assert not store.query(f"ASK {{ <{EX}b> ?p ?o }}").boolean
    store.update(f"INSERT DATA {{ <{EX}c> <{EX}p> 1 }}")  # the write lock was released
    assert store.query(f"ASK {{ <{EX}c> ?p ?o }}").boolean
