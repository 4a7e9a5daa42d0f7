"""Registered queries grouped by clock, so that bookkeeping costs a step per group.

At every batch and heartbeat the engine asks what the queries' clocks need:
whether any window may be due, how far back the transient log is still
read, from when the stored deltas must keep their timestamps, how many
windows a watermark would close. Queries with the same windows over the same
streams have the same clock but for where it stands (its ``next_index``), and
each of those answers is monotone in that index
(:class:`~engine.stream.schedule.WindowSchedule`'s ``*_at`` methods): a
cohort answers for all its members from their least index, or once per
distinct index. A service with K = 1000 queries of a few window shapes pays a
few steps there, not K (CQELS Cloud groups its queries' windows the same way).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from engine.stream.registry import StreamState
from engine.stream.schedule import WindowSchedule


def clock_key(schedule: WindowSchedule) -> tuple:
    """What makes two clocks the same but for where they stand."""
    return (tuple(map(id, schedule.streams)), schedule.count, schedule.steps, schedule.ranges,
            schedule.lookback_ms)


class ClockCohort:
    """The clocks of one key: ``model`` (the first member) does the
    arithmetic, each member's ``next_index`` says where it stands. Compared
    by identity (a dictionary key per round costs no tuple hash)."""

    def __init__(self, key: tuple, model: WindowSchedule) -> None:
        self.key = key
        self.model = model
        self.streams: list[StreamState] = model.streams
        #: the members' clocks, by id (registration order)
        self.members: dict[int, WindowSchedule] = {}

    def least_index(self) -> int | None:
        """The least index of the members whose clock runs (None: none runs)."""
        return min((s.next_index for s in self.members.values() if s.next_index is not None), default=None)

    def may_be_due(self) -> bool:
        """Whether some member's next evaluation may be due (if none is, no
        member need be asked)."""
        index = self.least_index()
        return index is not None and self.model.due_at(index) is not None

    def oldest_needed(self) -> tuple[int | None, int | None]:
        """``(ts, seq)`` before which no member needs transient data (both
        None while no member's clock runs)."""
        index = self.least_index()
        return (None, None) if index is None else self.model.oldest_needed_at(index)

    def store_bound(self, state: StreamState) -> int | None:
        """The earliest application time any member's pending windows read
        ``state``'s stored deltas as of."""
        return self.model.store_bound_at(self.least_index(), state)

    def windows_until(self, watermark: int) -> int:
        """How many evaluations of all members a watermark of ``watermark`` ms would make due."""
        if self.model.count is not None:
            return 0
        indices = Counter(s.next_index for s in self.members.values() if s.next_index is not None)
        return sum(n * self.model.windows_until_at(index, watermark) for index, n in indices.items())

    def start_at(self, first_item_ts: int) -> None:
        """A data item reached the cohort's streams: the members' clocks not yet running start."""
        for schedule in self.members.values():
            if schedule.next_index is None:
                schedule.start_at(first_item_ts)


class ClockCohorts:
    """The registered queries' clocks, by :func:`clock_key`."""

    def __init__(self) -> None:
        self._by_key: dict[tuple, ClockCohort] = {}

    def add(self, schedule: WindowSchedule) -> ClockCohort:
        """A registered query's clock joins its cohort, which is returned."""
        key = clock_key(schedule)
        cohort = self._by_key.get(key)
        if cohort is None:
            cohort = self._by_key[key] = ClockCohort(key, schedule)
        cohort.members[id(schedule)] = schedule
        return cohort

    def remove(self, cohort: ClockCohort, schedule: WindowSchedule) -> None:
        """An unregistered query's clock leaves its cohort (gone once empty)."""
        del cohort.members[id(schedule)]
        if not cohort.members:
            del self._by_key[cohort.key]

    def __iter__(self) -> Iterator[ClockCohort]:
        return iter(self._by_key.values())

    def reading(self, state: StreamState) -> Iterator[ClockCohort]:
        """The cohorts whose clocks read ``state``."""
        return (cohort for cohort in self._by_key.values() if state in cohort.streams)
