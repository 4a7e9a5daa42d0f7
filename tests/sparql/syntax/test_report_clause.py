"""The REPORT clause of a registration's head (RSP-QL report strategies):
each strategy parses, the registrations written without it are unchanged,
a bad clause is an error at its position, and ``with_report_clause`` writes
the clause an HTTP parameter asks for into a text that parses back to it."""

from __future__ import annotations

import pytest

from engine.sparql.syntax import ReportStrategy, SparqlSyntaxError, parse_registration, with_report_clause

EX = "http://example.org/"
CSPARQL = f"AS SELECT ?o FROM STREAM <{EX}s> [RANGE 10s STEP 1s] WHERE {{ ?s ?p ?o }}"
RSPQL = (f"AS SELECT ?o FROM NAMED WINDOW <{EX}w> ON <{EX}s> [RANGE PT10S STEP PT1S] "
         f"WHERE {{ WINDOW <{EX}w> {{ ?s ?p ?o }} }}")


@pytest.mark.parametrize("clause, strategy", [
    ("", ReportStrategy()),
    ("REPORT ON WINDOW CLOSE", ReportStrategy("window-close")),
    ("REPORT ON NON-EMPTY CONTENT", ReportStrategy("non-empty")),
    ("report on non empty content", ReportStrategy("non-empty")),
    ("REPORT ON CONTENT CHANGE", ReportStrategy("content-change")),
    ("REPORT EVERY 5s", ReportStrategy("periodic", 5000)),
    ("REPORT EVERY PT1M", ReportStrategy("periodic", 60_000)),
])
def test_each_clause_parses_to_its_strategy(clause, strategy):
    assert parse_registration(f"REGISTER QUERY q {clause} {CSPARQL}").report_strategy == strategy
    named = parse_registration(f"REGISTER ISTREAM <{EX}q> {clause} {RSPQL}")
    assert named.report == "ISTREAM" and named.report_strategy.name == strategy.name


@pytest.mark.parametrize("clause, message, column", [
    ("REPORT WHENEVER", "expected ON ... or EVERY after REPORT", 25),
    ("REPORT ON SUNDAYS", "expected WINDOW CLOSE, NON-EMPTY CONTENT or CONTENT CHANGE", 28),
    ("REPORT ON CONTENT", "expected CHANGE", 36),
    ("REPORT EVERY 1500ms", "must be a multiple of the windows' STEP (1000 ms)", 18),
    ("REPORT EVERY 0s", "greater than zero", 31),
])
def test_a_bad_clause_is_an_error_at_its_position(clause, message, column):
    with pytest.raises(SparqlSyntaxError) as raised:
        parse_registration(f"REGISTER QUERY q {clause} {CSPARQL}")
    assert message in raised.value.message and raised.value.column == column, raised.value


def test_a_period_needs_time_windows():
    with pytest.raises(SparqlSyntaxError, match="needs time windows"):
        parse_registration(f"REGISTER QUERY q REPORT EVERY 2s AS SELECT ?o FROM STREAM <{EX}s> [TRIPLES 5] "
                           "WHERE { ?s ?p ?o }")


@pytest.mark.parametrize("name, period, strategy", [
    ("window-close", None, ReportStrategy("window-close")),
    ("non-empty", None, ReportStrategy("non-empty")),
    ("content-change", None, ReportStrategy("content-change")),
    ("periodic", "PT4S", ReportStrategy("periodic", 4000)),
])
@pytest.mark.parametrize("head", ["REGISTER QUERY q", f"PREFIX ex: <{EX}> REGISTER RSTREAM ex:q",
                                  "# a comment\nREGISTER QUERY q\n"])
def test_a_parameter_becomes_the_clause_and_parses_back(name, period, strategy, head):
    body = RSPQL if "RSTREAM" in head else CSPARQL
    text = with_report_clause(f"{head} {body}", name, period)
    assert parse_registration(text).report_strategy == strategy
    assert text.endswith(body)


def test_the_clause_goes_into_the_text_with_escapes_resolved():
    text = with_report_clause(f"REGISTER QUERY q AS SELECT ?o FROM STREAM <{EX}\\u0073> [RANGE 1s STEP 1s] "
                              "WHERE { ?s ?p ?o }", "non-empty")
    spec = parse_registration(text)
    assert spec.windows[0].stream.value == EX + "s" and spec.report_strategy.name == "non-empty"


@pytest.mark.parametrize("name, period, message", [
    ("sometimes", None, "unknown report strategy"),
    ("periodic", None, "needs a period"),
    ("periodic", "5s AS SELECT", "needs a period"),
    ("non-empty", "5s", "only for the periodic"),
])
def test_a_bad_parameter_is_a_value_error(name, period, message):
    with pytest.raises(ValueError, match=message):
        with_report_clause(f"REGISTER QUERY q {CSPARQL}", name, period)


def test_a_parameter_beside_a_clause_is_refused():
    with pytest.raises(SparqlSyntaxError, match="chooses its report strategy already"):
        with_report_clause(f"REGISTER QUERY q REPORT ON CONTENT CHANGE {CSPARQL}", "non-empty")
