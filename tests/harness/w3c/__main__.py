"""Command line: ``python -m tests.harness.w3c [--folder NAME] [-v]``."""

from __future__ import annotations

import argparse
import sys
import time

from tests.harness.w3c.manifest import REPO_ROOT, SUITE_ROOT, folders, suite_missing_reason
from tests.harness.w3c.runner import (
    DEFAULT_TIMEOUT,
    exclusion_lines,
    failure_lines,
    render_markdown,
    run_suite,
    summary_tables,
)
from tests.harness.w3c12.report import kept_section

DOC_PATH = REPO_ROOT / "docs" / "conformance.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.w3c", description=__doc__)
    parser.add_argument("--folder", action="append", help="run only this suite folder (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the difference for each failure")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per test")
    parser.add_argument("--no-docs", action="store_true", help=f"do not rewrite {DOC_PATH.name}")
    args = parser.parse_args(argv)

    missing = suite_missing_reason()
    if missing:
        print(f"conformance run skipped: {missing}")
        return 0
    unknown = sorted(set(args.folder or ()) - set(folders(SUITE_ROOT)))
    if unknown:
        print(f"unknown folder(s) {', '.join(unknown)}; the suite has: {', '.join(folders(SUITE_ROOT))}")
        return 2
    started = time.perf_counter()
    report = run_suite(SUITE_ROOT, args.folder, args.timeout)
    print(summary_tables(report.outcomes))
    if report.exclusions and not args.folder:
        print("\nNot run:\n" + "\n".join(exclusion_lines(report.exclusions)))
    failures = failure_lines(report.outcomes, args.verbose)
    if failures:
        print(f"\nFailing tests ({sum(not o.passed for o in report.outcomes)}):\n" + "\n".join(failures))
    print(f"\n{len(report.outcomes)} tests in {time.perf_counter() - started:.1f} s")
    if not args.folder and not args.no_docs:
        kept = kept_section(DOC_PATH)  # the 1.2 suites' part (tests.harness.w3c12)
        DOC_PATH.write_text(render_markdown(report) + ("\n" + kept if kept else ""), encoding="utf-8")
        print(f"wrote {DOC_PATH.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
