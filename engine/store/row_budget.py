"""A bound on the rows one step of a query may produce, and the query's
checkpoint inside long steps.

Every expansion of rows (a pattern's matches, a join's pairs, a cartesian
product) computes how many rows it will make before it allocates them, so
that count is checked here first: a query whose step would exceed the budget
stops with :class:`RowBudgetExceeded` instead of taking the server's memory
(a cartesian product over a million triples grows by gigabytes a second).
The budget is per query, set by whoever runs it (:func:`row_budget`) in a
context variable, so the store and executor functions need no extra
argument; without one there is no bound (the stream engine's windows).

The same places are where a long step spends its time (a join's pairs, a
path's next frontier), so the query's checkpoint (a callable that raises
when its time limit has passed or its client left) is called there too:
a cancelled query stops inside a step, not only between operators.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_budget: ContextVar[int | None] = ContextVar("row_budget", default=None)
_checkpoint: ContextVar[Callable[[], None] | None] = ContextVar("checkpoint", default=None)


class RowBudgetExceeded(Exception):
    """A step of the query would have produced more rows than allowed."""

    def __init__(self, rows: int, budget: int) -> None:
        super().__init__(f"a step of the query would hold {rows:,} rows; the limit is {budget:,}")
        self.rows = rows
        self.budget = budget


def check_rows(rows: int) -> None:
    """Raise :class:`RowBudgetExceeded` if ``rows`` is over the current budget,
    or whatever the query's checkpoint raises."""
    budget = _budget.get()
    if budget is not None and rows > budget:
        raise RowBudgetExceeded(rows, budget)
    checkpoint()


def over_budget(rows: int) -> bool:
    """Would ``rows`` exceed the current budget? (A step that can still
    narrow its rows cheaply asks before :func:`check_rows` refuses them.)"""
    budget = _budget.get()
    return budget is not None and rows > budget


def current_budget() -> int | None:
    """The current query's row budget (None: no bound), for a compiled step
    that counts its rows before it makes them."""
    return _budget.get()


def checkpoint() -> None:
    """Call the current query's checkpoint, if any (it raises to stop the query)."""
    check = _checkpoint.get()
    if check is not None:
        check()


@contextmanager
def row_budget(limit: int | None, check: Callable[[], None] | None = None) -> Iterator[None]:
    """Bound every step run inside the block to ``limit`` rows (None: no
    bound) and call ``check`` at each expansion (None: none)."""
    budget, checking = _budget.set(limit), _checkpoint.set(check)
    try:
        yield
    finally:
        _budget.reset(budget)
        _checkpoint.reset(checking)
