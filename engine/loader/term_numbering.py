"""The dictionary of a streamed load, built one piece of input at a time.

A load that holds every term's spelling in memory, or re-sorts the whole
dictionary for each piece, grows with the input. Here a term is numbered in
the order it is first met (IDs from 1), its spelling is appended to the
strings file on disk at once, and only fixed-size figures stay in memory per
term: its hash, its ID, a second hash that tells two terms sharing the
first apart, its kind code and the end of its spelling. The hash -> ID
lookup is a few sorted levels (a small level is merged into the one before
it once it is a quarter of its size), so a piece costs a search per level
and the merges add up to O(n log n) over the load, not O(n) per piece.

:meth:`TermNumbering.finish` writes the term files of ``engine.store.layout``
with a ``hash_ids`` array (IDs are not hash ranks), which
``TermArrays.open`` maps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from engine.rdf import arrow_positions, spelling_kinds, spelling_numbers, string_buffers
from engine.store.layout import HASH_IDS, STRINGS
from engine.store.term_hash import CHECK_SEED, hash_strings


class HashCollision(ValueError):
    """Two different terms share a 64-bit hash: the store cannot number them."""


class _Growing:
    """A NumPy array appended to in pieces, read by index (capacity doubles)."""

    def __init__(self, dtype: np.dtype) -> None:
        self._data = np.zeros(1024, dtype=dtype)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        end = self.size + len(values)
        if end > len(self._data):
            grown = np.zeros(max(end, 2 * len(self._data)), dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : end] = values
        self.size = end

    @property
    def values(self) -> np.ndarray:
        return self._data[: self.size]


class TermNumbering:
    """Terms -> IDs for a load, its spellings written to ``strings_path`` as they come."""

    def __init__(self, strings_path: Path) -> None:
        self._strings = open(strings_path, "wb")  # noqa: SIM115 -- closed by finish()
        self._strings_path = strings_path
        #: sorted (hashes, ids) levels, largest first
        self._levels: list[tuple[np.ndarray, np.ndarray]] = []
        self._checks = _Growing(np.dtype(np.int64))  # by ID - 1
        self._ends = _Growing(np.dtype(np.int64))  # end of each spelling in the strings file
        self._kinds = _Growing(np.dtype(np.uint8))
        self._numeric_ids: list[np.ndarray] = []
        self._numeric_values: list[np.ndarray] = []
        self._written = 0

    def __len__(self) -> int:
        return self._ends.size

    def encode(self, terms: pa.Array) -> np.ndarray:
        """IDs of distinct N-Triples spellings (the store's spelling), numbering the new ones."""
        offsets, data = string_buffers(terms)
        hashes = hash_strings(data, offsets)
        checks = hash_strings(data, offsets, CHECK_SEED)
        ids = self._find(hashes)
        found = np.flatnonzero(ids)
        if len(found) and np.any(self._checks.values[ids[found] - 1] != checks[found]):
            at = int(found[self._checks.values[ids[found] - 1] != checks[found]][0])
            raise HashCollision(f"two different terms share a 64-bit hash; the store cannot number "
                                f"{terms[at].as_py()}")
        new = np.flatnonzero(ids == 0)
        if len(new):
            ids[new] = self._add(terms.take(arrow_positions(new)), hashes[new], checks[new])
        return ids

    def _find(self, hashes: np.ndarray) -> np.ndarray:
        ids = np.zeros(len(hashes), dtype=np.int64)
        for level_hashes, level_ids in self._levels:
            at = np.minimum(np.searchsorted(level_hashes, hashes), len(level_hashes) - 1)
            hit = level_hashes[at] == hashes
            ids[hit] = level_ids[at[hit]]
        return ids

    def _add(self, terms: pa.Array, hashes: np.ndarray, checks: np.ndarray) -> np.ndarray:
        order = np.argsort(hashes, kind="stable")
        if len(hashes) > 1 and np.any(hashes[order][1:] == hashes[order][:-1]):
            raise HashCollision("two different terms share a 64-bit hash; the store cannot number them")
        first = len(self) + 1
        ids = np.arange(first, first + len(hashes), dtype=np.int64)
        offsets, data = string_buffers(terms)
        self._strings.write(memoryview(data))
        self._ends.extend(self._written + offsets[1:])
        self._written += int(offsets[-1])
        self._kinds.extend(spelling_kinds(offsets, data))
        self._checks.extend(checks)
        at, values = spelling_numbers(terms)
        self._numeric_ids.append(np.asarray(at, dtype=np.int64) + first)
        self._numeric_values.append(np.asarray(values, dtype=np.float64))
        self._levels.append((hashes[order], ids[order]))
        while len(self._levels) > 1 and 4 * len(self._levels[-1][0]) >= len(self._levels[-2][0]):
            (h1, i1), (h2, i2) = self._levels.pop(), self._levels.pop()
            merged = np.concatenate([h2, h1])
            by_hash = np.argsort(merged, kind="stable")  # two sorted runs: a linear merge
            self._levels.append((merged[by_hash], np.concatenate([i2, i1])[by_hash]))
        return ids

    def finish(self, directory: Path) -> int:
        """Write the term files into ``directory`` (where ``strings_path``
        already is); returns the bytes of spellings."""
        self._strings.close()
        directory.mkdir(parents=True, exist_ok=True)
        if self._strings_path != directory / STRINGS:
            self._strings_path.replace(directory / STRINGS)
        hashes, ids = self._levels[0] if len(self._levels) == 1 else self._merged()
        n = len(self)
        id_type = np.int32 if n < 2**31 - 1 else np.int64
        np.save(directory / "hashes.npy", hashes)
        np.save(directory / f"{HASH_IDS}.npy", ids.astype(id_type))
        np.save(directory / "offsets.npy", np.concatenate([[0], self._ends.values]).astype(np.int64))
        np.save(directory / "kinds.npy", np.concatenate([[0], self._kinds.values]).astype(np.uint8))
        numeric_ids = np.concatenate([np.zeros(0, np.int64), *self._numeric_ids])
        numeric_values = np.concatenate([np.zeros(0), *self._numeric_values])
        order = np.argsort(numeric_ids, kind="stable")
        np.save(directory / "numeric_ids.npy", numeric_ids[order])
        np.save(directory / "numeric_values.npy", numeric_values[order])
        return self._written

    def _merged(self) -> tuple[np.ndarray, np.ndarray]:
        if not self._levels:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        hashes = np.concatenate([h for h, _ in self._levels])
        order = np.argsort(hashes, kind="stable")
        return hashes[order], np.concatenate([i for _, i in self._levels])[order]

    def close(self) -> None:
        """Give up: close the strings file (the caller removes the directory)."""
        self._strings.close()
