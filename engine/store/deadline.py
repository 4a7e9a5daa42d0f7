"""When an evaluation must stop: its time limit, and the server's shutdown.

Every evaluation (a query, an update, a window of a continuous query)
runs inside :func:`~engine.store.row_budget.row_budget` with a checkpoint
that long steps call (:func:`~engine.store.row_budget.checkpoint`). The
checkpoint made here raises :class:`QueryCancelled` once the evaluation's
time limit has passed, or once the server's shutdown has run out of grace
(:class:`Shutdown`): the evaluation stops inside its step, its transaction
is aborted and its locks are released, so that no single request holds the
store, the streams or the process for longer than its limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: why an evaluation was stopped: its time limit, the server stopping, or its caller's own test
REASONS = ("time_limit", "shutdown", "cancelled")


class QueryCancelled(Exception):
    """The evaluation was stopped from outside; ``reason`` says why (one of
    :data:`REASONS`; the HTTP layer tells a client that left apart itself)."""

    status = 503

    def __init__(self, message: str = "query cancelled", reason: str = "cancelled") -> None:
        super().__init__(message)
        self.reason = reason


class Shutdown:
    """The server's shutdown as every evaluation's checkpoint sees it.

    :meth:`begin` (called from a signal handler, so it only stores a number)
    gives the evaluations running then ``grace`` more seconds; once they are
    over, every checkpoint raises :class:`QueryCancelled` (reason
    ``"shutdown"``), so each evaluation stops where it is and frees its
    worker thread and its locks before the process exits."""

    def __init__(self) -> None:
        self._deadline: float | None = None

    def begin(self, grace: float) -> None:
        """The server is stopping: evaluations still running in ``grace`` seconds stop then."""
        if self._deadline is None:
            self._deadline = time.monotonic() + max(grace, 0.0)

    @property
    def begun(self) -> bool:
        return self._deadline is not None

    def overdue(self) -> bool:
        """Has the grace period run out (evaluations must stop now)?"""
        deadline = self._deadline
        return deadline is not None and time.monotonic() >= deadline


def deadline_check(seconds: float | None, shutdown: Shutdown | None = None) -> Callable[[], None] | None:
    """A checkpoint for an evaluation that starts now: it raises
    :class:`QueryCancelled` once ``seconds`` have passed (None: no time
    limit) or ``shutdown`` is overdue. None when there is nothing to check."""
    if seconds is None and shutdown is None:
        return None
    deadline = None if seconds is None else time.monotonic() + seconds

    def check() -> None:
        if shutdown is not None and shutdown.overdue():
            raise QueryCancelled("the server is shutting down", "shutdown")
        if deadline is not None and time.monotonic() > deadline:
            raise QueryCancelled(f"it ran longer than the time limit of {seconds:g} s", "time_limit")

    return check
