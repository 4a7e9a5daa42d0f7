"""The store's term dictionary: terms in arrays and one string blob.

A Python object per term costs over 200 bytes (236 measured for a
40-character IRI with its dictionary entry); a million-triple graph has
a few hundred thousand terms. Here a term costs its N-Triples spelling in
one blob plus 17-21 bytes of arrays (hash, string offset, kind, and the
hash's ID when IDs are not in hash order), whether the arrays are
memory-mapped from a store written by ``rivulet load`` or built in memory by
a load (:meth:`CompactTermDictionary.encode_spellings`, vectorised: a batch
of spellings is hashed, looked up and appended in whole-array operations).

Nothing is parsed up front: a term is decoded from its spelling when a
result needs it (a bounded cache keeps the terms decoded lately). Lookup
hashes the spelling (``engine.store.term_hash``), binary-searches the sorted
hashes and compares the stored string. A store's own load numbers terms by
hash rank (the sorted hash array is also the encoder), an in-memory load of
an empty store does the same, and later loads append IDs in arrival order
with an ID per sorted hash.

Terms met one at a time (updates, stream items, query constants made
permanent) go to an overlay, an ordinary
:class:`engine.rdf.MemoryTermDictionary` whose IDs are shifted past the
compact ones; this class implements the whole
:class:`engine.rdf.TermDictionary` protocol, transient terms included
(compact terms are simply never freed). Once the overlay has handed out an
ID the compact part stops growing (its IDs would collide with the overlay's)
and later loads add their new terms to the overlay.

Numbers and booleans whose spelling :mod:`engine.rdf.value_ids` can give back
exactly get value IDs (at and above ``VALUE_BASE``), unless the dictionary
already holds the term (a store loaded or checkpointed before, or a cluster
coordinator's restored term): one term has one ID at any time. Value IDs are
never stored, referenced or freed here; ``values=False`` (a store directory
being written, whose graphs are CSR arrays indexed by ID) keeps every term in
the dictionary.
"""

from __future__ import annotations

import mmap
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.rdf import (
    VALUE_BASE,
    MemoryTermDictionary,
    SpelledTerms,
    Term,
    arrow_positions,
    encode_spans,
    format_term,
    is_value,
    parse_term,
    spelling_kinds,
    spelling_numbers,
    string_buffers,
    value_id,
    value_kinds,
    value_numbers,
    value_term,
    value_terms,
)
from engine.store import spelling_lookup_kernel
from engine.store.distinct_ids import distinct_counts, unique_index_inverse
from engine.store.layout import HASH_IDS, STRINGS
from engine.store.spelling_index import SpellingIndex
from engine.store.term_hash import CHECK_SEED, SEED, hash_spans, hash_strings, term_hash

if TYPE_CHECKING:
    import pyarrow as pa

#: term strings resolved to IDs kept per store (query constants repeat)
LOOKUP_CACHE = 65536
#: decoded terms kept per store (result rows repeat terms)
DECODE_CACHE = 65536


@dataclass(frozen=True)
class TermArrays:
    """The compact part of a dictionary. Immutable: growing it makes a new
    one, which replaces the old in one reference swap (readers take no lock)."""

    #: term hashes, sorted
    hashes: np.ndarray
    #: the ID of each sorted hash; None when IDs are hash ranks (ID = rank + 1)
    hash_ids: np.ndarray | None
    #: the spelling of ID i is blob[offsets[i-1]:offsets[i]]
    offsets: np.ndarray
    blob: bytes | mmap.mmap
    #: kind code per ID (index 0: the unbound marker)
    kinds: np.ndarray
    #: IDs of the numeric literals, sorted, and their values
    numeric_ids: np.ndarray
    numeric_values: np.ndarray
    #: False for arrays mapped from a store's files, which never grow
    growable: bool
    #: the directory the arrays are mapped from (None: built in memory)
    source: Path | None = None

    @classmethod
    def open(cls, directory: Path) -> TermArrays:
        """The arrays of a store written by ``rivulet load``, memory-mapped."""
        # plain views of the mapped files: np.memmap's subclass hooks cost
        # microseconds on every slice of a query's many small reads
        load = lambda name: np.asarray(np.load(directory / f"{name}.npy", mmap_mode="r"))  # noqa: E731
        with open(directory / STRINGS, "rb") as f:
            size = f.seek(0, 2)
            blob = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        hash_ids = load(HASH_IDS) if (directory / f"{HASH_IDS}.npy").exists() else None
        return cls(load("hashes"), hash_ids, load("offsets"), blob, load("kinds"), load("numeric_ids"),
                   load("numeric_values"), growable=False, source=directory)

    def save(self, directory: Path) -> None:
        """Write the arrays as a store's term files (``engine.store.layout``)."""
        directory.mkdir(parents=True, exist_ok=True)
        (directory / STRINGS).write_bytes(bytes(self.blob))
        arrays = {"hashes": self.hashes, "offsets": self.offsets, "kinds": self.kinds,
                  "numeric_ids": self.numeric_ids, "numeric_values": self.numeric_values}
        if self.hash_ids is not None:
            arrays[HASH_IDS] = self.hash_ids
        for name, array in arrays.items():
            np.save(directory / f"{name}.npy", array)

    @classmethod
    def empty(cls) -> TermArrays:
        return cls(np.zeros(0, np.int64), None, np.zeros(1, np.int64), b"", np.zeros(1, np.uint8),
                   np.zeros(0, np.int64), np.zeros(0), growable=True)

    def __len__(self) -> int:
        """The highest ID: every ID up to it is a term's, or (in a checkpoint,
        see ``engine.durability.checkpoint_terms``) a hole no data uses."""
        return len(self.offsets) - 1

    def spelling(self, term_id: int) -> str:
        return self.blob[int(self.offsets[term_id - 1]) : int(self.offsets[term_id])].decode("utf-8")

    def find(self, hashes: np.ndarray) -> np.ndarray:
        """The ID whose hash equals each given hash (0: none). The caller
        compares spellings: equal hashes of different terms are refused when
        a term is added, so one comparison settles it."""
        n = len(self.hashes)
        if not n:
            return np.zeros(len(hashes), dtype=np.int64)
        at = np.minimum(np.searchsorted(self.hashes, hashes), n - 1)
        hit = self.hashes[at] == hashes
        ids = at + 1 if self.hash_ids is None else self.hash_ids[at].astype(np.int64)
        return np.where(hit, ids, 0)

    def find_spelling(self, nt: str) -> int:
        """The ID of the term spelled ``nt`` (canonical N-Triples), 0 if none:
        one compiled call (:mod:`engine.store.spelling_lookup_kernel`) where
        the arrays are 64-bit, else :meth:`find` and a comparison."""
        data = nt.encode("utf-8")
        if self.hashes.dtype == np.int64 and self.offsets.dtype == np.int64 and len(self.hashes):
            at = spelling_lookup_kernel.hash_position(self.hashes, data, SEED)
            if at < 0:
                return 0
            found = at + 1 if self.hash_ids is None else int(self.hash_ids[at])
            return found if spelling_lookup_kernel.spelled_as(self.offsets, self.blob, found, data) else 0
        found = int(self.find(np.array([term_hash(nt)], dtype=np.int64))[0])
        return found if found and self.spelling(found) == nt else 0

    def appended(self, terms: pa.Array, hashes: np.ndarray) -> tuple[TermArrays, np.ndarray]:
        """These arrays with new distinct terms (and their hashes) added, and
        the new terms' IDs. Into empty arrays the terms go in hash order (IDs
        are hash ranks, as a store's own load numbers them); otherwise they
        follow the last ID in the order given."""
        first = len(self) + 1
        count = len(hashes)
        order = np.argsort(hashes, kind="stable")
        if len(self) == 0:
            place = order  # the term that gets each new ID
            ids = np.empty(count, dtype=np.int64)
            ids[order] = np.arange(first, first + count)
        else:
            place = np.arange(count)
            ids = np.arange(first, first + count, dtype=np.int64)
        placed = terms.take(arrow_positions(place))
        offsets, data = string_buffers(placed)
        numeric_at, numeric_values = spelling_numbers(placed)
        merged = np.concatenate([self.hashes, hashes[order]])
        hash_ids = None
        if len(self):
            old_ids = self.hash_ids if self.hash_ids is not None else np.arange(1, first, dtype=np.int64)
            by_hash = np.argsort(merged, kind="stable")
            merged = merged[by_hash]
            hash_ids = np.concatenate([old_ids, ids[order]])[by_hash].astype(_id_dtype(first + count))
        grown = TermArrays(
            hashes=merged,
            hash_ids=hash_ids,
            offsets=np.concatenate([self.offsets, self.offsets[-1] + offsets[1:]]),
            blob=bytes(self.blob) + data.tobytes(),
            kinds=np.concatenate([self.kinds, spelling_kinds(offsets, data)]),
            numeric_ids=np.concatenate([self.numeric_ids, numeric_at + first]),
            numeric_values=np.concatenate([self.numeric_values, numeric_values]),
            growable=True,
        )
        return grown, ids


#: columns up to this long are decoded an ID at a time (see decode_many)
SHORT_COLUMN = 16


def _id_dtype(largest: int) -> np.dtype:
    return np.dtype(np.int32) if largest < 2**31 - 1 else np.dtype(np.int64)


class CompactTermDictionary:
    """Terms <-> IDs over compact arrays (see the module docstring), plus an overlay."""

    def __init__(self, arrays: TermArrays | None = None, values: bool = True) -> None:
        self._arrays = arrays if arrays is not None else TermArrays.empty()
        #: whether numbers and booleans get value IDs (a store too large for them keeps its terms)
        self._values = values and len(self._arrays) < VALUE_BASE
        self._overlay = MemoryTermDictionary()
        #: the overlay terms that stream batches met, by spelling hash
        self._indexed = SpellingIndex()
        #: serialises growth of the compact part against the overlay's first ID
        self._lock = threading.RLock()
        self._find = lru_cache(maxsize=LOOKUP_CACHE)(self._find_spelling)
        #: compact IDs of terms found lately (a query's predicates and classes
        #: come back with every request): hits only, and compact IDs are
        #: permanent, so an entry never goes stale; cleared when full
        self._found: dict[Term, int] = {}
        self._decoded: dict[int, Term] = {}

    @classmethod
    def open(cls, directory: Path) -> CompactTermDictionary:
        """The dictionary of a store written by ``rivulet load``."""
        return cls(TermArrays.open(directory))

    def __len__(self) -> int:
        return len(self._arrays) + len(self._overlay)

    @property
    def arrays(self) -> TermArrays:
        """The compact part (the overlay's terms are not in it)."""
        return self._arrays

    def checkpoint_view(self) -> tuple[TermArrays, list[Term | None]]:
        """The compact part and the overlay's permanent terms by overlay ID
        (None: free or transient), as of one moment: what a checkpoint
        writes, keeping every ID as it is."""
        with self._lock:
            return self._arrays, self._overlay.permanent_terms()

    # ---------------------------------------------------------------- loads
    def encode_spellings(self, terms: pa.Array) -> np.ndarray:
        """IDs of distinct canonical N-Triples spellings, adding the new ones:
        to the compact arrays while they may grow, else to the overlay."""
        offsets, data = string_buffers(terms)
        hashes = hash_strings(data, offsets)
        with self._lock:
            arrays = self._arrays
            ids = arrays.find(hashes)
            for i in np.flatnonzero(ids).tolist():
                if arrays.spelling(int(ids[i])) != terms[i].as_py():
                    raise ValueError("two different terms share a 64-bit hash; "
                                     f"the store cannot number {terms[i].as_py()}")
            missing = np.flatnonzero(ids == 0)
            if self._values and len(missing):
                starts = offsets[:-1].astype(np.int64)[missing]
                lengths = np.diff(offsets).astype(np.int64)[missing]
                ids[missing] = self._value_ids(data, starts, lengths, hashes[missing])
            if self._overlay.highest_id:
                return self._encode_in_overlay(terms, ids)
            new = np.flatnonzero(ids == 0)
            if not len(new):
                return ids
            if not arrays.growable:
                return self._encode_in_overlay(terms, ids)
            new_hashes = hashes[new]
            if len(np.unique(new_hashes)) != len(new_hashes):
                raise ValueError("two different terms share a 64-bit hash; the store cannot number them")
            if self._values and len(arrays) + len(new) >= VALUE_BASE:
                raise ValueError("the dictionary is full: term IDs must stay below the value IDs")
            self._arrays, ids[new] = arrays.appended(terms.take(arrow_positions(new)), new_hashes)
            self._find.cache_clear()  # it remembers misses
            return ids

    def _encode_in_overlay(self, terms: pa.Array, ids: np.ndarray) -> np.ndarray:
        """The IDs still 0 in ``ids``, one term at a time through the overlay."""
        for i in np.flatnonzero(ids == 0).tolist():
            ids[i] = self._overlay_encode(parse_term(terms[i].as_py()))
        return ids

    def _overlay_encode(self, term: Term, transient: bool = False) -> int:
        """A new overlay ID for ``term`` (the caller holds the lock), refused
        when it would reach the value IDs."""
        overlay = self._overlay
        found = (overlay.encode_transient if transient else overlay.encode)(term) + len(self._arrays)
        if self._values and found >= VALUE_BASE:
            raise ValueError("the dictionary is full: term IDs must stay below the value IDs")
        return found

    def _value_ids(self, data: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                   hashes: np.ndarray) -> np.ndarray:
        """The value ID of each spelling the compact arrays lack (0: none),
        unless the overlay holds the term: a restored term keeps its ID
        (:meth:`restore` indexes such terms by spelling)."""
        ids = encode_spans(data, starts, lengths)
        hit = np.flatnonzero(ids)
        if len(hit) and self._indexed.restored:
            checks = hash_spans(data, starts[hit], lengths[hit], CHECK_SEED)
            ids[hit[self._indexed.find(hashes[hit], checks) != 0]] = 0
        return ids

    def _value_mask(self, ids: np.ndarray) -> np.ndarray:
        """Which IDs are value IDs (none in a store too large to have them)."""
        return is_value(ids) if self._values else np.zeros(len(ids), dtype=bool)

    def _term_value_id(self, term: Term) -> int:
        """:func:`value_id` of a term the dictionary does not hold (0: none)."""
        return value_id(term) if self._values else 0

    # ----------------------------------------------------------------- lookup
    def _find_spelling(self, nt: str) -> int:
        return self._arrays.find_spelling(nt)

    def _in_base(self, term: Term) -> int:
        found = self._found.get(term)
        if found is not None:
            return found
        found = self._find(format_term(term)) if len(self._arrays) else 0
        if found:
            if len(self._found) >= LOOKUP_CACHE:
                self._found.clear()
            self._found[term] = found
        return found

    def _shift(self, overlay_id: int) -> int:
        return overlay_id + len(self._arrays) if overlay_id else 0

    def _overlay_ids(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        base = len(self._arrays)
        return ids[(ids > base) & ~self._value_mask(ids)] - base

    def lookup(self, term: Term) -> int:
        """The ID of ``term`` (a value ID for a number it does not hold) or 0
        when the dictionary has never seen it. A term is in the compact part
        or in the overlay, never both: one found lately is answered first."""
        return (self._found.get(term) or self._shift(self._overlay.lookup(term)) or self._in_base(term)
                or self._term_value_id(term))

    def lookup_pinned(self, term: Term) -> int:
        """Like :meth:`lookup`, but 0 for an overlay ID that may be freed (the
        compact terms are all permanent, and value IDs are never freed)."""
        return (self._found.get(term) or self._shift(self._overlay.lookup_pinned(term)) or self._in_base(term)
                or self._term_value_id(term))

    def encode(self, term: Term) -> int:
        """The ID of ``term``, assigning an overlay ID if it is not known yet
        and has no value ID."""
        if not self._overlay.lookup(term):
            found = self._in_base(term) or self._term_value_id(term)
            if found:
                return found
        with self._lock:
            return self._overlay_encode(term)

    def encode_transient(self, term: Term) -> int:
        """Like :meth:`encode`; a new overlay ID may be freed again (see release)."""
        found = self._overlay.lookup(term)
        if found:
            return self._shift(found)
        found = self._in_base(term) or self._term_value_id(term)
        if found:
            return found
        with self._lock:
            return self._overlay_encode(term, transient=True)

    def encode_spelled_transient(self, spelled: SpelledTerms) -> np.ndarray:
        """Like :meth:`encode_transient` for each of a batch's spellings, in
        array steps: the spellings are hashed, made distinct and looked up
        in the compact arrays at once (a hash match is checked byte for byte
        against the blob); only the distinct spellings that are not there
        are parsed, one at a time, for the overlay."""
        hashes = hash_spans(spelled.data, spelled.starts, spelled.lengths)
        distinct, first, inverse = unique_index_inverse(hashes)
        terms = spelled.take(first)
        # occurrences of one hash spell one term: a second seed tells colliding spellings apart
        check = hash_spans(spelled.data, spelled.starts, spelled.lengths, CHECK_SEED)
        if not np.array_equal(check, check[first][inverse]):
            raise ValueError("two different terms of one batch share a 64-bit hash; "
                             "the store cannot number them")
        arrays = self._arrays
        ids = arrays.find(distinct)
        hit = np.flatnonzero(ids)
        if len(hit):
            found = ids[hit]
            offsets = arrays.offsets
            blob = np.frombuffer(arrays.blob, dtype=np.uint8) if len(arrays.blob) else np.zeros(0, np.uint8)
            same = terms.take(hit).equal_to(blob, offsets[found - 1], offsets[found] - offsets[found - 1])
            ids[hit[~same]] = 0
        missing = np.flatnonzero(ids == 0)
        if len(missing):
            checks = check[first]
            with self._lock:
                base = len(self._arrays)
                indexed = self._indexed.find(distinct[missing], checks[missing])
                ids[missing] = np.where(indexed, indexed + base, 0)
                rest = missing[indexed == 0]
                if self._values and len(rest):  # numbers the dictionary does not hold: their values
                    ids[rest] = encode_spans(terms.data, terms.starts[rest], terms.lengths[rest])
                    rest = rest[ids[rest] == 0]
                # in order of first occurrence: new IDs as one-at-a-time encoding hands them out
                rest = rest[np.argsort(first[rest])]
                overlay = np.array([self._overlay_encode(parse_term(terms.spelling(i)), transient=True)
                                    for i in rest.tolist()], dtype=np.int64)
                ids[rest] = overlay
                self._indexed.add(overlay - base, distinct[rest], checks[rest])
        return ids[inverse]

    def restore(self, term_id: int, term: Term) -> None:
        """Give ``term`` the ID it had before a restart (see
        :meth:`MemoryTermDictionary.restore`); a term of the compact part
        keeps its own."""
        if term_id <= len(self._arrays):
            if self._in_base(term) != term_id:
                raise ValueError(f"cannot restore {term} as ID {term_id}: the store numbers it otherwise")
            return
        with self._lock:
            self._overlay.restore(term_id - len(self._arrays), term)
            if self._values and value_id(term):  # found by spelling before its value ID
                spelling = np.frombuffer(format_term(term).encode("utf-8"), dtype=np.uint8)
                span = (np.zeros(1, np.int64), np.array([len(spelling)], np.int64))
                overlay_id = np.array([term_id - len(self._arrays)], np.int64)
                self._indexed.add(overlay_id, hash_spans(spelling, *span),
                                  hash_spans(spelling, *span, CHECK_SEED), restored=True)

    def encode_many(self, terms: list[Term]) -> np.ndarray:
        """IDs for a list of terms as an int64 array."""
        encode = self.encode
        return np.fromiter((encode(t) for t in terms), dtype=np.int64, count=len(terms))

    def pin(self, ids: np.ndarray) -> None:
        """Make overlay IDs permanent (compact terms always are)."""
        self._overlay.pin(self._overlay_ids(ids))

    def hold(self, ids: np.ndarray) -> None:
        """One more reference to each overlay ID per occurrence (see
        :meth:`MemoryTermDictionary.hold`), grouped by the hash pass."""
        self._overlay.hold_counted(*distinct_counts(self._overlay_ids(ids)))

    def release(self, ids: np.ndarray) -> int:
        """Drop references to overlay IDs, one per occurrence; compact terms are never freed."""
        freed = self._overlay.release_counted(*distinct_counts(self._overlay_ids(ids)))
        if freed:
            with self._lock:
                self._indexed.forget(freed)
        return len(freed)

    # ----------------------------------------------------------------- decode
    def spelling(self, term_id: int) -> str:
        """The canonical N-Triples spelling of a compact term's ID."""
        return self._arrays.spelling(term_id)

    def decode(self, term_id: int) -> Term | None:
        """The term for an ID (None for 0, the unbound marker)."""
        if term_id <= 0:
            return None
        if term_id >= VALUE_BASE and self._values:
            return value_term(term_id)
        base = len(self._arrays)
        if term_id > base:
            return self._overlay.decode(term_id - base)
        decoded = self._decoded
        term = decoded.get(term_id)
        if term is None:
            if len(decoded) >= DECODE_CACHE:
                decoded.clear()
            term = decoded[term_id] = parse_term(self._arrays.spelling(term_id))
        return term

    def spellings(self, ids: np.ndarray) -> list[bytes | None]:
        """The stored N-Triples spelling (UTF-8) of each compact ID, None
        for any other (unbound, a query's own, overlay, value IDs). Why: a
        result writer can often write a term from its spelling (an IRI's
        JSON is its text between quotes), without building the term."""
        arrays = self._arrays
        offsets = memoryview(arrays.offsets)  # items are Python ints: no NumPy call per ID
        blob = arrays.blob
        last = len(arrays)
        return [blob[offsets[i - 1]:offsets[i]] if 0 < i <= last else None
                for i in np.asarray(ids, dtype=np.int64).tolist()]

    def decode_many(self, ids: np.ndarray) -> list[Term | None]:
        """Terms for a column of IDs (a result's column: mostly recent terms):
        the overlay's (a window's stream terms) in one call to it, the
        compact ones through the decode cache, value IDs from their value.
        A short column (a small query's answer) is decoded an ID at a time:
        the masks would cost more than the IDs."""
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) <= SHORT_COLUMN:
            decode = self.decode
            return [decode(term_id) for term_id in ids.tolist()]
        out: list[Term | None] = [None] * len(ids)  # 0: unbound
        values = self._value_mask(ids)
        base = len(self._arrays)
        overlay = (ids > base) & ~values
        if overlay.any():
            at = np.flatnonzero(overlay)
            for i, term in zip(at.tolist(), self._overlay.decode_many(ids[at] - base), strict=True):
                out[i] = term
        compact = (ids > 0) & (ids <= base)
        if compact.any():
            at = np.flatnonzero(compact)
            cached = self._decoded.get
            decode = self.decode
            for i, term_id in zip(at.tolist(), ids[at].tolist(), strict=True):
                term = cached(term_id)
                out[i] = term if term is not None else decode(term_id)
        if values.any():
            at = np.flatnonzero(values)
            for i, term in zip(at.tolist(), value_terms(ids[at]), strict=True):
                out[i] = term
        return out

    # ------------------------------------------------------------ side arrays
    def kinds(self, ids: np.ndarray) -> np.ndarray:
        """Kind code (KIND_IRI, KIND_BNODE, KIND_LITERAL; 0 for unbound) per ID."""
        ids = np.asarray(ids, dtype=np.int64)
        arrays = self._arrays
        base = len(arrays)
        values = self._value_mask(ids)
        over = (ids > base) & ~values
        out = arrays.kinds[np.where(over | values | (ids < 0), 0, ids)]
        if over.any():
            out[over] = self._overlay.kinds(ids[over] - base)
        if values.any():
            out[values] = value_kinds(ids[values])
        return out

    def numbers(self, ids: np.ndarray) -> np.ndarray:
        """Numeric value per ID, NaN for non-numeric terms."""
        ids = np.asarray(ids, dtype=np.int64)
        arrays = self._arrays
        out = np.full(len(ids), np.nan)
        nid = arrays.numeric_ids
        if len(nid):
            at = np.minimum(np.searchsorted(nid, ids), len(nid) - 1)
            hit = nid[at] == ids
            out[hit] = arrays.numeric_values[at[hit]]
        base = len(arrays)
        values = self._value_mask(ids)
        over = (ids > base) & ~values
        if over.any():
            out[over] = self._overlay.numbers(ids[over] - base)
        if values.any():
            out[values] = value_numbers(ids[values])
        return out
