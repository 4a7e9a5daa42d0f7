"""``p*`` and ``p+``: breadth-first search over ID arrays, in time linear in
the edges it visits.

The search is told how to take one step of the inner path (``p``) two ways:
``many`` for a whole frontier (one vectorised expansion through the store's
neighbour lists, :func:`engine.sparql.exec.paths.reach`), and, when every
link of ``p`` can be read that way, ``one`` for a single node (the graph's
:func:`~engine.store.graph.neighbour_reader`). NumPy costs about a
microsecond per call whatever the array's length, and a level of the search
is a dozen calls, so a frontier at most :data:`NARROW` nodes wide is stepped
node by node in Python (about a microsecond a node) and a wider one as
arrays: a chain 100,000 links deep is 100,000 levels of one node.

Visited sets never cost their size per level (the old search merged a
sorted array with each level: quadratic in the depth):

- from one start, :class:`IdMarks`, a boolean per term ID (IDs are dense),
  read and written by index at both widths, cleared by what was found;
- from many starts at once (``?a p* ?b``, a path inside a sequence), the
  visited ``(start, node)`` pairs in a :class:`~engine.store.key_set.GrowingKeySet`.
  When that frontier narrows to a few starts and stays narrow long enough
  to have cost as much as their answers so far, those starts are finished
  one by one from the start instead (ski rental: at most twice the work).

Every level, and every :data:`CHECK_LEVELS` levels stepped one by one, the
rows found so far go through :func:`~engine.store.row_budget.check_rows`,
which also calls the query's checkpoint: a path longer than the row budget
or the time limit stops inside the search with the same errors as a join.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from engine.sparql.exec.closure_kernel import narrow_levels
from engine.store import EMPTY, check_rows, expand_ranges
from engine.store.distinct_ids import unique_inverse
from engine.store.key_set import GrowingKeySet

#: frontiers at most this wide are stepped node by node (measured in
#: benchmarks/property_paths.py: one node costs about what one NumPy call does)
NARROW = 32
#: the row budget and time limit are checked at least every this many levels stepped one by one
CHECK_LEVELS = 1024
#: neighbour lists longer than this are marked as arrays even in a narrow frontier (a hub)
LONG_LIST = 256
#: a narrow level of the many-start search costs about this many nodes stepped one by one
LEVEL_COST = 40

#: one step of the inner path for a frontier: (frontier position, end node) pairs
StepMany = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
#: one step of the inner path for one node: its end nodes (repeats allowed)
StepOne = Callable[[int], Iterable[int]]


class IdMarks:
    """A boolean per term ID: which nodes a search from one start has reached.

    Allocated zeroed (the kernel hands out zero pages lazily, so only the
    pages of reached IDs are ever touched) and grown when a larger ID shows
    up; :meth:`clear` unmarks what one search marked, so the next start
    reuses it at the cost of its own answer."""

    def __init__(self, size_hint: int) -> None:
        self.array = np.zeros(max(size_hint, 1024), dtype=bool)
        self.view = memoryview(self.array)

    def grow(self, largest: int) -> None:
        """Room for IDs up to ``largest``."""
        if largest >= len(self.array):
            array = np.zeros(max(largest + 1, 2 * len(self.array)), dtype=bool)
            array[: len(self.array)] = self.array
            self.array, self.view = array, memoryview(array)

    def fresh(self, nodes: np.ndarray) -> np.ndarray:
        """The distinct nodes among ``nodes`` (positive IDs) not marked yet; marks them."""
        if not len(nodes):
            return EMPTY
        self.grow(int(nodes.max()))
        nodes = nodes[~self.array[nodes]]
        if len(nodes) > 1:
            nodes = np.unique(nodes)
        self.array[nodes] = True
        return nodes

    def has(self, node: int) -> bool:
        return 0 < node < len(self.array) and bool(self.array[node])

    def clear(self, nodes: np.ndarray) -> None:
        self.array[nodes[nodes > 0]] = False


class Closure:
    """The ``*`` or ``+`` of one inner path in one direction over one graph."""

    def __init__(self, many: StepMany, one: StepOne | None, zero_length: bool, id_hint: int) -> None:
        self.many = many
        self.one = one
        #: ``*`` (each start reaches itself) rather than ``+``
        self.zero_length = zero_length
        self._id_hint = id_hint
        self._marks: IdMarks | None = None
        #: the arrays of ``one``'s hops when the compiled kernel can walk them
        self.layouts = kernel_layouts(one)

    @property
    def marks(self) -> IdMarks:
        if self._marks is None:
            self._marks = IdMarks(self._id_hint)
        return self._marks

    # ------------------------------------------------------------ one start
    def from_one(self, start: int, target: int | None = None, rows_before: int = 0) -> np.ndarray:
        """The distinct nodes the path leads to from ``start``; with
        ``target``, the search stops once it is reached (it is then among
        them). ``rows_before``: rows found by the caller already (the budget
        counts them too)."""
        if start <= 0:  # a term the store has never seen: no edges, only the empty path
            return np.array([start] if self.zero_length else [], dtype=np.int64)
        marks = self.marks
        marks.grow(start)
        reached: list[int] = []
        parts: list[np.ndarray] = []
        if self.zero_length:
            marks.view[start] = True
            reached.append(start)
        frontier: list[int] | np.ndarray = [start]
        found = len(reached)
        try:
            while len(frontier):
                if target is not None and marks.has(target):
                    break
                if self.layouts is not None and len(frontier) <= NARROW:
                    level, frontier = self._compiled_levels(frontier, target)
                    parts.append(level)
                    found += len(level)
                elif self.one is not None and len(frontier) <= NARROW:
                    before = len(reached)
                    frontier = self._narrow_levels(list(frontier), reached, target, rows_before + found)
                    found += len(reached) - before
                else:
                    _, ends = self.many(np.asarray(frontier, dtype=np.int64))
                    frontier = marks.fresh(ends)
                    parts.append(frontier)
                    found += len(frontier)
                check_rows(rows_before + found)
            parts.append(np.array(reached, dtype=np.int64))
            nodes = np.concatenate(parts) if len(parts) > 1 else parts[0]
        except BaseException:
            self._marks = None  # left half marked: the next search starts afresh
            raise
        marks.clear(nodes)
        return nodes

    def _compiled_levels(self, frontier: list[int] | np.ndarray, target: int | None
                         ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_narrow_levels` in C (:mod:`engine.sparql.exec.closure_kernel`), at
        most :data:`CHECK_LEVELS` levels: the nodes reached, and the frontier to go on from."""
        marks = self.marks
        frontier = np.asarray(frontier, dtype=np.int64)
        parts = []
        while True:
            reached, last, need = narrow_levels(self.layouts, marks.array.view(np.uint8), frontier,
                                                target or 0, NARROW, CHECK_LEVELS)
            parts.append(reached)
            if not need:
                return (np.concatenate(parts) if len(parts) > 1 else reached), reached[last:]
            if len(reached):
                frontier = reached[last:]
            marks.grow(need)

    def _narrow_levels(self, frontier: list[int], reached: list[int], target: int | None,
                       rows_before: int) -> list[int]:
        """Levels of at most :data:`NARROW` nodes (``frontier`` is one), one
        node at a time, appending what they reach to ``reached``; returns the
        first wider frontier, or an empty one, or the current one once
        ``target`` is reached.

        The hot loop of a deep, thin search (a chain is one node a level):
        everything it touches per node is a local name. A level finds at most
        :data:`NARROW` nodes before the loop hands over, and a node's list is
        at most :data:`LONG_LIST` long (longer ones are marked as one array),
        so checking the budget and the time every :data:`CHECK_LEVELS` levels
        bounds the work between two checks."""
        one, marks = self.one, self.marks
        view, size = marks.view, len(marks.array)
        first = len(reached)
        countdown = CHECK_LEVELS
        while True:
            level: list[int] = []
            for node in frontier:
                ends = one(node)
                if len(ends) > LONG_LIST:  # a hub: its list as one array
                    level += marks.fresh(np.asarray(ends, dtype=np.int64)).tolist()
                    view, size = marks.view, len(marks.array)
                    continue
                for end in ends:
                    if end >= size:
                        marks.grow(end)
                        view, size = marks.view, len(marks.array)
                    if not view[end]:
                        view[end] = True
                        level.append(end)
            reached += level
            if not level or len(level) > NARROW:
                return level
            frontier = level
            countdown -= 1
            if not countdown:
                check_rows(rows_before + len(reached) - first)
                countdown = CHECK_LEVELS
            if target is not None and 0 < target < size and view[target]:
                return level

    # ------------------------------------------------------------ many starts
    def from_many(self, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(i, node)`` for every distinct node the path leads to from each
        of the distinct ``starts[i]``."""
        if len(starts) <= NARROW:
            return self._one_by_one(starts, np.arange(len(starts), dtype=np.int64), 0)
        index = np.arange(len(starts), dtype=np.int64)
        visited = GrowingKeySet()
        idx_parts: list[np.ndarray] = []
        node_parts: list[np.ndarray] = []
        if self.zero_length:
            visited.add(_pair_keys(index, starts))
            idx_parts.append(index)
            node_parts.append(starts)
        found = len(index) if self.zero_length else 0
        frontier_idx, frontier = index, starts
        narrow_levels = 0
        while len(frontier):
            j, ends = self.many(frontier)
            keys = np.unique(_pair_keys(frontier_idx[j], ends))
            keys = keys[visited.add(keys)]
            frontier_idx, frontier = keys >> 32, keys & 0xFFFFFFFF
            idx_parts.append(frontier_idx)
            node_parts.append(frontier)
            found += len(keys)
            check_rows(found)
            if self.one is None or not len(frontier) or len(frontier) > NARROW:
                narrow_levels = 0
                continue
            narrow_levels += 1
            if narrow_levels * LEVEL_COST >= found:
                # the few starts still exploring: again from their start, one by one
                idx, nodes = np.concatenate(idx_parts), np.concatenate(node_parts)
                rest = np.unique(frontier_idx)
                done = ~np.isin(idx, rest)
                more_idx, more_nodes = self._one_by_one(starts[rest], rest, int(np.count_nonzero(done)))
                idx_parts, node_parts = [idx[done], more_idx], [nodes[done], more_nodes]
                break
        return np.concatenate(idx_parts), np.concatenate(node_parts)

    def _one_by_one(self, starts: np.ndarray, index: np.ndarray, rows_before: int
                    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`from_one` for each start; ``index`` labels each start's rows."""
        idx_parts, node_parts = [], []
        for i, start in zip(index.tolist(), starts.tolist()):
            nodes = self.from_one(start, rows_before=rows_before)
            rows_before += len(nodes)
            idx_parts.append(np.full(len(nodes), i, dtype=np.int64))
            node_parts.append(nodes)
        if not idx_parts:
            return EMPTY, EMPTY
        return np.concatenate(idx_parts), np.concatenate(node_parts)


def kernel_layouts(one: StepOne | None) -> tuple | None:
    """The arrays of each hop of ``one`` (a link, or a sequence of links, whose
    readers name them: :mod:`engine.store.neighbour_lists`), or None when some
    hop is another kind of step (it is then stepped in Python)."""
    hops = getattr(one, "steps", None) or [one]
    layouts = []
    for hop in hops:
        layout_of = getattr(hop, "kernel_layout", None)
        layout = None if layout_of is None else layout_of()
        if layout is None:
            return None
        layouts.append(layout)
    return tuple(layouts)


def _pair_keys(start_idx: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    return (start_idx << 32) | (nodes & 0xFFFFFFFF)


def closure_rows(closure: Closure, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(i, end)`` for each input row ``i``: the closure from ``nodes[i]``.
    A start that occurs in several rows is searched once and its answer
    repeated for each of them."""
    if len(nodes) == 1:
        ends = closure.from_one(int(nodes[0]))
        return np.zeros(len(ends), dtype=np.int64), ends
    distinct, inverse = unique_inverse(nodes)
    inverse = inverse.reshape(-1)
    idx, ends = closure.from_many(distinct)
    if len(distinct) == len(nodes):  # each start in one row: relabel
        row_of = np.empty(len(nodes), dtype=np.int64)
        row_of[inverse] = np.arange(len(nodes), dtype=np.int64)
        return row_of[idx], ends
    order = np.argsort(idx, kind="stable")
    idx, ends = idx[order], ends[order]
    # the answer of distinct start d is at offsets[d]..offsets[d + 1]
    offsets = np.searchsorted(idx, np.arange(len(distinct) + 1))
    rows, pos = expand_ranges(offsets[inverse], offsets[inverse + 1])
    return rows, ends[pos]
