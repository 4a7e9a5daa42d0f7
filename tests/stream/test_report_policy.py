"""Report policies on ID columns: exact multiset differences with repeated
rows, with term IDs freed and reused between windows, with values the query
computes (no dictionary ID), and across a checkpoint's round trip."""

import random
from collections import Counter

import numpy as np
import pytest

from engine.api import Store
from engine.rdf import IRI, Literal, MemoryTermDictionary
from engine.sparql.exec import QueryTerms
from engine.stream import StreamDefinition, StreamEngine
from engine.stream.id_rows import WindowRows
from engine.stream.report_policy import ReportPolicy
from engine.stream.reported_rows import ReportedRows

EX = "http://example.org/"


def answer(dictionary: MemoryTermDictionary, terms: list) -> WindowRows:
    """A one-column answer naming ``terms`` (encoded transient, as stream terms are)."""
    ids = np.array([[dictionary.encode_transient(t)] for t in terms], dtype=np.int64).reshape(-1, 1)
    return WindowRows(ids, dictionary, dictionary.decode_many)


def reported(rows: ReportedRows) -> Counter:
    return Counter(row[0].value for row in rows.tuples())


@pytest.mark.parametrize("by_change", [False, True])
def test_repeated_rows_are_a_multiset_difference(by_change):
    dictionary = MemoryTermDictionary()
    a, b, c = (IRI(EX + x) for x in "abc")
    before, after = [a, a, b], [a, b, b, c]
    expected = {"RSTREAM": Counter({EX + "a": 1, EX + "b": 2, EX + "c": 1}),
                "ISTREAM": Counter({EX + "b": 1, EX + "c": 1}), "DSTREAM": Counter({EX + "a": 1})}
    for report, wanted in expected.items():
        policy = ReportPolicy(report, 1, keep_result=by_change)
        policy.apply(answer(dictionary, before))
        if by_change:
            got = policy.apply_change(answer(dictionary, [b, c]), answer(dictionary, [a]))
        else:
            got = policy.apply(answer(dictionary, after))
        assert reported(got) == wanted, report
        if policy.keep_result:
            assert policy.previous_rows() == Counter({(a,): 1, (b,): 2, (c,): 1}), report


@pytest.mark.parametrize("by_change", [False, True])
def test_an_id_freed_and_reused_is_not_the_same_row(by_change):
    """The ID of a window-only term that leaves the log stays its term's while
    the previous result names it: a new term does not get it, so it is new."""
    dictionary = MemoryTermDictionary()
    old, new = IRI(EX + "old"), IRI(EX + "new")
    istream = ReportPolicy("ISTREAM", 1, keep_result=by_change)
    dstream = ReportPolicy("DSTREAM", 1, keep_result=by_change)
    first = answer(dictionary, [old])
    dictionary.hold(first.ids.ravel())  # the log's chunk holding the term
    assert reported(istream.apply(first)) == Counter({EX + "old": 1})
    dstream.apply(first)
    dictionary.release(first.ids.ravel())  # the chunk leaves the log
    assert dictionary.lookup(old) == first.ids[0, 0]  # held by the policies: not freed
    second = answer(dictionary, [new])
    assert second.ids[0, 0] != first.ids[0, 0]
    if by_change:
        gone = WindowRows(first.ids, dictionary, dictionary.decode_many)
        assert reported(istream.apply_change(second, gone)) == Counter({EX + "new": 1})
        assert reported(dstream.apply_change(second, gone)) == Counter({EX + "old": 1})
    else:
        assert reported(istream.apply(second)) == Counter({EX + "new": 1})
        assert reported(dstream.apply(second)) == Counter({EX + "old": 1})
    assert not dictionary.lookup(old)  # no kept row names it any more: freed
    istream.forget()
    dstream.forget()
    assert not dictionary.lookup(new)


def computed(dictionary: MemoryTermDictionary, values: list[str]) -> WindowRows:
    """An answer of values the query computed: negative IDs local to this window's terms."""
    terms = QueryTerms(dictionary, transient=True)
    terms.encode(Literal("padding"))  # the same value gets another local ID in each window
    ids = np.array([[terms.encode(Literal(v))] for v in values], dtype=np.int64).reshape(-1, 1)
    return WindowRows(ids, dictionary, terms.decode_column)


def test_computed_values_compare_as_terms():
    dictionary = MemoryTermDictionary()
    policy = ReportPolicy("ISTREAM", 1)
    assert len(policy.apply(computed(dictionary, ["1", "1"]))) == 2
    assert [r[0].lexical for r in policy.apply(computed(dictionary, ["2", "1", "1"])).tuples()] == ["2"]
    dictionary.encode(Literal("1"))  # the value is now in the store: it has an ID
    assert policy.apply(computed(dictionary, ["2", "1", "1"])).tuples() == []
    dstream = ReportPolicy("DSTREAM", 1)
    dstream.apply(computed(dictionary, ["3", "1"]))
    assert [r[0].lexical for r in dstream.apply(computed(dictionary, ["1"])).tuples()] == ["3"]


def test_previous_rows_round_trip_a_checkpoint():
    dictionary = MemoryTermDictionary()
    windows = [["a", "b", "b"], ["b", "c"], ["c", "c", "d"]]

    def window(values: list[str]) -> WindowRows:
        return answer(dictionary, [IRI(EX + v) for v in values])

    for report in ("ISTREAM", "DSTREAM", "RSTREAM"):
        running = ReportPolicy(report, 1, keep_result=True)
        for values in windows[:2]:
            running.apply(window(values))
        restarted = ReportPolicy(report, 1, keep_result=True)
        restarted.restore(running.previous_rows())
        assert restarted.previous_rows() == running.previous_rows()
        assert reported(restarted.apply(window(windows[2]))) == reported(running.apply(window(windows[2])))


# ------------------------------------------------------------------ engine
STEPS = 40


def stream_items(seed: int) -> list[list[tuple[int, list]]]:
    """Per 100 ms step, a few observations, each a new IRI (its terms leave
    with its batch), whose values are shared within blocks of three steps
    (rows repeat in a window and across windows, then leave for good)."""
    rng = random.Random(seed)
    out = []
    for step in range(STEPS):
        batch = []
        for j in range(rng.randint(0, 4)):
            value = Literal(f"v{rng.randint(0, 2)}-{step // 3}")
            batch.append((step * 100 + 10 * j, [(IRI(f"{EX}obs{step}-{j}"), IRI(EX + "p"), value)]))
        out.append(batch)
    return out


def expected_answer(items: list[list[tuple[int, list]]], start: int, end: int, form: str) -> Counter:
    triples = {t for batch in items for ts, ts_triples in batch for t in ts_triples if start <= ts < end}
    if form == "CONSTRUCT":
        return Counter({(o, IRI(EX + "seen"), IRI(EX + "x")) for o, _, _ in triples})
    return Counter((v,) for _, _, v in triples)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("span", ["[RANGE PT0.2S STEP PT0.1S]", "[RANGE PT0.1S STEP PT0.1S]"])
@pytest.mark.parametrize("form", ["SELECT", "CONSTRUCT"])
def test_windows_of_window_only_terms_report_exact_differences(seed, span, form):
    """ISTREAM and DSTREAM over windows whose terms are freed as they leave
    (their IDs reused by later terms) report what decoded multisets give."""
    store = Store()
    engine = StreamEngine(store)
    # timing data: kept only while a window needs it, its terms freed then
    engine.declare_stream(StreamDefinition("s", IRI(EX + "s"), timing=frozenset({EX + "p"})))
    head = "SELECT ?v" if form == "SELECT" else f"CONSTRUCT {{ ?o <{EX}seen> <{EX}x> }}"
    body = (f"{head} FROM NAMED WINDOW <{EX}w> ON <{EX}s> {span} "
            f"WHERE {{ WINDOW <{EX}w> {{ ?o <{EX}p> ?v }} }}")
    subscriptions = {report: engine.register(f"REGISTER {report} q{report} AS {body}").subscribe()
                     for report in ("ISTREAM", "DSTREAM", "RSTREAM")}
    items = stream_items(seed)
    ids_of: dict = {}
    for step, batch in enumerate(items):
        if batch:
            engine.ingest("s", batch)
            for _, triples in batch:
                for term in (triples[0][0], triples[0][2]):
                    ids_of.setdefault(store.quad_store.terms.lookup(term), set()).add(term)
        engine.heartbeat("s", (step + 1) * 100)
    assert any(len(terms) > 1 for terms in ids_of.values())  # IDs were freed and reused
    for report, subscription in subscriptions.items():
        events = subscription.drain()
        assert len(events) > 10
        previous: Counter = Counter()
        for event in events:
            current = expected_answer(items, event.start_ms, event.end_ms, form)
            wanted = {"RSTREAM": current, "ISTREAM": current - previous,
                      "DSTREAM": previous - current}[report]
            got = Counter(event.triples if form == "CONSTRUCT" else event.rows)
            assert got == wanted, (report, event.sequence)
            previous = current
