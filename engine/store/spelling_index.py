"""The overlay's terms by spelling hash, in arrays.

Terms met in stream items that the compact arrays do not hold live in the
overlay, a dictionary keyed by term objects: finding one there costs a parse
and a Python hash per term. A stream repeats its new terms from batch to
batch (a post, then its likes), so the overlay IDs that batches encoded are
also kept here under two hashes of their spelling (the store's and a second
seed's: two spellings that agree on both are taken to be one, as the loader
does), sorted, and a whole batch's spellings are found with one binary
search. An ID the overlay frees is forgotten (its entry stays in the sorted
arrays until the next rebuild, but no longer matches). A number or boolean
a cluster coordinator restored into the overlay is indexed too: it keeps that
ID rather than getting a value ID (``engine.rdf.value_ids``).
"""

from __future__ import annotations

import numpy as np


class SpellingIndex:
    """Overlay IDs by ``(hash, check)`` of their canonical spelling."""

    def __init__(self) -> None:
        #: sorted hashes and the ID of each; stale entries are filtered on lookup
        self._hashes = np.zeros(0, dtype=np.int64)
        self._ids = np.zeros(0, dtype=np.int64)
        #: per overlay ID, the hashes it is indexed under (0: not indexed)
        self._hash_of = np.zeros(1024, dtype=np.int64)
        self._check_of = np.zeros(1024, dtype=np.int64)
        self._live = 0
        #: whether restored terms are indexed (only then must value IDs be checked here)
        self.restored = False

    def find(self, hashes: np.ndarray, checks: np.ndarray) -> np.ndarray:
        """The overlay ID of each spelling (0: not indexed)."""
        if not len(self._hashes) or not len(hashes):
            return np.zeros(len(hashes), dtype=np.int64)
        at = np.minimum(np.searchsorted(self._hashes, hashes), len(self._hashes) - 1)
        ids = self._ids[at]
        hit = (self._hashes[at] == hashes) & (self._hash_of[ids] == hashes) & (self._check_of[ids] == checks)
        return np.where(hit, ids, 0)

    def add(self, ids: np.ndarray, hashes: np.ndarray, checks: np.ndarray, restored: bool = False) -> None:
        """Index overlay ``ids`` (distinct, not indexed yet) under their spellings'
        hashes; ``restored``: terms a restart gave back their IDs."""
        if not len(ids):
            return
        self.restored |= restored
        top = int(ids.max())
        if top >= len(self._hash_of):
            size = max(top + 1, 2 * len(self._hash_of))
            self._hash_of = np.concatenate([self._hash_of, np.zeros(size - len(self._hash_of), np.int64)])
            self._check_of = np.concatenate([self._check_of, np.zeros(size - len(self._check_of), np.int64)])
        self._hash_of[ids] = hashes
        self._check_of[ids] = checks
        self._live += len(ids)
        if len(self._hashes) > 2 * self._live:  # mostly forgotten entries: rebuild from the live ones
            live = np.flatnonzero(self._hash_of)
            hashes, ids, self._hashes, self._ids = self._hash_of[live], live, self._hashes[:0], self._ids[:0]
        merged = np.concatenate([self._hashes, hashes])
        order = np.argsort(merged, kind="stable")
        self._hashes, self._ids = merged[order], np.concatenate([self._ids, ids])[order]

    def forget(self, ids: list[int]) -> None:
        """The overlay freed ``ids``: their entries no longer match."""
        known = np.asarray(ids, dtype=np.int64)
        known = known[known < len(self._hash_of)]
        known = known[self._hash_of[known] != 0]
        self._hash_of[known] = 0
        self._check_of[known] = 0
        self._live -= len(known)
