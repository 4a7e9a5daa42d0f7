"""Command line: ``python -m tests.harness.w3c12 [-v] [--no-docs]``."""

from __future__ import annotations

import argparse
import sys
import time

from tests.harness.w3c.manifest import SUITE_12_ROOT, suite_missing_reason
from tests.harness.w3c.runner import DEFAULT_TIMEOUT, failure_lines, run_suite
from tests.harness.w3c12.report import DOC_PATH, publish, render_section
from tests.harness.w3c_rdf.manifest import RDF12_ROOT
from tests.harness.w3c_rdf.runner import rdf_failure_lines, run_rdf_suites


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.w3c12", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="show the difference for each failure")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per test")
    parser.add_argument("--no-docs", action="store_true", help=f"do not rewrite {DOC_PATH.name}")
    args = parser.parse_args(argv)
    missing = suite_missing_reason(SUITE_12_ROOT)
    if missing or not (RDF12_ROOT / "rdf-turtle" / "manifest.ttl").is_file():
        print(f"conformance run skipped: {missing or f'no RDF 1.2 suite at {RDF12_ROOT}'}")
        return 0
    started = time.perf_counter()
    sparql = run_suite(SUITE_12_ROOT, timeout=args.timeout)
    rdf = run_rdf_suites(args.timeout)
    section = render_section(sparql, rdf)
    print(section)
    if args.verbose:
        print("\n".join(failure_lines(sparql.outcomes, True) + rdf_failure_lines(rdf.outcomes, True)))
    print(f"\n{len(sparql.outcomes) + len(rdf.outcomes)} tests in {time.perf_counter() - started:.1f} s")
    if not args.no_docs:
        publish(section)
        print(f"wrote {DOC_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
