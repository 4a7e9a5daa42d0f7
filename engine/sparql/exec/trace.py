"""What each operator of one execution did: calls, rows out, time, and the
rows after each triple pattern it explored. EXPLAIN with ``analyze`` reads it.

A :class:`Trace` is set on the execution context only when asked for
(:meth:`engine.api.Store.explain`); otherwise the executor pays one
attribute test per operator and per explored pattern.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.sparql import algebra as A
from engine.sparql.exec.solutions import Solutions


@dataclass
class Record:
    """One operator's totals over every time it ran (a GRAPH ?g runs its
    pattern once per graph); ``seconds`` include the operators it ran."""

    calls: int = 0
    rows: int = 0
    seconds: float = 0.0
    #: rows after each triple pattern explored inside this operator, summed over its calls
    steps: dict[A.TriplePattern, int] = field(default_factory=dict)


class Trace:
    """Records keyed by the identity of the algebra node that ran."""

    def __init__(self) -> None:
        self.records: dict[int, Record] = {}
        self._running: list[Record] = []

    def run(self, node: A.Pattern, operator: Callable[..., Solutions], cx: object) -> Solutions:
        """``operator(node, cx)``, counted, timed and named as the current operator."""
        record = self.records.setdefault(id(node), Record())
        self._running.append(record)
        started = time.perf_counter()
        try:
            solutions = operator(node, cx)
        finally:
            record.seconds += time.perf_counter() - started
            self._running.pop()
        record.calls += 1
        record.rows += solutions.length
        return solutions

    def explored(self, pattern: A.TriplePattern, rows: int) -> None:
        """The rows there were after extending through ``pattern``, for the operator running."""
        if self._running:
            steps = self._running[-1].steps
            steps[pattern] = steps.get(pattern, 0) + rows
