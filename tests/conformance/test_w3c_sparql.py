"""The W3C SPARQL 1.1 test suite, run once, held to pass-rate thresholds.

The per-test results live in the runner's report (printed here, and in
docs/conformance.md via ``python -m tests.harness.w3c``); pytest sees one
test per category so a regression shows which area slipped.
"""

from __future__ import annotations

import pytest

from tests.harness.w3c.manifest import SUITE_ROOT, suite_missing_reason
from tests.harness.w3c.runner import Report, by_category, failure_lines, run_suite, summary_tables

#: minimum pass rate (percent) per category; the one place to adjust them
THRESHOLDS = {
    "query evaluation": 95.0,
    "update evaluation": 95.0,
    "syntax": 98.0,
}


@pytest.fixture(scope="module")
def report() -> Report:
    missing = suite_missing_reason()
    if missing:
        print(f"skipping W3C conformance: {missing}")
        pytest.skip(missing)
    result = run_suite(SUITE_ROOT)
    print("\n" + summary_tables(result.outcomes))
    return result


@pytest.mark.parametrize("category", sorted(THRESHOLDS))
def test_pass_rate(report: Report, category: str) -> None:
    tally = by_category(report.outcomes)[category]
    assert tally.total > 0, f"no {category} tests were found"
    failures = [o for o in report.outcomes if not o.passed and o.test.category == category]
    assert tally.percent >= THRESHOLDS[category], (
        f"{category}: {tally.passed}/{tally.total} passed ({tally.percent:.1f}%), "
        f"below {THRESHOLDS[category]}%\n" + "\n".join(failure_lines(failures))
    )
