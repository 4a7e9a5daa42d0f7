"""Whether a query reports the window closing at an instant: its report strategy.

RSP-QL's model (RSP4J's report strategies) separates *when* a window is
reported from *what* it reports (RSTREAM, ISTREAM, DSTREAM:
:mod:`~engine.stream.report_policy`). The instants are the query's window
closes (:mod:`~engine.stream.schedule`); at each one the strategy decides:

* ``window-close`` (the default): every close reports;
* ``non-empty``: a close reports when one of the query's windows holds an item;
* ``content-change``: a close reports when the items its windows hold differ
  from those held at the last close that reported (at first: from none);
* ``periodic``: the closes at a multiple of the period report.

A close that does not report is not evaluated: no event, no sequence number,
and ISTREAM/DSTREAM compare the next reported window with the last reported
one. The content of a time window is read from the transient log's arrival
numbers (the rows of ``[start, end)`` are those numbered ``sequence_at(start)``
up to ``sequence_at(end)``), so the decision costs two binary searches per
window. Where they cannot be read (a count window: its content changes with
every close anyway; a log without them) every close reports. What
``content-change`` compares with is kept in this process: after a restart
the first close reports when its windows hold an item.
"""

from __future__ import annotations

from engine.sparql.syntax import ReportStrategy
from engine.stream.registry import StreamState
from engine.stream.schedule import WindowSchedule

#: a window's content: the arrival numbers ``(first, end)`` of its rows, None when empty
Content = tuple[tuple[int, int] | None, ...]


class ReportTrigger:
    """The report strategy of one query, with the content it compares with."""

    def __init__(self, strategy: ReportStrategy, schedule: WindowSchedule,
                 streams: list[StreamState]) -> None:
        self.strategy = strategy
        self.schedule = schedule
        self.streams = streams
        self._readable = schedule.count is None and all(hasattr(s.log, "sequence_at") for s in streams)
        #: the content at the last close reported (content-change), none at first
        self._reported: Content = (None,) * len(streams)
        #: closes passed over without a report (since this process started)
        self.skipped = 0
        #: the last close decided, and the decision (asked again, it stands)
        self._decided: tuple[int, bool] | None = None

    def reports_at(self, close: int) -> bool:
        """Whether the window closing at ``close`` (due now) is reported."""
        if self._decided is not None and self._decided[0] == close:
            return self._decided[1]
        reports = self._decide(close)
        self._decided = (close, reports)
        return reports

    def _decide(self, close: int) -> bool:
        name = self.strategy.name
        if name == "window-close":
            return True
        if name == "periodic":
            return self._counted(close % self.strategy.period_ms == 0)  # type: ignore[operator]
        if not self._readable:
            return True
        content = self._content(close)
        if name == "non-empty":
            return self._counted(any(window is not None for window in content))
        if content == self._reported:
            return self._counted(False)
        self._reported = content
        return True

    def _counted(self, reports: bool) -> bool:
        if not reports:
            self.skipped += 1
        return reports

    def _content(self, close: int) -> Content:
        windows = []
        for stream, (start, end) in zip(self.streams, self.schedule.bounds(close), strict=True):
            first, after = stream.log.sequence_at(start), stream.log.sequence_at(end)
            windows.append((first, after) if after > first else None)
        return tuple(windows)
