"""The clock of one continuous query: which window closes next, and when it is due.

All windows of a query share one clock (:func:`~engine.stream.windows.common_step`):
time windows close at multiples of the STEP, a count window every ``count``
triples of its stream. The next window is due once every stream it reads has
a watermark at or past its close (or, for a count window, once the stream has
logged that many triples). The schedule also says how far back the query
still reads: the transient log before that may be freed, and the stored
deltas from the earliest pending close on must keep their timestamps.
"""

from __future__ import annotations

from engine.stream.registry import StreamState
from engine.stream.windows import common_step, first_window_after, first_window_holding


class WindowSchedule:
    """The window clock of one query over its ``streams`` (one per window)."""

    def __init__(self, windows: list, streams: list[StreamState]) -> None:
        self.streams = streams
        self.step_ms, self.count = common_step(windows)
        self.range_ms = max(w.range_ms for w in windows) if self.count is None else 0
        #: index k of the next window to close (at k*step, or after k*count triples);
        #: None until the query's clock has started
        self.next_index: int | None = None
        #: how far before the next window's start the query still reads (the
        #: rows that leave the window, for incremental evaluation)
        self.lookback_ms = 0
        self._start()

    def _start(self) -> None:
        """A count window starts with the stream's next triple; time windows with
        the first window after the streams' watermarks (if any has one yet)."""
        if self.count is not None:
            self.next_index = self.streams[0].log.total // self.count + 1
            return
        marks = [s.watermark for s in self.streams if s.watermark is not None]
        if marks:
            self.next_index = first_window_after(min(marks), self.step_ms)

    def start_at(self, first_item_ts: int) -> None:
        """The first data item reached one of the query's streams."""
        if self.next_index is None and self.step_ms is not None:
            self.next_index = first_window_holding(first_item_ts, self.step_ms)

    def due(self) -> int | None:
        """The close (ms, or sequence number for count windows) of the next window
        if all its data has arrived, else None."""
        if self.next_index is None:
            return None
        if self.count is not None:
            close = self.next_index * self.count
            return close if self.streams[0].log.total >= close else None
        close = self.next_index * self.step_ms
        for s in self.streams:
            if s.watermark is None or s.watermark < close:
                return None
        return close

    def advance(self) -> None:
        """The next window has been evaluated."""
        self.next_index += 1

    def next_close(self) -> int | None:
        """The close of the next window (ms, or sequence number), if the clock runs."""
        if self.next_index is None:
            return None
        return self.next_index * (self.step_ms or self.count)

    def windows_until(self, watermark: int) -> int:
        """How many time windows a watermark of ``watermark`` ms would close now
        (0 for count windows and a clock not started)."""
        if self.step_ms is None or self.next_index is None:
            return 0
        return watermark // self.step_ms - self.next_index + 1

    def pending_close_ms(self) -> int | None:
        """Smallest application time a future evaluation reads the store as of."""
        if self.next_index is None or self.count is not None:
            return None
        return self.next_index * self.step_ms

    def oldest_needed(self) -> tuple[int | None, int | None]:
        """``(ts, seq)`` before which this query needs no transient data."""
        if self.next_index is None:
            return None, None
        if self.count is not None:
            return None, (self.next_index - 1) * self.count
        return self.next_index * self.step_ms - self.range_ms - self.lookback_ms, None

    def store_bound(self, state: StreamState) -> int | None:
        """The earliest application time from which the deltas of ``state`` in
        the store must keep their timestamps for this query's pending windows."""
        pending = self.pending_close_ms()
        if pending is None and self.count is not None:
            # a count window reads the store as of its last item: keep
            # everything still in the log apart
            return state.log.first_ts() if state.log.chunks else state.watermark
        return pending
