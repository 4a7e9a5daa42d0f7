"""Window arithmetic of SEMANTICS.md.

A time window with RANGE r and STEP s closes at ``t = k*s`` (k an integer,
aligned to the epoch) and holds the items with ``t - r <= ts < t``. A count
window ``[TRIPLES n]`` tumbles every n triples of its stream.

The windows of one query may have different STEPs: the query then
evaluates at every close of any of its windows (its *instants*), each window
holding its latest window closed by then (:func:`latest_close`). The
instants are multiples of the STEPs' greatest common divisor, the query's
clock *unit*; with one STEP the unit is that STEP and the instants are all
its multiples.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import gcd

from engine.stream.errors import BadRegistration


def count_of(windows: Sequence) -> int | None:
    """The ``n`` of a query's count window, None for time windows. A count
    window must be its query's only window: it closes by triples, time
    windows by time, and SEMANTICS.md defines no instant where both close."""
    counts = [w for w in windows if w.triples is not None]
    if not counts:
        return None
    if len(windows) > 1:
        raise BadRegistration("a [TRIPLES n] window must be the only window of its query")
    return counts[0].triples


def clock_unit(steps: Sequence[int]) -> int:
    """The greatest common divisor of the STEPs: every instant is a multiple of it."""
    return gcd(*steps)


def next_instant_after(time_ms: int, steps: Sequence[int]) -> int:
    """The first close of any window strictly after ``time_ms``: the first
    instant that follows a watermark, and the first that holds an item at
    ``time_ms`` (an item exactly at a close belongs to the next window)."""
    return min((time_ms // step + 1) * step for step in steps)


def latest_close(instant: int, step: int) -> int:
    """The close of the latest window of STEP ``step`` that closes at or before ``instant``."""
    return instant // step * step


def closes_between(after_ms: int, until_ms: int, steps: Sequence[int]) -> int:
    """How many closes of windows of these (distinct) STEPs fall in
    ``(after_ms, until_ms]``, an instant where windows of two STEPs close
    counted once per STEP (a bound on the instants, exact for one STEP)."""
    return sum(max(0, until_ms // step - after_ms // step) for step in set(steps))
