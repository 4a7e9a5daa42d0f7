"""Running the RDF 1.2 syntax tests against the engine's readers and writers.

- Syntax tests: the document is loaded into a fresh store (Oxigraph's
  parser, the canonical N-Quads split into columns, the dictionary), and an
  N-Triples or N-Quads document is also read line by line by the statement
  reader that stream items and request bodies go through. A positive test
  passes when every reader takes the document, a negative one when every
  reader refuses it.
- Evaluation tests: the store's graphs, read back, must be the expected
  N-Triples / N-Quads up to blank node renaming (RDFC-1.0 by Oxigraph, which
  handles triple terms); so must each graph written by our Turtle and
  N-Triples writers and read again.
- Canonicalisation tests: each statement read by the statement reader and
  written by the N-Triples writer's term spelling must be the expected line.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field

import pyoxigraph as ox

from engine.api import Store
from engine.rdf import c14n_term, from_oxigraph, parse_lines, write_graph
from tests.harness.w3c.compare import to_oxigraph
from tests.harness.w3c.expected import read_rdf_quads
from tests.harness.w3c.runner import DEFAULT_TIMEOUT, Tally, TestTimeout, time_limit
from tests.harness.w3c_rdf.manifest import RdfTest, load_rdf_suites

Quad = tuple


@dataclass
class RdfOutcome:
    test: RdfTest
    passed: bool
    reason: str = ""
    detail: str = ""


@dataclass
class RdfReport:
    outcomes: list[RdfOutcome] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _line_reader(test: RdfTest) -> str | None:
    """Why the statement reader refused the document (None: it read it)."""
    try:
        for _ in parse_lines(test.action.read_bytes().decode("utf-8")):
            pass
    except (ValueError, UnicodeDecodeError) as error:
        return str(error)
    return None


def _loader(test: RdfTest) -> tuple[Store | None, str | None]:
    """The store the document loads into, or why it was refused."""
    store = Store()
    try:
        store.load(test.action, format=test.format, base=test.base)
    except (ValueError, UnicodeDecodeError) as error:
        return None, str(error)
    return store, None


def _syntax(test: RdfTest) -> tuple[str, str] | None:
    positive = test.kind == "PositiveSyntax"
    _, refused = _loader(test)
    problems = []
    if positive and refused:
        problems.append(f"the loader refused it: {refused}")
    if not positive and not refused:
        problems.append("the loader accepted it")
    if test.format in ("nt", "nquads"):
        refused = _line_reader(test)
        if positive and refused:
            problems.append(f"the statement reader refused it: {refused}")
        if not positive and not refused:
            problems.append("the statement reader accepted it")
    return ("; ".join(problems), "") if problems else None


def _canonical(quads: Iterable[Quad]) -> set:
    dataset = ox.Dataset()
    for s, p, o, g in quads:
        graph = ox.DefaultGraph() if g is None else to_oxigraph(g)
        dataset.add(ox.Quad(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o), graph))
    dataset.canonicalize(ox.CanonicalizationAlgorithm.UNSTABLE)
    return set(dataset)


def _stored(store: Store) -> list[Quad]:
    quads = [(s, p, o, None) for s, p, o in store.triples(None)]
    for graph in store.named_graphs():
        quads.extend((s, p, o, graph) for s, p, o in store.triples(graph.value))
    return quads


def _difference(actual: set, expected: set) -> str:
    shown = lambda quads: "\n".join(f"    {q}" for q in sorted(map(str, quads))[:10])  # noqa: E731
    return (f"expected {len(expected)} statements, got {len(actual)}\n  missing:\n{shown(expected - actual)}"
            f"\n  unexpected:\n{shown(actual - expected)}")


def _written(quads: list[Quad], fmt: str) -> list[Quad]:
    """The quads, each graph written by our writer in ``fmt`` and read back by Oxigraph."""
    out: list[Quad] = []
    for graph in {q[3] for q in quads}:
        triples = [(s, p, o) for s, p, o, g in quads if g == graph]
        text = b"".join(write_graph(fmt, triples, {"ex": "http://example/"}))
        parser = ox.RdfFormat.TURTLE if fmt == "turtle" else ox.RdfFormat.N_TRIPLES
        out.extend((from_oxigraph(q.subject), from_oxigraph(q.predicate), from_oxigraph(q.object), graph)
                   for q in ox.parse(text, parser))
    return out


def _eval(test: RdfTest) -> tuple[str, str] | None:
    store, refused = _loader(test)
    if store is None:
        return f"the loader refused it: {refused}", ""
    assert test.result is not None
    expected = _canonical(read_rdf_quads(test.result))
    quads = _stored(store)
    actual = _canonical(quads)
    if actual != expected:
        return "wrong statements in the store", _difference(actual, expected)
    for fmt in ("turtle", "nt"):
        written = _canonical(_written(quads, fmt))
        if written != expected:
            return f"the {fmt} writer's output reads back otherwise", _difference(written, expected)
    return None


def _c14n(test: RdfTest) -> tuple[str, str] | None:
    assert test.result is not None
    lines = []
    for _, (s, p, o, g) in parse_lines(test.action.read_bytes().decode("utf-8")):
        terms = (s, p, o) if g is None else (s, p, o, g)
        lines.append(" ".join(c14n_term(t) for t in terms) + " .")
    expected = test.result.read_bytes().decode("utf-8").splitlines()
    if lines == expected:
        return None
    return "not the canonical form", "expected:\n" + "\n".join(expected) + "\ngot:\n" + "\n".join(lines)


_RUNNERS = {"PositiveSyntax": _syntax, "NegativeSyntax": _syntax, "Eval": _eval, "PositiveC14N": _c14n}


def run_rdf_test(test: RdfTest, timeout: float = DEFAULT_TIMEOUT) -> RdfOutcome:
    """Run one test; never raises (an error is a failed outcome)."""
    runner = _RUNNERS.get(test.kind)
    if runner is None:
        return RdfOutcome(test, False, f"test type {test.kind} is not run here")
    try:
        with time_limit(timeout):
            problem = runner(test)
    except (Exception, TestTimeout) as error:
        problem = (f"{type(error).__name__}: {str(error).strip()[:200]}", traceback.format_exc(limit=-3))
    return RdfOutcome(test, problem is None, *(problem or ("", "")))


def run_rdf_suites(timeout: float = DEFAULT_TIMEOUT) -> RdfReport:
    tests, missing = load_rdf_suites()
    return RdfReport([run_rdf_test(test, timeout) for test in tests], missing)


def rdf_tallies(outcomes: list[RdfOutcome]) -> dict[tuple[str, str], Tally]:
    """Pass/fail counts per (suite, folder), in manifest order."""
    tallies: dict[tuple[str, str], Tally] = {}
    for outcome in outcomes:
        tally = tallies.setdefault((outcome.test.suite, outcome.test.folder), Tally())
        tally.passed += outcome.passed
        tally.failed += not outcome.passed
    return tallies


def rdf_failure_lines(outcomes: list[RdfOutcome], verbose: bool = False) -> list[str]:
    lines = []
    for outcome in outcomes:
        if not outcome.passed:
            test = outcome.test
            lines.append(f"- `{test.suite}/{test.folder}` {test.name} ({test.kind}): {outcome.reason}")
            if verbose and outcome.detail:
                lines.extend("      " + line for line in outcome.detail.rstrip().splitlines())
    return lines

