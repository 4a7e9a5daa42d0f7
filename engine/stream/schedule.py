"""The clock of one continuous query: when it evaluates next, and when that is due.

Time windows: the query evaluates at every *instant* that is a close of any
of its windows (:mod:`~engine.stream.windows`), in time order; at instant
``t`` each window holds its latest window closed at or before ``t``. With
one STEP that is every close of every window. A count window evaluates every
``count`` triples of its stream. The next evaluation is due once every
stream it reads has a watermark at or past its instant (or, for a count
window, once the stream has logged that many triples). The schedule also
says how far back the query still reads: the transient log before that may
be freed, and the stored deltas from the next instant on must keep their
timestamps.

``next_index`` is the clock's whole state (a checkpoint keeps it): the next
instant is ``next_index * unit``, ``unit`` the STEPs' greatest common
divisor (the STEP itself when the windows share one); for a count window the
next close is after ``next_index * count`` triples.
"""

from __future__ import annotations

from engine.stream.registry import StreamState
from engine.stream.windows import (
    clock_unit,
    closes_between,
    count_of,
    latest_close,
    next_instant_after,
)


class WindowSchedule:
    """The clock of one query over its ``streams`` (one per window)."""

    def __init__(self, windows: list, streams: list[StreamState]) -> None:
        self.streams = streams
        self.count = count_of(windows)
        timed = self.count is None
        #: each time window's STEP and RANGE, in registration order
        self.steps: tuple[int, ...] = tuple(w.step_ms for w in windows) if timed else ()
        self.ranges: tuple[int, ...] = tuple(w.range_ms for w in windows) if timed else ()
        self.range_ms = max(self.ranges) if timed else 0
        #: every instant is a multiple of it (None for a count window)
        self.unit = clock_unit(self.steps) if timed else None
        #: the STEP all windows share; None when they differ (or for a count window)
        self.step_ms = self.steps[0] if timed and len(set(self.steps)) == 1 else None
        #: the next instant is next_index * unit (or the next close after
        #: next_index * count triples); None until the query's clock has started
        self.next_index: int | None = None
        #: how far before the next window's start the query still reads (the
        #: rows that leave the window, for incremental evaluation)
        self.lookback_ms = 0
        #: oldest_needed's last answer for time windows, and the (next_index, lookback_ms) it is for
        self._oldest_key: tuple[int, int] | None = None
        self._oldest_ts = 0
        self._start()

    def _start(self) -> None:
        """A count window starts with the stream's next triple; time windows with
        the first instant after the streams' watermarks (if any has one yet)."""
        if self.count is not None:
            self.next_index = self.streams[0].log.total // self.count + 1
            return
        marks = [s.watermark for s in self.streams if s.watermark is not None]
        if marks:
            self.next_index = next_instant_after(min(marks), self.steps) // self.unit

    def start_at(self, first_item_ts: int) -> None:
        """The first data item reached one of the query's streams: the first
        instant is the first one whose windows can hold it."""
        if self.next_index is None and self.count is None:
            self.next_index = next_instant_after(first_item_ts, self.steps) // self.unit

    def due(self) -> int | None:
        """The instant (ms, or sequence number for count windows) of the next
        evaluation if all its data has arrived, else None."""
        return None if self.next_index is None else self.due_at(self.next_index)

    def due_at(self, index: int) -> int | None:
        """As :meth:`due`, for a clock at ``index``: a clock further on is due
        only if this one is (a watermark or triple count reaching a close has
        reached every earlier one), so :mod:`~engine.stream.clock_cohorts`
        asks it once for the least index of many clocks."""
        if self.count is not None:
            close = index * self.count
            return close if self.streams[0].log.total >= close else None
        close = index * self.unit
        for s in self.streams:
            if s.watermark is None or s.watermark < close:
                return None
        return close

    def advance(self) -> None:
        """The next evaluation is done: on to the following instant."""
        if self.count is not None or self.step_ms is not None:  # one STEP: the unit is that STEP
            self.next_index += 1
        else:
            self.next_index = next_instant_after(self.next_index * self.unit, self.steps) // self.unit

    def next_close(self) -> int | None:
        """The next instant (ms, or sequence number), if the clock runs."""
        if self.next_index is None:
            return None
        return self.next_index * (self.unit or self.count)

    def windows_until(self, watermark: int) -> int:
        """How many evaluations a watermark of ``watermark`` ms would make due now
        (0 for count windows and a clock not started; with several STEPs an
        instant where windows of two STEPs close counts twice)."""
        if self.count is not None or self.next_index is None:
            return 0
        return self.windows_until_at(self.next_index, watermark)

    def windows_until_at(self, index: int, watermark: int) -> int:
        """As :meth:`windows_until`, for a time-window clock at ``index``."""
        return closes_between(index * self.unit - 1, watermark, self.steps)

    def bounds(self, instant: int) -> list[tuple[int, int]]:
        """Each time window's ``[start, end)`` at ``instant``: its latest window
        closed at or before it."""
        closes = (latest_close(instant, step) for step in self.steps)
        return [(close - range_ms, close) for close, range_ms in zip(closes, self.ranges, strict=True)]

    def oldest_needed(self) -> tuple[int | None, int | None]:
        """``(ts, seq)`` before which this query needs no transient data: the
        earliest start of a window at the next instant (later instants start
        later)."""
        if self.next_index is None:
            return None, None
        return self.oldest_needed_at(self.next_index)

    def oldest_needed_at(self, index: int) -> tuple[int | None, int | None]:
        """As :meth:`oldest_needed`, for a clock at ``index``: never later
        than at a greater index."""
        if self.count is not None:
            return None, (index - 1) * self.count
        key = (index, self.lookback_ms)
        if self._oldest_key != key:  # asked at every batch and heartbeat, moves only when windows fire
            start = min(start for start, _ in self.bounds(index * self.unit))
            self._oldest_key, self._oldest_ts = key, start - self.lookback_ms
        return self._oldest_ts, None

    def store_bound(self, state: StreamState) -> int | None:
        """The earliest application time from which the deltas of ``state`` in
        the store must keep their timestamps for this query's pending windows."""
        return self.store_bound_at(self.next_index, state)

    def store_bound_at(self, index: int | None, state: StreamState) -> int | None:
        """As :meth:`store_bound`, for a clock at ``index`` (None: not
        started): never later than at a greater index."""
        if self.count is not None:
            # a count window reads the store as of its last item: keep
            # everything still in the log apart
            return state.log.first_ts() if state.log.chunks else state.watermark
        return None if index is None else index * self.unit
