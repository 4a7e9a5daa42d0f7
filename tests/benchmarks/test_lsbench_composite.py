"""The composite of ``benchmarks/lsbench_composite.py`` (pyoxigraph plus a
window graph kept current step by step): after every step its window graph
holds exactly the window's triples, and it answers each full window as
pyoxigraph does on a fresh store loaded with that window's content.

The reference is built without the composite's bookkeeping or term
conversion: the window's triples are the set of the items fed with
``t - 1s <= ts < t``, written as N-Triples by the engine's ``format_term`` and
parsed by pyoxigraph into a fresh store (with the social graph for the queries
that name it). Each query runs 10 warm-up steps and 3 more, so items leave the
window; the like streams repeat triples within a window, so a triple must
outlive the first of its items to leave. Not a timing test.
"""

from collections import Counter

import pytest

from benchmarks.lsbench_data import DEFAULT_SEED, StreamGenerator, generate, scaled_rates
from benchmarks.lsbench_queries import QUERIES, RANGE_MS
from benchmarks.lsbench_timing import WARMUP_WINDOWS
from engine.rdf import format_term

pyoxigraph = pytest.importorskip("pyoxigraph")
composite = pytest.importorskip("benchmarks.lsbench_composite")

STORED_TRIPLES = 5_000
SCALE = 0.05
WINDOWS = 3


@pytest.fixture(scope="module")
def data():
    return generate(STORED_TRIPLES)


@pytest.fixture(scope="module")
def store(data):
    return composite.load_oxigraph(data)


def ntriples(triples) -> str:
    return "".join(f"{format_term(s)} {format_term(p)} {format_term(o)} .\n" for s, p, o in triples)


@pytest.fixture(scope="module")
def social(data) -> str:
    return ntriples(data.social_triples())


def fresh(query, social: str, lines: set[str]) -> Counter:
    """The answer of a window on a fresh store holding its triples (N-Triples lines)."""
    oxi = pyoxigraph.Store()
    oxi.load("\n".join(lines), pyoxigraph.RdfFormat.N_TRIPLES)
    if query.stored:
        oxi.load(social, pyoxigraph.RdfFormat.N_TRIPLES)
    solutions = oxi.query(query.window_sparql())
    return Counter(tuple(str(s[v]) for v in solutions.variables) for s in solutions)


@pytest.mark.parametrize("query", QUERIES, ids=[q.name for q in QUERIES])
def test_every_window_equals_a_fresh_store(query, data, store, social):
    window = composite.PeerWindow(store, query)
    generator = StreamGenerator(data, scaled_rates(SCALE), DEFAULT_SEED)
    fed: list = []
    answered = []
    for i, step in enumerate(composite.steps(window, generator, WARMUP_WINDOWS + WINDOWS)):
        fed += [item for items in step.items.values() for item in items]
        content = [t for ts, triples in fed if step.close - RANGE_MS <= ts < step.close for t in triples]
        held = {f"{q.subject} {q.predicate} {q.object} ." for q in window.content()}
        lines = set(ntriples(content).splitlines())
        assert held == lines, \
            f"window graph at {step.close}: {len(held - lines)} extra, {len(lines - held)} missing"
        assert sum(window.counts.values()) == len(content)
        answered.append(len(step.solutions))
        if i < WARMUP_WINDOWS - 1:  # the answers of the full windows only: the fresh store's L6 is slow
            continue
        expected = fresh(query, social, lines)
        answer = Counter(tuple(str(s[v]) for v in step.variables) for s in step.solutions)
        assert answer == expected, f"window {step.close}: missing {sorted(expected - answer)[:3]}, " \
                                   f"extra {sorted(answer - expected)[:3]}"
    assert window.deleted > 0, "no triple left the window: the deletes went untested"
    if any("like" in name for name in query.streams):
        assert window.kept > 0, "no triple outlived one of its items: duplicates went untested"
    assert any(answered), f"{query.name} answered nothing in {len(answered)} windows"
    assert not window.content(), "the window graph is emptied after the run"
