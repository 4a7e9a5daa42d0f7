"""What a window reports: all its rows, or only the change since the window before.

RSTREAM reports every row; ISTREAM the rows new since the previous window,
DSTREAM the rows gone since then, both as multiset differences. Rows are
compared as decoded terms, so term IDs freed and reused in between do not
matter.
"""

from __future__ import annotations

from collections import Counter


class ReportPolicy:
    """The report policy of one query, with the previous window's rows it needs."""

    def __init__(self, report: str) -> None:
        self.report = report
        self._previous: Counter = Counter()

    def apply(self, rows: list) -> list:
        """The rows (or triples) to report for a window whose answer is ``rows``."""
        if self.report == "RSTREAM":
            return rows
        current = Counter(rows)
        previous, self._previous = self._previous, current
        delta = current - previous if self.report == "ISTREAM" else previous - current
        return list(delta.elements())
