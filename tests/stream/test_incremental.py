"""Incremental window evaluation: every window reported from the change since
the previous one equals plain SPARQL over that window's content, for the
three report policies, with repeated triples, triples also stored in the
FROM graph, and an update of the FROM graph half way.

The reference is independent of the engine: the test keeps the items it
sent, loads each window's triples (and the FROM graph as it was) into a fresh
pyoxigraph store and runs the query's WHERE clause there.
"""

from collections import Counter

import numpy as np
import pytest

from engine.api import Store
from engine.rdf import IRI, MemoryTermDictionary, format_term
from engine.sparql.syntax import parse_registration
from engine.store import MemoryGraph
from engine.store.key_set import KeySet
from engine.stream import StreamDefinition, StreamEngine
from engine.stream.id_rows import WindowRows
from engine.stream.incremental import delta_shape
from engine.stream.report_policy import ReportPolicy

pyoxigraph = pytest.importorskip("pyoxigraph")

EX = "http://example.org/"
STORED = EX + "stored"
RANGE_MS, STEP_MS = 500, 100
SEED = 11
#: few vertices, so that triples repeat within a window and meet the stored ones
VERTICES = 9

#: name -> (language and report, SELECT clause, WHERE clause); {ex} is the example namespace
QUERIES = {
    "chain": ("C-SPARQL", "SELECT ?a ?c", "{ ?a <{ex}p> ?b . ?b <{ex}q> ?c . }"),
    "cycle": ("C-SPARQL", "SELECT ?a ?b ?c",
              "{ ?a <{ex}p> ?b . ?b <{ex}q> ?c . ?c <{ex}r> ?a . FILTER(?a != ?c) }"),
    "constant": ("C-SPARQL", "SELECT ?b", "{ <{ex}v1> <{ex}p> ?b . ?b <{ex}q> ?c . }"),
    "stored_cycle": ("ISTREAM", "SELECT ?a ?b ?c",
                     "{ WINDOW <{ex}w1> { ?a <{ex}p> ?b } ?b <{ex}q> ?c . "
                     "WINDOW <{ex}w2> { ?c <{ex}r> ?a FILTER(?a != ?c) } }"),
    "objects": ("DSTREAM", "SELECT ?b", "{ WINDOW <{ex}w1> { ?a <{ex}p> ?b } }"),
    "two_windows": ("ISTREAM", "SELECT ?a ?c",
                    "{ WINDOW <{ex}w1> { ?a <{ex}q> ?c } WINDOW <{ex}w2> { ?c <{ex}q> ?a } }"),
    "every_row": ("RSTREAM", "SELECT ?a ?b", "{ WINDOW <{ex}w2> { ?a <{ex}q> ?b } ?b <{ex}q> ?c }"),
}


def registration(name: str, kind: str, select: str, where: str) -> str:
    where = where.replace("{ex}", EX)
    if kind == "C-SPARQL":
        streams = " ".join(f"FROM STREAM <{EX}s{i}> [RANGE {RANGE_MS}ms STEP {STEP_MS}ms]" for i in (1, 2))
        return f"REGISTER QUERY {name} AS {select} {streams} FROM <{STORED}> WHERE {where}"
    spans = f"[RANGE PT{RANGE_MS / 1000}S STEP PT{STEP_MS / 1000}S]"
    windows = " ".join(f"FROM NAMED WINDOW <{EX}w{i}> ON <{EX}s{i}> {spans}" for i in (1, 2))
    return f"REGISTER {kind} {name} AS {select} FROM <{STORED}> {windows} WHERE {where}"


def vertex(i: int) -> IRI:
    return IRI(f"{EX}v{i}")


def random_items(rng, stream: str, until_ms: int) -> list:
    """Items every 10-40 ms, each with 1-3 triples over a small vocabulary."""
    predicates = {"s1": ["p", "q"], "s2": ["q", "r"]}[stream]
    items, ts = [], 0
    while ts < until_ms:
        ts += int(rng.integers(10, 40))
        triples = [(vertex(int(rng.integers(VERTICES))), IRI(EX + str(rng.choice(predicates))),
                    vertex(int(rng.integers(VERTICES)))) for _ in range(int(rng.integers(1, 4)))]
        items.append((ts, triples))
    return items


def quad(triple, graph=None):
    return pyoxigraph.Quad(*(pyoxigraph.NamedNode(t.value) for t in triple),
                           pyoxigraph.NamedNode(graph) if graph else pyoxigraph.DefaultGraph())


def reference(kind: str, select: str, where: str, windows: dict[str, set], stored: list) -> Counter:
    """The window's answer by plain SPARQL: C-SPARQL merges the windows and the
    FROM graph into the default graph; RSP-QL reads each window as a named graph."""
    oxi = pyoxigraph.Store()
    if kind == "C-SPARQL":
        oxi.extend(quad(t) for t in set().union(*windows.values()) | set(stored))
    else:
        oxi.extend(quad(t) for t in stored)
        for i, content in enumerate(windows.values(), start=1):
            oxi.extend(quad(t, f"{EX}w{i}") for t in content)
    text = f"{select} WHERE {where.replace('{ex}', EX).replace('WINDOW <', 'GRAPH <')}"
    solutions = oxi.query(text)
    return Counter(tuple(str(s[v]) for v in solutions.variables) for s in solutions)


@pytest.mark.parametrize("mode", ["always", "auto"])
def test_incremental_windows_equal_plain_sparql(mode):
    rng = np.random.default_rng(SEED)
    stored = [(vertex(i), IRI(EX + "q"), vertex((i * 4) % VERTICES)) for i in range(0, VERTICES, 2)]
    store = Store()
    store.add(stored, graph=STORED)
    engine = StreamEngine(store, incremental=mode)
    for name in ("s1", "s2"):
        engine.declare_stream(StreamDefinition(name, IRI(EX + name)))
    queues = {name: engine.register(registration(name, *spec)).subscribe() for name, spec in QUERIES.items()}
    items = {name: random_items(rng, name, 3_000) for name in ("s1", "s2")}
    events: dict[str, list] = {name: [] for name in QUERIES}
    stored_at: dict[int, list] = {}  # window close -> the stored graph it was evaluated over
    update_after_ms, added = 1_500, (vertex(1), IRI(EX + "q"), vertex(7))
    for end in range(STEP_MS, 3_000 + STEP_MS, STEP_MS):
        if end == update_after_ms:
            store.add([added], graph=STORED)
            stored = [*stored, added]
        for name in ("s1", "s2"):
            batch = [item for item in items[name] if end - STEP_MS <= item[0] < end]
            engine.ingest(name, [*batch, (end, [])])
        for name, queue in queues.items():
            for event in queue.drain():
                events[name].append(event)
                stored_at[event.end_ms] = stored
    for name, (kind, select, where) in QUERIES.items():
        previous: Counter = Counter()
        assert len(events[name]) >= 25
        for event in events[name]:
            close = event.end_ms
            windows = {s: {t for ts, triples in items[s] if close - RANGE_MS <= ts < close for t in triples}
                       for s in ("s1", "s2")}
            current = reference(kind, select, where, windows, stored_at[close])
            report = "RSTREAM" if kind == "C-SPARQL" else kind
            expected = {"RSTREAM": current, "ISTREAM": current - previous,
                        "DSTREAM": previous - current}[report]
            answer = Counter(tuple(format_term(t) for t in row) for row in event.rows)
            assert answer == expected, f"{name} window {close}"
            previous = current
        assert sum(1 for e in events[name] if e.rows) >= 5, f"{name}: too few windows report rows"
        evaluation = engine.query(name).to_json()["evaluation"]
        assert evaluation["incremental"]
        if mode == "always":
            # every window but the first, and the one after the stored graph changed
            assert evaluation["full_windows"] <= 3, evaluation
            assert evaluation["delta_windows"] >= len(events[name]) - 3, evaluation


def test_never_means_every_window_in_full():
    engine = StreamEngine(Store(), incremental="never")
    engine.declare_stream(StreamDefinition("s1", IRI(EX + "s1")))
    engine.declare_stream(StreamDefinition("s2", IRI(EX + "s2")))
    running = engine.register(registration("chain", *QUERIES["chain"]))
    assert running.to_json()["evaluation"] == {"incremental": False}
    with pytest.raises(ValueError, match="incremental"):
        StreamEngine(Store(), incremental="sometimes")


WINDOW = f"FROM STREAM <{EX}s1> [RANGE 1s STEP 100ms]"
SHAPES = [
    (f"REGISTER QUERY q AS SELECT ?a {WINDOW} WHERE {{ ?a <{EX}p> ?b . ?b <{EX}q> ?c }}", True),
    (f"REGISTER QUERY q AS SELECT ?a {WINDOW} WHERE {{ ?a <{EX}p> ?b FILTER(STR(?b) != \"x\") }}", True),
    (f"REGISTER QUERY q AS SELECT DISTINCT ?a {WINDOW} WHERE {{ ?a <{EX}p> ?b }}", False),
    (f"REGISTER QUERY q AS SELECT ?a {WINDOW} WHERE {{ ?a <{EX}p> ?b OPTIONAL {{ ?b <{EX}q> ?c }} }}", False),
    (f"REGISTER QUERY q AS SELECT (COUNT(*) AS ?n) {WINDOW} WHERE {{ ?a <{EX}p> ?b }}", False),
    (f"REGISTER QUERY q AS SELECT ?a {WINDOW} WHERE {{ ?a <{EX}p> ?b FILTER(?b < NOW()) }}", False),
    (f"REGISTER QUERY q AS SELECT ?a {WINDOW} WHERE {{ ?a <{EX}p> ?b FILTER EXISTS {{ ?b ?x ?y }} }}", False),
    (f"REGISTER QUERY q AS SELECT ?a FROM STREAM <{EX}s1> [RANGE 1s STEP 1s] "
     f"WHERE {{ ?a <{EX}p> ?b }}", False),
    (f"REGISTER QUERY q AS SELECT ?a FROM STREAM <{EX}s1> [TRIPLES 10] WHERE {{ ?a <{EX}p> ?b }}", False),
    (f"REGISTER QUERY q AS CONSTRUCT {{ ?a <{EX}p> ?b }} {WINDOW} WHERE {{ ?a <{EX}p> ?b }}", False),
    (f"REGISTER RSTREAM q AS SELECT ?a FROM NAMED WINDOW <{EX}w> ON <{EX}s1> [RANGE PT1S STEP PT0.1S] "
     f"WHERE {{ WINDOW <{EX}w> {{ ?a <{EX}p> ?b }} ?b <{EX}q> ?c }}", True),
    (f"REGISTER ISTREAM q AS SELECT ?a FROM NAMED WINDOW <{EX}w> ON <{EX}s1> [RANGE PT1S STEP PT0.1S] "
     f"WHERE {{ ?a <{EX}p> ?b }}", False),  # reads no window: nothing to evaluate incrementally
    (f"REGISTER ISTREAM q AS SELECT ?a FROM NAMED WINDOW <{EX}w> ON <{EX}s1> [RANGE PT1S STEP PT0.1S] "
     # ?c is not bound in the group of the FILTER
     f"WHERE {{ WINDOW <{EX}w> {{ ?a <{EX}p> ?b FILTER(?c = 1) }} ?b <{EX}q> ?c }}", False),
    (f"REGISTER ISTREAM q AS SELECT ?a FROM NAMED WINDOW <{EX}w> ON <{EX}s1> [RANGE PT1S STEP PT0.1S] "
     f"WHERE {{ WINDOW <{EX}w> {{ ?a <{EX}p> ?b }} GRAPH ?g {{ ?b <{EX}q> ?c }} }}", False),
]


@pytest.mark.parametrize("text,eligible", SHAPES, ids=[str(i) for i in range(len(SHAPES))])
def test_which_shapes_are_evaluated_incrementally(text, eligible):
    assert (delta_shape(parse_registration(text)) is not None) is eligible


def test_report_policy_from_changes_equals_from_whole_windows():
    """Applying each window's change gives the reports that whole windows give."""
    rng = np.random.default_rng(SEED)
    dictionary = MemoryTermDictionary()
    ids = {x: dictionary.encode(IRI(f"{EX}v{x}")) for x in range(5)}

    def answer(rows: list[int]) -> WindowRows:
        return WindowRows(np.array([[ids[x]] for x in rows], dtype=np.int64).reshape(-1, 1), dictionary,
                          dictionary.decode_many)

    windows = [[int(x) for x in rng.integers(0, 5, int(rng.integers(0, 8)))] for _ in range(40)]
    for report in ("RSTREAM", "ISTREAM", "DSTREAM"):
        whole, changed = ReportPolicy(report, 1, keep_result=True), ReportPolicy(report, 1, keep_result=True)
        previous: Counter = Counter()
        for rows in windows:
            current = Counter(rows)
            added, removed = list((current - previous).elements()), list((previous - current).elements())
            assert (Counter(changed.apply_change(answer(added), answer(removed)).tuples())
                    == Counter(whole.apply(answer(rows)).tuples())), report
            previous = current


def test_key_set_answers_like_a_python_set():
    rng = np.random.default_rng(SEED)
    keys = np.unique(rng.integers(0, 1 << 40, 50_000))
    probes = np.concatenate([keys[::3], rng.integers(0, 1 << 40, 20_000), np.array([-1, -5])])
    expected = np.isin(probes, keys)
    assert np.array_equal(KeySet(keys).contains(probes), expected)
    assert not KeySet(np.zeros(0, dtype=np.int64)).contains(probes).any()


def test_long_fully_bound_probes_take_the_hash_set_and_agree():
    """A probe of 4096+ rows with subject, predicate and object bound is
    answered from the predicate's hash set, with the same matches."""
    rng = np.random.default_rng(SEED)
    n = 20_000
    graph = MemoryGraph(rng.integers(1, 3000, n), rng.integers(1, 4, n), rng.integers(1, 3000, n))
    s, o = rng.integers(1, 3000, 8192), rng.integers(1, 3000, 8192)
    s[:2000], o[:2000] = graph.s[graph.p == 2][:2000], graph.o[graph.p == 2][:2000]
    p = np.full(len(s), 2)
    rows, ms, mp, mo = graph.match(s, p, o, len(s))
    stored = set(zip(graph.s.tolist(), graph.p.tolist(), graph.o.tolist(), strict=True))
    expected = [i for i in range(len(s)) if (int(s[i]), 2, int(o[i])) in stored]
    assert rows.tolist() == expected and len(expected) >= 2000
    assert np.array_equal(ms, s[rows]) and np.array_equal(mo, o[rows]) and (mp == 2).all()
    assert 2 in graph.__dict__["_key_sets"]  # it took the hash set
