"""Running W3C SPARQL 1.1 tests against the engine and summarising them.

Each test gets a fresh :class:`engine.api.Store` and a time limit, so one
broken or pathological test costs at most that limit and never poisons the
next one. Result-format and evaluation tests pass the engine's answer
through our own writer and reader for the expected file's format, so the
serialisers are checked by the same run.
"""

from __future__ import annotations

import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from engine.api import QueryResult, Store
from engine.sparql import algebra as A
from engine.sparql.results import read_select, write_boolean, write_select
from engine.sparql.syntax import SparqlSyntaxError, parse_query, parse_update
from tests.harness.w3c.compare import compare_graphs, compare_solutions
from tests.harness.w3c.expected import read_expected_rdf, read_rdf_file, read_rdf_quads
from tests.harness.w3c.manifest import (
    CATEGORIES,
    QUERY_SYNTAX,
    UPDATE_SYNTAX,
    Exclusion,
    TestCase,
    load_suite,
    url_to_path,
)

#: seconds one test may take
DEFAULT_TIMEOUT = 10.0

_RESULT_FORMATS = {".srx": "xml", ".srj": "json", ".tsv": "tsv", ".csv": "csv"}


class TestTimeout(BaseException):
    """Raised inside a test that ran out of time; a BaseException so that an
    engine's own ``except Exception`` cannot swallow it."""

    __test__ = False


@dataclass
class Outcome:
    """How one test went; ``detail`` is the diff shown with ``-v``."""

    test: TestCase
    passed: bool
    reason: str = ""
    detail: str = ""


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    exclusions: list[Exclusion] = field(default_factory=list)


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (main thread only: a signal is
    the one way to stop pure-Python work; elsewhere the block runs unbounded)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TestTimeout(f"timed out after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def _new_store(test: TestCase, make_store: Callable[[], Store]) -> Store:
    store = make_store()
    for path in test.data:
        store.load(path, base=path.as_uri())
    for graph in test.graph_data:
        store.load(graph.path, graph=graph.name, base=graph.path.as_uri())
    return store


def _load_query_dataset(store: Store, test: TestCase, query: A.Query) -> None:
    """Load the files that FROM / FROM NAMED name as named graphs of that IRI."""
    if query.dataset is None:
        return
    loaded = {graph.name for graph in test.graph_data}
    for iri in (*query.dataset.default, *query.dataset.named):
        if iri.value in loaded or not iri.value.startswith("file:"):
            continue
        loaded.add(iri.value)
        store.load(url_to_path(iri.value), graph=iri.value, base=iri.value)


def order_columns(query: A.Query) -> list[str] | None:
    """Result columns an ORDER BY at the top of ``query`` sorts on; None when
    the order is free. A sort expression other than a variable makes every
    column count."""
    node = query.pattern
    while isinstance(node, A.Slice | A.Distinct | A.Reduced | A.Project):
        node = node.pattern
    if not isinstance(node, A.OrderBy):
        return None
    names: list[str] = []
    for expr, _ascending in node.conditions:
        if not isinstance(expr, A.VarExpr):
            return [var.name for var in query.variables]
        names.append(expr.var.name)
    return names


def _check_boolean(result: QueryResult, expected: bool, fmt: str | None) -> tuple[str, str] | None:
    if result.form != "ASK":
        return f"expected a boolean, got a {result.form} result", ""
    actual = read_select(fmt, write_boolean(fmt, result.boolean)) if fmt else result.boolean
    return None if actual == expected else ("wrong answer", f"expected {expected}, got {actual}")


def _check_solutions(
    result: QueryResult, expected: tuple, fmt: str | None, query: A.Query
) -> tuple[str, str] | None:
    if result.form != "SELECT":
        return f"expected solutions, got a {result.form} result", ""
    variables, rows = list(result.variables), list(result.rows())
    if fmt:  # through our writer and reader, so the serialiser is under test too
        written = b"".join(write_select(fmt, variables, rows))
        parsed = read_select(fmt, written)
        if isinstance(parsed, bool):
            return "solutions serialised as a boolean", written.decode(errors="replace")[:500]
        variables, rows = parsed
    problem = compare_solutions(variables, rows, expected[0], expected[1], order_columns(query))
    return ("wrong answer", problem) if problem else None


def _check_answer(test: TestCase, result: QueryResult, query: A.Query) -> tuple[str, str] | None:
    """(reason, detail) when the answer is wrong, else None."""
    assert test.result is not None
    fmt = _RESULT_FORMATS.get(test.result.suffix)
    expected = read_select(fmt, test.result.read_bytes()) if fmt else read_expected_rdf(test.result)
    if isinstance(expected, bool):
        return _check_boolean(result, expected, fmt)
    if isinstance(expected, tuple):
        return _check_solutions(result, expected, fmt, query)
    if result.form not in ("CONSTRUCT", "DESCRIBE"):
        return f"expected a graph, got a {result.form} result", ""
    problem = compare_graphs(result.triples(), expected)
    return ("wrong answer", problem) if problem else None


def _run_query_evaluation(test: TestCase, make_store: Callable[[], Store]) -> tuple[str, str] | None:
    assert test.query is not None
    store = _new_store(test, make_store)
    text, base = _read_text(test.query), test.query.as_uri()
    query = parse_query(text, base)
    _load_query_dataset(store, test, query)
    return _check_answer(test, store.query(text, base=base), query)


def _graph_states(store: Store) -> dict[str | None, list]:
    states: dict[str | None, list] = {None: list(store.triples(None))}
    for graph in store.named_graphs():
        triples = list(store.triples(graph.value))
        if triples:  # an empty named graph and a missing one look alike in the tests
            states[graph.value] = triples
    return states


def _expected_states(test: TestCase) -> dict[str | None, list]:
    states: dict[str | None, list] = {None: [t for p in test.result_data for t in read_rdf_file(p)]}
    for path in test.result_data:  # a TriG or N-Quads result names its graphs itself
        if path.suffix in (".trig", ".nq"):
            for s, p, o, g in read_rdf_quads(path):
                if g is not None:
                    states.setdefault(g.value, []).append((s, p, o))
    for graph in test.result_graph_data:
        triples = read_rdf_file(graph.path)
        if triples:
            states.setdefault(graph.name, []).extend(triples)
    return states


def _run_update_evaluation(test: TestCase, make_store: Callable[[], Store]) -> tuple[str, str] | None:
    assert test.query is not None
    store = _new_store(test, make_store)
    store.update(_read_text(test.query), base=test.query.as_uri())
    actual, expected = _graph_states(store), _expected_states(test)
    if set(actual) != set(expected):
        named = sorted(str(g) for g in actual if g is not None)
        wanted = sorted(str(g) for g in expected if g is not None)
        return "wrong named graphs", f"expected non-empty graphs {wanted}, got {named}"
    for graph, triples in expected.items():
        problem = compare_graphs(actual[graph], triples)
        if problem:
            return "wrong answer", f"graph {graph or 'DEFAULT'}: {problem}"
    return None


def _run_syntax(test: TestCase) -> tuple[str, str] | None:
    assert test.query is not None
    parse = parse_update if test.kind in UPDATE_SYNTAX else parse_query
    positive = test.kind.startswith("Positive")
    try:
        parse(_read_text(test.query), test.query.as_uri())
    except SparqlSyntaxError as error:
        return None if not positive else (f"rejected: {error}", "")
    return ("accepted an invalid request", "") if not positive else None


_RUNNERS: dict[str, Callable[..., tuple[str, str] | None]] = {
    "QueryEvaluationTest": _run_query_evaluation,
    "CSVResultFormatTest": _run_query_evaluation,
    "UpdateEvaluationTest": _run_update_evaluation,
    **{kind: _run_syntax for kind in QUERY_SYNTAX | UPDATE_SYNTAX},
}


def _short(error: BaseException) -> str:
    message = str(error).strip().splitlines()
    return f"{type(error).__name__}: {message[0][:200]}" if message else type(error).__name__


def run_test(test: TestCase, timeout: float = DEFAULT_TIMEOUT, make_store: Callable[[], Store] = Store
             ) -> Outcome:
    """Run one test on stores ``make_store`` makes (one process's by default,
    a cluster's in tests/cluster); never raises (errors become failed outcomes)."""
    try:
        with time_limit(timeout):
            runner = _RUNNERS[test.kind]
            problem = runner(test) if runner is _run_syntax else runner(test, make_store)
    except (Exception, TestTimeout) as error:  # a failed test, not a crash of the run
        problem = (_short(error), traceback.format_exc(limit=-3))
    if problem is None:
        return Outcome(test, True)
    return Outcome(test, False, problem[0], problem[1])


def run_suite(
    root: Path,
    folders: list[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_outcome: Callable[[Outcome], None] | None = None,
    make_store: Callable[[], Store] = Store,
    categories: tuple[str, ...] | None = None,
) -> Report:
    """Run every runnable test of the suite (or of ``folders``, or of
    ``categories``) on stores ``make_store`` makes."""
    tests, exclusions = load_suite(root, folders)
    report = Report(exclusions=exclusions)
    for test in tests:
        if categories is not None and test.category not in categories:
            continue
        outcome = run_test(test, timeout, make_store)
        report.outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return report


# ----------------------------------------------------------------- summaries


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        return self.passed + self.failed

    @property
    def percent(self) -> float:
        return 100.0 * self.passed / self.total if self.total else 100.0

    def add(self, outcome: Outcome) -> None:
        if outcome.passed:
            self.passed += 1
        else:
            self.failed += 1


def by_folder(outcomes: list[Outcome]) -> dict[tuple[str, str], Tally]:
    """Pass/fail counts per (folder, category), in suite order."""
    tallies: dict[tuple[str, str], Tally] = {}
    for outcome in outcomes:
        tallies.setdefault((outcome.test.folder, outcome.test.category), Tally()).add(outcome)
    return tallies


def by_category(outcomes: list[Outcome]) -> dict[str, Tally]:
    """Pass/fail counts per category (query/update evaluation, syntax, formats)."""
    tallies = {category: Tally() for category in CATEGORIES}
    for outcome in outcomes:
        tallies[outcome.test.category].add(outcome)
    return tallies


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _tally_cells(tally: Tally) -> tuple[str, str, str]:
    return str(tally.passed), str(tally.failed), f"{tally.percent:.1f}%"


def summary_tables(outcomes: list[Outcome]) -> str:
    """Markdown tables: totals per category, then per folder."""
    totals = [(name, *_tally_cells(t)) for name, t in by_category(outcomes).items() if t.total]
    overall = Tally(sum(o.passed for o in outcomes), sum(not o.passed for o in outcomes))
    totals.append(("**all**", *_tally_cells(overall)))
    folders = [(folder, category, *_tally_cells(t)) for (folder, category), t in by_folder(outcomes).items()]
    return "\n".join(
        _table(("category", "passed", "failed", "%"), totals)
        + [""]
        + _table(("folder", "type", "passed", "failed", "%"), folders)
    )


def failure_lines(outcomes: list[Outcome], verbose: bool = False) -> list[str]:
    """One line per failed test, with the diff indented below it when verbose."""
    lines: list[str] = []
    for outcome in outcomes:
        if outcome.passed:
            continue
        test = outcome.test
        lines.append(f"- `{test.folder}` {test.name} ({test.kind}): {outcome.reason}")
        if verbose and outcome.detail:
            lines.extend("      " + line for line in outcome.detail.rstrip().splitlines())
    return lines


def exclusion_lines(exclusions: list[Exclusion]) -> list[str]:
    return [f"- `{e.folder}`: {e.count} tests, {e.reason}" for e in exclusions if e.count]


def _approval_counts(outcomes: list[Outcome]) -> str:
    counts: dict[str, int] = {}
    for outcome in outcomes:
        label = f"dawgt:{outcome.test.approval}" if outcome.test.approval else "no status"
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{count} {label}" for label, count in sorted(counts.items()))


def render_markdown(report: Report) -> str:
    """The text of docs/conformance.md."""
    failures = failure_lines(report.outcomes) or ["None."]
    return "\n".join(
        [
            "# W3C SPARQL 1.1 conformance",
            "",
            "Generated by `.venv/bin/python -m tests.harness.w3c` from the W3C SPARQL 1.1 test",
            "suite in `../shared/conformance/w3c/sparql11` (next to the repository). Do not edit",
            "by hand: rerun that command to regenerate this page. `--folder NAME` runs one folder",
            "and `-v` prints the difference for each failure (neither rewrites this page).",
            "",
            "Query results are compared as multisets of solutions up to blank node renaming (for",
            "ORDER BY queries the sort keys must also come in the expected order), graphs by",
            "isomorphism, and terms by RDF 1.1 term equality, except that numeric literals compare",
            "by value within one datatype (`\"2.1E3\"^^xsd:double` equals `\"2100\"^^xsd:double`,",
            "`1` never equals `1.0`): the expected files spell numbers freely. Every answer is first",
            "written and read back in the format of the expected file (XML, JSON, CSV or TSV), so",
            "the result serialisers are tested by the same run. Each test runs in a fresh store with",
            f"a {DEFAULT_TIMEOUT:g} s time limit.",
            "",
            "## Results",
            "",
            summary_tables(report.outcomes),
            "",
            "## Not run",
            "",
            "Tests marked `dawgt:Approved`, `dawgt:Proposed` or carrying no approval status are",
            "run; tests marked `dawgt:Rejected`, `dawgt:Withdrawn` or `dawgt:Obsoleted` are left",
            "out, as the working group took them back. Run, by approval status:",
            f"{_approval_counts(report.outcomes)}. Left out:",
            "",
            *exclusion_lines(report.exclusions),
            "",
            "## Failing tests",
            "",
            *failures,
            "",
        ]
    )
