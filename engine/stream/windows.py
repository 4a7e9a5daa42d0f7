"""Window arithmetic of SEMANTICS.md.

A time window with RANGE r and STEP s closes at ``t = k*s`` (k an integer,
aligned to the epoch) and holds the items with ``t - r <= ts < t``. A count
window ``[TRIPLES n]`` tumbles every n triples of its stream.
"""

from __future__ import annotations

from engine.stream.errors import BadRegistration


def first_window_after(watermark: int, step: int) -> int:
    """Index of the first window that closes strictly after ``watermark``."""
    return watermark // step + 1


def first_window_holding(timestamp: int, step: int) -> int:
    """Index of the earliest window whose interval holds ``timestamp`` (it
    closes after it: the item at exactly ``k*s`` belongs to window k+1)."""
    return timestamp // step + 1


def common_step(windows) -> tuple[int | None, int | None]:
    """``(step_ms, triples)`` shared by all windows of one query.

    One query fires on one clock: all its time windows must share their STEP
    (ranges may differ), and a count window must be the query's only window."""
    counts = [w for w in windows if w.triples is not None]
    if counts:
        if len(windows) > 1:
            raise BadRegistration("a [TRIPLES n] window must be the only window of its query")
        return None, counts[0].triples
    steps = {w.step_ms for w in windows}
    if len(steps) != 1:
        raise BadRegistration(
            f"all windows of one query must share their STEP; got {sorted(steps)} ms"
        )
    return steps.pop(), None
