"""Copies of one query (equal but for their name) are evaluated once per window,
and each copy still gets exactly the events it would get registered alone:
its own sequence numbers, bounds and report policy, also when it is
registered late or its leader is unregistered mid-stream."""

import random
from collections import Counter

import pytest

from engine.api import Store
from engine.rdf import IRI
from engine.sparql.syntax import parse_registration
from engine.stream import StreamDefinition, StreamEngine
from engine.stream.duplicates import duplicate_key
from engine.stream.running_query import RunningQuery

EX = "http://example.org/"
STREAM = "s"
STORED = f"{EX}g"
PREFIX = f"PREFIX ex: <{EX}>\n"
CSPARQL = (PREFIX + "SELECT ?x ?y ?z FROM STREAM <http://example.org/s> [RANGE 1s STEP 200ms] "
           f"FROM <{STORED}> WHERE {{ ?x ex:knows ?y . ?y ex:likes ?z FILTER (?x != ?z) }}")
#: the same up to a constant: its copies also share a plan with other persons' queries
CONSTANT = (PREFIX + "SELECT ?y FROM STREAM <http://example.org/s> [RANGE 600ms STEP 200ms] "
            "WHERE { ex:p1 ex:knows ?y }")
RSPQL = (PREFIX + "SELECT ?x (COUNT(*) AS ?n) FROM NAMED WINDOW ex:w ON <http://example.org/s> "
         "[RANGE PT0.8S STEP PT0.4S] WHERE { WINDOW ex:w { ?x ex:knows ?y } } GROUP BY ?x")
#: registered in every run, so that the log holds the same items for a late
#: registration with or without copies (docs/semantics.md: a query sees what
#: the log holds, which is what other queries still need)
KEEPER = ("keeper", (f"REGISTER QUERY keeper AS {PREFIX}SELECT * FROM STREAM <http://example.org/s> "
                     "[RANGE 2s STEP 1s] WHERE { ?a ?b ?c }", 0, None))
ASK = PREFIX + "ASK FROM STREAM <http://example.org/s> [RANGE 1s STEP 200ms] WHERE { ?x ex:likes ex:p3 }"


def csparql(name: str, body: str) -> str:
    return f"REGISTER QUERY {name} AS {body}"


def rspql(name: str, report: str, body: str) -> str:
    return f"REGISTER {report} {name} AS {body}"


def items(seed: int, steps: int) -> list[list[tuple[int, list]]]:
    """Per 100 ms step, the items of the stream (some steps have none; with
    an even seed most have none, so that many windows hold what the window
    before held and are not evaluated again)."""
    rng = random.Random(seed)
    counts = [0] * 12 + [1, 2] if seed % 2 == 0 else [0, 0, 1, 2, 3]
    person = [IRI(f"{EX}p{i}") for i in range(6)]
    out = []
    for step in range(steps):
        batch = []
        for ts in sorted(rng.sample(range(step * 100, step * 100 + 100), rng.choice(counts))):
            predicate = IRI(EX + rng.choice(["knows", "likes"]))
            batch.append((ts, [(rng.choice(person), predicate, rng.choice(person))]))
        out.append(batch)
    return out


def new_engine() -> StreamEngine:
    store = Store()
    person = [IRI(f"{EX}p{i}") for i in range(6)]
    store.add([(person[i], IRI(f"{EX}likes"), person[(i * 2) % 6]) for i in range(6)], graph=STORED)
    engine = StreamEngine(store)
    engine.declare_stream(StreamDefinition(STREAM, IRI(f"{EX}s")))
    return engine


def run(plan: dict[str, tuple[str, int, int | None]], steps: int, seed: int) -> dict[str, list]:
    """Feed ``steps`` steps into one engine holding every query of ``plan``
    (name: registration, step registered before, step unregistered before);
    each query's events as (sequence, bounds, answer as a multiset)."""
    engine, subscriptions = new_engine(), {}
    plan = dict([KEEPER, *plan.items()])
    events: dict[str, list] = {name: [] for name in plan}
    for step, batch in enumerate(items(seed, steps)):
        for name, (text, start, stop) in plan.items():
            if start == step:
                subscriptions[name] = engine.register(text).subscribe()
            if stop == step:
                engine.unregister(name)
        if batch:
            engine.ingest(STREAM, batch)
        engine.heartbeat(STREAM, (step + 1) * 100)
        for name, subscription in subscriptions.items():
            events[name] += [(e.sequence, e.start_ms, e.end_ms, e.windows, e.error, e.boolean,
                              Counter(e.rows)) for e in subscription.drain()]
    return events


PLAN = {  # name: (registration, registered before step, unregistered before step)
    "leader": (csparql("leader", CSPARQL), 0, 25),
    "copy": (csparql("copy", CSPARQL), 0, None),
    "late": (csparql("late", CSPARQL), 13, None),
    "c1": (csparql("c1", CONSTANT), 0, None),
    "c2": (csparql("c2", CONSTANT), 0, 30),
    "late_c": (csparql("late_c", CONSTANT), 9, None),
    "other": (csparql("other", CONSTANT.replace("ex:p1", "ex:p2")), 0, None),
    "r": (rspql("r", "RSTREAM", RSPQL), 0, 20),
    "i": (rspql("i", "ISTREAM", RSPQL), 0, None),
    "i2": (rspql("i2", "ISTREAM", RSPQL), 0, None),
    "d2": (rspql("d2", "DSTREAM", RSPQL), 0, None),
    "d": (rspql("d", "DSTREAM", RSPQL), 7, None),
    "a1": (csparql("a1", ASK), 0, None),
    "a2": (csparql("a2", ASK), 4, None),
}


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_every_copy_reports_what_it_reports_alone(monkeypatch, seed):
    steps = 45
    evaluated = []
    original = RunningQuery.evaluate

    def counting(self, *args):
        evaluated.append(self.spec.name)
        return original(self, *args)

    monkeypatch.setattr(RunningQuery, "evaluate", counting)
    together = run(PLAN, steps, seed)
    shared = len(evaluated)
    evaluated.clear()
    for name, entry in PLAN.items():
        alone = run({name: entry}, steps, seed)[name]
        assert together[name] == alone, name
        assert alone, name
    # the copies' windows were evaluated once: far fewer evaluations than alone
    # (the keeper's evaluations aside)
    keeper = evaluated.count("keeper") // len(PLAN)
    assert shared - keeper < (len(evaluated) - keeper * len(PLAN)) * 0.6


def test_the_key_leaves_out_name_and_report_policy_but_not_the_query():
    key = lambda text: duplicate_key(parse_registration(text))  # noqa: E731
    assert key(rspql("a", "RSTREAM", RSPQL)) == key(rspql("b", "ISTREAM", RSPQL))
    assert key(csparql("a", CSPARQL)) != key(csparql("a", CSPARQL.replace("200ms", "100ms")))
    assert key(csparql("a", CONSTANT)) != key(csparql("a", CONSTANT.replace("ex:p1", "ex:p2")))
    output = (f"REGISTER STREAM <{EX}out> AS {PREFIX}CONSTRUCT {{ ?x ex:saw ?y }} "
              "FROM STREAM <http://example.org/s> [RANGE 1s STEP 200ms] WHERE { ?x ex:knows ?y }")
    assert key(output) is None  # each copy's output would change what the next reads
