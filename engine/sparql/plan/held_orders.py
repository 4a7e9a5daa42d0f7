"""Orders of a continuous query's patterns, made once and kept across its windows.

A registered query asks the planner about the same patterns at every window,
over graphs made afresh for that window: without a holder each window pays
the cost model's counts again (the order cache of the BGP operator is keyed
by graph identity, and a window's graphs are new every time). A
:class:`HeldOrders` belongs to one query and keys an order by what the
planner decides on other than the data: the patterns, which of them share a
graph, and the variables already bound.

When to plan again is Strider's trigger (Ren and Curé, ISWC 2017, sect.
4.1): adaptive re-optimisation is set off by the input's workload moving past
a threshold, not run at every window. Here the workload is, per graph the
patterns read, its size and the rows its windows hold (plus the rows the
patterns extend); an order is kept while each of them stays within a factor
:data:`REPLAN_FACTOR` of its value when the order was made, and an empty
input that fills (or the reverse) always re-plans. Strider then plans
forward (F-AQP, at the window that set the trigger off) or backward
(B-AQP, for the next window, from this one's statistics) depending on the
fraction of the step the evaluation takes; a plan here costs well under a
millisecond, so it is made forward, at the window that needs it. An order
only decides the work, never the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from engine.sparql.algebra import TriplePattern
from engine.store import Graph

#: how far (either way) a workload figure moves before the order is made again
REPLAN_FACTOR = 2.0
#: orders one query keeps (one per BGP shape it evaluates; cleared when full)
ORDERS_KEPT = 64


@dataclass
class _Held:
    order: list[TriplePattern]
    workload: tuple[int, ...]


def workload(graph_of: Mapping[TriplePattern, Graph], rows: int) -> tuple[int, ...]:
    """The figures the trigger watches: ``rows`` extended, and per distinct
    graph (in the patterns' order) its size and its windows' rows."""
    figures = [rows]
    seen: set[int] = set()
    for graph in graph_of.values():
        if id(graph) not in seen:
            seen.add(id(graph))
            figures.extend((len(graph), getattr(graph, "window_rows", 0)))
    return tuple(figures)


def layout(graph_of: Mapping[TriplePattern, Graph]) -> tuple[int, ...]:
    """Which patterns share a graph: per pattern, the position of the first
    pattern read in the same graph (an incremental window reads the entering
    batches for one pattern and the whole window for the others)."""
    first: dict[int, int] = {}
    return tuple(first.setdefault(id(graph), i) for i, graph in enumerate(graph_of.values()))


def moved(before: tuple[int, ...], now: tuple[int, ...]) -> bool:
    """Whether a workload figure moved past the trigger's threshold."""
    for old, new in zip(before, now, strict=True):
        if (old == 0) != (new == 0):
            return True
        if old and not (old / REPLAN_FACTOR <= new <= old * REPLAN_FACTOR):
            return True
    return False


class HeldOrders:
    """One continuous query's BGP orders, re-planned by Strider's trigger.

    ``plans`` counts the orders made, ``replans`` those made again because
    the workload moved, ``changed`` the re-plans that chose another order
    (how often the trigger was worth its cost)."""

    def __init__(self) -> None:
        self._held: dict[tuple, _Held] = {}
        self.plans = 0
        self.replans = 0
        self.changed = 0

    def order(self, graph_of: Mapping[TriplePattern, Graph], bound: frozenset[str], rows: int,
              plan: Callable[[], list[TriplePattern]]) -> list[TriplePattern]:
        """The held order of the patterns of ``graph_of`` extending ``rows``
        rows that bind ``bound``; ``plan`` makes one when there is none, or
        when the workload moved past the threshold."""
        key = (tuple(graph_of), layout(graph_of), bound)
        now = workload(graph_of, rows)
        held = self._held.get(key)
        if held is not None and not moved(held.workload, now):
            return held.order
        order = plan()
        self.plans += 1
        if held is not None:
            self.replans += 1
            self.changed += order != held.order
        elif len(self._held) >= ORDERS_KEPT:
            self._held.clear()
        self._held[key] = _Held(order, now)
        return order
