"""The W3C SPARQL 1.2 and RDF 1.2 suites, run once, held to their figures.

docs/conformance.md lists every test that fails and why (``python -m
tests.harness.w3c12``); here each category must keep at least the number of
passing tests it has, so a regression shows which area slipped.
"""

from __future__ import annotations

import pytest

from tests.harness.w3c.manifest import SUITE_12_ROOT, suite_missing_reason
from tests.harness.w3c.runner import Report, by_category, failure_lines, run_suite
from tests.harness.w3c_rdf.manifest import RDF12_ROOT
from tests.harness.w3c_rdf.runner import RdfReport, rdf_failure_lines, rdf_tallies, run_rdf_suites

#: least passing tests per SPARQL 1.2 category; the one place to adjust them
SPARQL_PASSING = {"query evaluation": 63, "update evaluation": 3, "syntax": 203}
#: least passing tests per RDF 1.2 suite
RDF_PASSING = {"rdf-n-triples": 70, "rdf-n-quads": 68, "rdf-turtle": 103, "rdf-trig": 60}


@pytest.fixture(scope="module")
def sparql() -> Report:
    missing = suite_missing_reason(SUITE_12_ROOT)
    if missing:
        print(f"skipping W3C SPARQL 1.2 conformance: {missing}")
        pytest.skip(missing)
    return run_suite(SUITE_12_ROOT)


@pytest.fixture(scope="module")
def rdf() -> RdfReport:
    if not (RDF12_ROOT / "rdf-turtle" / "manifest.ttl").is_file():
        print(f"skipping W3C RDF 1.2 conformance: no suite at {RDF12_ROOT}")
        pytest.skip(f"no RDF 1.2 suite at {RDF12_ROOT}")
    return run_rdf_suites()


@pytest.mark.parametrize("category", sorted(SPARQL_PASSING))
def test_sparql_12(sparql: Report, category: str) -> None:
    tally = by_category(sparql.outcomes)[category]
    failures = [o for o in sparql.outcomes if not o.passed and o.test.category == category]
    assert tally.passed >= SPARQL_PASSING[category], (
        f"{category}: {tally.passed}/{tally.total} passed, fewer than {SPARQL_PASSING[category]}\n"
        + "\n".join(failure_lines(failures)))


@pytest.mark.parametrize("suite", sorted(RDF_PASSING))
def test_rdf_12(rdf: RdfReport, suite: str) -> None:
    passed = sum(t.passed for (name, _), t in rdf_tallies(rdf.outcomes).items() if name == suite)
    failures = [o for o in rdf.outcomes if not o.passed and o.test.suite == suite]
    assert passed >= RDF_PASSING[suite], (
        f"{suite}: {passed} passed, fewer than {RDF_PASSING[suite]}\n"
        + "\n".join(rdf_failure_lines(failures)))
