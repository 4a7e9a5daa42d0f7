"""One predicate's neighbour lists, read one vertex at a time: the readers
:func:`engine.store.graph.neighbour_reader` hands out for a predicate, as
objects that also name their arrays.

Why objects rather than closures: a property-path search that steps a
deep, thin graph node by node (a chain 100,000 links deep) is bound by the
interpreter, so :mod:`engine.sparql.exec.closure_kernel` (compiled C) walks
the same arrays itself; :meth:`kernel_layout` tells it where they are.
Called from Python, a reader reads a vertex's list through memoryviews,
whose items are Python ints.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import numpy as np

#: a short list's end is looked for this close to its start first
_NEAR = 8

#: :meth:`KeyedLists.kernel_layout`'s kind
KEYED = 0
#: :meth:`PairLists.kernel_layout`'s kind
PAIRED = 1


class KeyedLists:
    """A :class:`~engine.store.memory_graph.MemoryGraph`'s PSO or POS order:
    the vertex's list is the rows whose key is ``predicate << 32 | vertex``
    (a binary search among the predicate's rows)."""

    __slots__ = ("keys", "third", "high", "first", "last", "_keys", "_third")

    def __init__(self, keys: np.ndarray, third: np.ndarray, predicate: int) -> None:
        self.keys, self.third, self.high = keys, third, predicate << 32
        self._keys, self._third = memoryview(keys), memoryview(third)
        # the predicate's rows
        self.first = bisect_left(self._keys, self.high)
        self.last = bisect_left(self._keys, self.high + (1 << 32))

    def __call__(self, vertex: int) -> Sequence[int]:
        if vertex <= 0:
            return ()
        keys, key, last = self._keys, self.high | vertex, self.last
        lo = bisect_left(keys, key, self.first, last)
        if lo < last - _NEAR:  # most lists are short: look for the end near the start first
            hi = bisect_right(keys, key, lo, lo + _NEAR)
            if hi == lo + _NEAR:
                hi = bisect_right(keys, key, hi, last)
        else:
            hi = bisect_right(keys, key, lo, last)
        return self._third[lo:hi]

    def kernel_layout(self) -> tuple | None:
        """``(KEYED, keys, third, first, last, high)`` as the kernel reads them (int64)."""
        if self.keys.dtype != np.int64 or self.third.dtype != np.int64:
            return None
        return KEYED, self.keys, self.third, self.first, self.last, self.high


class PairLists:
    """One shard of a :class:`~engine.store.compact_graph.CompactGraph`'s
    adjacency: the vertex's (predicate, list) pairs are sorted by predicate,
    so a binary search among them finds the predicate's list. IDs added after
    the load have no pairs here."""

    __slots__ = ("arrays", "predicate", "_views")

    def __init__(self, vertex_offsets: np.ndarray, pair_predicates: np.ndarray,
                 pair_offsets: np.ndarray, neighbours: np.ndarray, predicate: int) -> None:
        self.arrays = (vertex_offsets, pair_predicates, pair_offsets, neighbours)
        self.predicate = predicate
        self._views = tuple(memoryview(a) for a in self.arrays)

    def __call__(self, vertex: int) -> Sequence[int]:
        vo, pp, po, nb = self._views
        if 0 < vertex < len(vo) - 1:
            hi = vo[vertex + 1]
            at = bisect_left(pp, self.predicate, vo[vertex], hi)
            if at < hi and pp[at] == self.predicate:
                return nb[po[at]:po[at + 1]]
        return ()

    def kernel_layout(self) -> tuple | None:
        """``(PAIRED, vertex_offsets, pair_predicates, pair_offsets, neighbours, predicate)``
        as the kernel reads them (int32, the adjacency's width below 2**31 edges)."""
        if any(a.dtype != np.int32 for a in self.arrays) or self.predicate >= 2**31:
            return None
        return (PAIRED, *self.arrays, self.predicate)
