"""A hash set of int64 keys with vectorised lookups: the existence check of a
join that closes a cycle.

A cyclic join (LSBench L6: a friend likes a post in a channel the user
subscribes to) ends with a pattern whose subject and object are both bound,
hundreds of thousands of times per window. Answering that through the sorted
neighbour lists costs a sort of the probe keys and a binary search each;
an open-addressing table answers each probe in about one random read. Keys
are ``subject << 32 | object`` of one predicate (IDs are below 2**31), so a
table is built once per predicate of an immutable graph, on first use.

Lookups and inserts run as NumPy passes over all keys still looking (linear
probing, at most half the slots filled, so a few passes).
"""

from __future__ import annotations

import numpy as np

#: odd multiplier of the multiplicative hash (any odd 64-bit constant spreads keys)
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
#: an empty slot (keys are never negative)
_EMPTY = -1


class KeySet:
    """A set of non-negative int64 keys, immutable (see :class:`GrowingKeySet`)."""

    def __init__(self, keys: np.ndarray) -> None:
        keys = np.asarray(keys, dtype=np.int64)
        bits = max(4, (2 * len(keys)).bit_length())
        self._shift = np.uint64(64 - bits)
        self._mask = (1 << bits) - 1
        self._table = np.full(1 << bits, _EMPTY, dtype=np.int64)
        self._place(keys)
        self._size = len(keys)

    def _place(self, keys: np.ndarray) -> None:
        """Put distinct keys, none of them in the table yet, into free slots."""
        table = self._table
        slots = self._home(keys)
        waiting = np.arange(len(keys))
        while len(waiting):
            at = slots[waiting]
            free = table[at] == _EMPTY
            # every key aiming at a free slot is written there and one write
            # stays; the keys are distinct, so the one that reads back its own
            # key took the slot and the others move on (no sort to pick a winner)
            table[at[free]] = keys[waiting[free]]
            placed = free & (table[at] == keys[waiting])
            waiting = waiting[~placed]
            slots[waiting] = (slots[waiting] + 1) & self._mask

    def __len__(self) -> int:
        return self._size

    def _home(self, keys: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return ((keys.view(np.uint64) * _MULTIPLIER) >> self._shift).astype(np.int64)

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Boolean mask: is each key in the set? (Negative keys never are.)"""
        keys = np.asarray(keys, dtype=np.int64)
        found = np.zeros(len(keys), dtype=bool)
        waiting = np.flatnonzero(keys >= 0)
        slots = self._home(keys)
        while len(waiting):
            held = self._table[slots[waiting]]
            hit = held == keys[waiting]
            found[waiting[hit]] = True
            waiting = waiting[~hit & (held != _EMPTY)]
            slots[waiting] = (slots[waiting] + 1) & self._mask
        return found


class GrowingKeySet(KeySet):
    """A key set that grows: the visited (start, node) pairs of a property path
    searched from many starts at once, one level of the search at a time.

    Each :meth:`add` costs about its keys' count (the table doubles once half
    full, so rehashing is amortised), where a sorted array merged with each
    level would cost the whole set per level: quadratic over a deep search."""

    def __init__(self) -> None:
        super().__init__(np.zeros(0, dtype=np.int64))

    def add(self, keys: np.ndarray) -> np.ndarray:
        """Insert distinct non-negative keys; returns the mask of those that
        were not in the set before."""
        fresh = ~self.contains(keys)
        new = keys[fresh]
        if 2 * (self._size + len(new)) > len(self._table):
            held = self._table[self._table != _EMPTY]
            KeySet.__init__(self, np.concatenate([held, new]))
        else:
            self._place(new)
            self._size += len(new)
        return fresh
