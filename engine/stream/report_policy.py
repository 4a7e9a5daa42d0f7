"""What a window reports: all its rows, or only the change since the window before.

RSTREAM reports every row; ISTREAM the rows new since the previous window,
DSTREAM the rows gone since then, both as multiset differences. Rows are
compared as decoded terms, so term IDs freed and reused in between do not
matter. A query evaluated incrementally hands over only the change
(:meth:`ReportPolicy.apply_change`); the policy then keeps the window's
result itself, whatever the report.
"""

from __future__ import annotations

from collections import Counter


class ReportPolicy:
    """The report policy of one query, with the previous window's rows it needs."""

    def __init__(self, report: str, keep_result: bool = False) -> None:
        self.report = report
        #: whether the previous window's rows are kept (ISTREAM, DSTREAM, incremental)
        self.keep_result = keep_result or report != "RSTREAM"
        self._previous: Counter = Counter()

    def apply(self, rows: list) -> list:
        """The rows (or triples) to report for a window whose answer is ``rows``."""
        if not self.keep_result:
            return rows
        current = Counter(rows)
        previous, self._previous = self._previous, current
        if self.report == "RSTREAM":
            return rows
        delta = current - previous if self.report == "ISTREAM" else previous - current
        return list(delta.elements())

    def apply_change(self, added: list, removed: list) -> list:
        """The rows to report for a window whose answer is the previous one's
        plus ``added`` minus ``removed`` (both multisets; ``removed`` is part of
        the previous answer). Costs the change, except RSTREAM's listing."""
        gained, lost = Counter(added), Counter(removed)
        result = self._previous
        result.update(gained)
        result.subtract(lost)
        for row in lost:
            if result[row] <= 0:
                del result[row]
        if self.report == "RSTREAM":
            return list(result.elements())
        delta = gained - lost if self.report == "ISTREAM" else lost - gained
        return list(delta.elements())

    def result(self) -> list:
        """The whole answer of the last window (kept only with ``keep_result``)."""
        return list(self._previous.elements())

    def previous_rows(self) -> Counter:
        """The previous window's rows (what the next report is compared with)."""
        return Counter(self._previous)

    def restore(self, previous: Counter) -> None:
        """Compare the next window with ``previous`` (kept across a restart)."""
        self._previous = Counter(previous)
