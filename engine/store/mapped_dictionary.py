"""The term dictionary of a loaded store, memory-mapped.

Parsing ten million term strings when a server starts would take longer than
the rest of the open, so nothing is parsed up front: the strings stay in one
mapped blob and a term is decoded when a result needs it. Term IDs are
``1 + rank of the term's hash`` (see ``engine.store.term_hash``), so the
sorted hash array is also the lookup index: hash the term's N-Triples
spelling, binary-search, compare the stored string.

Per term the store keeps 8 bytes of hash, 8 of string offset and 1 of kind;
numeric values only for numeric literals (ID + float64). Terms
first seen after the load (updates, streams) go to an overlay, an ordinary
:class:`engine.rdf.MemoryTermDictionary` whose IDs are shifted past the loaded
ones; this class implements the whole :class:`engine.rdf.TermDictionary`
protocol, transient terms included (loaded terms are simply never freed).
"""

from __future__ import annotations

import mmap
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.rdf import MemoryTermDictionary, Term, format_term, parse_term
from engine.store.term_hash import term_hash

#: term strings resolved to IDs kept per store (query constants repeat)
LOOKUP_CACHE = 65536


class MappedTermDictionary:
    """Terms <-> IDs over a loaded store's term files, plus an overlay."""

    def __init__(self, directory: Path) -> None:
        load = lambda name: np.load(directory / f"{name}.npy", mmap_mode="r")  # noqa: E731
        self._hashes = load("hashes")
        self._offsets = load("offsets")
        self._base_kinds = load("kinds")
        self._numeric_ids = load("numeric_ids")
        self._numeric_values = load("numeric_values")
        self._base = len(self._hashes)
        with open(directory / "strings.bin", "rb") as f:
            size = f.seek(0, 2)
            self._blob = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self._overlay = MemoryTermDictionary()
        self._find = lru_cache(maxsize=LOOKUP_CACHE)(self._find_spelling)

    def __len__(self) -> int:
        return self._base + len(self._overlay)

    # ----------------------------------------------------------------- lookup
    def _spelling(self, term_id: int) -> str:
        return self._blob[int(self._offsets[term_id - 1]) : int(self._offsets[term_id])].decode("utf-8")

    def _find_spelling(self, nt: str) -> int:
        h = term_hash(nt)
        at = int(np.searchsorted(self._hashes, h))
        if at < self._base and self._hashes[at] == h and self._spelling(at + 1) == nt:
            return at + 1
        return 0

    def _in_base(self, term: Term) -> int:
        return self._find(format_term(term)) if self._base else 0

    def _shift(self, overlay_id: int) -> int:
        return overlay_id + self._base if overlay_id else 0

    def _overlay_ids(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        return ids[ids > self._base] - self._base

    def lookup(self, term: Term) -> int:
        """The ID of ``term`` or 0 when the dictionary has never seen it."""
        return self._shift(self._overlay.lookup(term)) or self._in_base(term)

    def lookup_pinned(self, term: Term) -> int:
        """Like :meth:`lookup`, but 0 for an overlay ID that may be freed (the
        loaded terms are all permanent)."""
        return self._shift(self._overlay.lookup_pinned(term)) or self._in_base(term)

    def encode(self, term: Term) -> int:
        """The ID of ``term``, assigning an overlay ID if it is not known yet."""
        return self._in_base(term) or self._shift(self._overlay.encode(term))

    def encode_transient(self, term: Term) -> int:
        """Like :meth:`encode`; a new overlay ID may be freed again (see release)."""
        return self._in_base(term) or self._shift(self._overlay.encode_transient(term))

    def encode_many(self, terms: list[Term]) -> np.ndarray:
        """IDs for a list of terms as an int64 array."""
        encode = self.encode
        return np.fromiter((encode(t) for t in terms), dtype=np.int64, count=len(terms))

    def pin(self, ids: np.ndarray) -> None:
        """Make overlay IDs permanent (loaded terms always are)."""
        self._overlay.pin(self._overlay_ids(ids))

    def hold(self, ids: np.ndarray) -> None:
        """One more reference to each distinct overlay ID."""
        self._overlay.hold(self._overlay_ids(ids))

    def release(self, ids: np.ndarray) -> int:
        """Drop references to overlay IDs; loaded terms are never freed."""
        return self._overlay.release(self._overlay_ids(ids))

    # ----------------------------------------------------------------- decode
    def decode(self, term_id: int) -> Term | None:
        """The term for an ID (None for 0, the unbound marker)."""
        if term_id <= 0:
            return None
        if term_id <= self._base:
            return parse_term(self._spelling(term_id))
        return self._overlay.decode(term_id - self._base)

    def decode_many(self, ids: np.ndarray) -> list[Term | None]:
        """Terms for a column of IDs; base strings are sliced in one gather."""
        ids = np.asarray(ids, dtype=np.int64)
        base = (ids > 0) & (ids <= self._base)
        if not base.all():
            decode = self.decode
            return [decode(i) for i in ids.tolist()]
        starts = self._offsets[ids - 1].tolist()
        ends = self._offsets[ids].tolist()
        blob = self._blob
        return [parse_term(blob[a:b].decode("utf-8")) for a, b in zip(starts, ends)]

    # ------------------------------------------------------------ side arrays
    def kinds(self, ids: np.ndarray) -> np.ndarray:
        """Kind code (KIND_IRI, KIND_BNODE, KIND_LITERAL; 0 for unbound) per ID."""
        ids = np.asarray(ids, dtype=np.int64)
        over = ids > self._base
        out = self._base_kinds[np.where(over, 0, ids)]
        if over.any():
            out[over] = self._overlay.kinds(ids[over] - self._base)
        return out

    def numbers(self, ids: np.ndarray) -> np.ndarray:
        """Numeric value per ID, NaN for non-numeric terms."""
        ids = np.asarray(ids, dtype=np.int64)
        out = np.full(len(ids), np.nan)
        nid = self._numeric_ids
        if len(nid):
            at = np.minimum(np.searchsorted(nid, ids), len(nid) - 1)
            hit = nid[at] == ids
            out[hit] = self._numeric_values[at[hit]]
        over = ids > self._base
        if over.any():
            out[over] = self._overlay.numbers(ids[over] - self._base)
        return out
