"""What a window reports: all its rows, or only the change since the window before.

RSTREAM reports every row; ISTREAM the rows new since the previous window,
DSTREAM the rows gone since then, both as multiset differences. Rows are
compared as decoded terms, so term IDs freed and reused in between do not
matter. A query evaluated incrementally hands over only the change
(:meth:`ReportPolicy.apply_change`); the policy then keeps the window's
result itself, whatever the report.

Copies of one query (:mod:`~engine.stream.duplicates`) apply their policies
to one answer: its multiset is counted once and shared by their policies
(never changed in place while shared), and the copies whose previous result
is the same shared multiset report the same rows, worked out once.
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
        #: whether ``_previous`` is shared with other policies (copy it before changing it)
        self._shared = False

    def apply(self, rows: list, counted: Counter | None = None, reported: dict | None = None) -> list:
        """The rows (or triples) to report for a window whose answer is ``rows``.
        ``counted``: ``Counter(rows)``, made once for the policies of several
        copies; ``reported``: what those policies reported so far, by previous
        result and report (the previous results are kept in it, so that their
        ``id`` stays theirs while it lives)."""
        if not self.keep_result:
            return rows
        current = Counter(rows) if counted is None else counted
        previous, self._previous, self._shared = self._previous, current, counted is not None
        if self.report == "RSTREAM":
            return rows
        key = (id(previous), self.report)
        if reported is not None and key in reported:
            return reported[key][1]
        delta = list((current - previous if self.report == "ISTREAM" else previous - current).elements())
        if reported is not None:
            reported[key] = (previous, delta)
        return delta

    def apply_change(self, added: list, removed: list) -> list:
        """The rows to report for a window whose answer is the previous one's
        plus ``added`` minus ``removed`` (both multisets; ``removed`` is part of
        the previous answer). Costs the change, except RSTREAM's listing."""
        gained, lost = Counter(added), Counter(removed)
        if self._shared:
            self._previous, self._shared = Counter(self._previous), False
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
        self._previous, self._shared = Counter(previous), False
