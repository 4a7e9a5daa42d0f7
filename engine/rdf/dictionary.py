"""The term dictionary: terms <-> dense integer IDs.

:class:`TermDictionary` is what the store, the executor and the stream engine
may ask of a dictionary; two kinds implement all of it: the in-memory
:class:`MemoryTermDictionary` here (a Python object per term), and the
store's compact dictionary
(:class:`engine.store.compact_dictionary.CompactTermDictionary`: arrays and
one string blob, memory-mapped from a loaded store or built by loads), which
keeps terms met one at a time in a ``MemoryTermDictionary``.
Transient terms (stream timing data) are part of the contract, so callers
never need to ask which kind they hold. The compact dictionary also hands
out value IDs (:mod:`engine.rdf.value_ids`: a number or boolean whose ID is
its value, at and above ``VALUE_BASE``) and decodes them; the in-memory one
numbers every term.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol

import numpy as np

from engine.rdf.ntriples import parse_term
from engine.rdf.spelled_terms import SpelledTerms
from engine.rdf.terms import (
    IRI,
    KIND_BNODE,
    KIND_IRI,
    KIND_LITERAL,
    KIND_TRIPLE,
    BNode,
    Term,
    TripleTerm,
    numeric_value,
)

if TYPE_CHECKING:
    import pyarrow as pa


class TermDictionary(Protocol):
    """Terms <-> IDs. ID 0 means "unbound"; side arrays give each ID's kind and
    numeric value so that filters and aggregates need not decode terms."""

    def __len__(self) -> int: ...

    def encode(self, term: Term) -> int:
        """The ID of ``term``, assigning a permanent one if it is new."""
        ...

    def encode_transient(self, term: Term) -> int:
        """The ID of ``term``; a new one is freed again once no :meth:`hold`
        references it and nothing pinned it."""
        ...

    def encode_many(self, terms: list[Term]) -> np.ndarray:
        """IDs for a list of terms as an int64 array."""
        ...

    def encode_spelled_transient(self, spelled: SpelledTerms) -> np.ndarray:
        """:meth:`encode_transient` of each canonical spelling, as an int64 array."""
        ...

    def encode_spellings(self, terms: pa.Array) -> np.ndarray:
        """IDs (permanent) for distinct canonical N-Triples spellings: a bulk load's terms."""
        ...

    def pin(self, ids: np.ndarray) -> None:
        """Make IDs permanent (their terms are now in stored data)."""
        ...

    def hold(self, ids: np.ndarray) -> None:
        """One more reference (a transient-log chunk) to each distinct ID."""
        ...

    def release(self, ids: np.ndarray) -> int:
        """Drop the references :meth:`hold` took; returns how many terms were freed."""
        ...

    def lookup(self, term: Term) -> int:
        """The ID of ``term`` or 0 when the dictionary has never seen it."""
        ...

    def lookup_pinned(self, term: Term) -> int:
        """Like :meth:`lookup`, but 0 for an ID that may still be freed."""
        ...

    def decode(self, term_id: int) -> Term | None:
        """The term for an ID (None for 0, the unbound marker)."""
        ...

    def decode_many(self, ids: np.ndarray) -> list[Term | None]:
        """Terms for a column of IDs."""
        ...

    def kinds(self, ids: np.ndarray) -> np.ndarray:
        """Kind code (KIND_IRI, KIND_BNODE, KIND_LITERAL; 0 for unbound) per ID."""
        ...

    def numbers(self, ids: np.ndarray) -> np.ndarray:
        """Numeric value per ID, NaN for non-numeric terms."""
        ...


class MemoryTermDictionary:
    """Two-way map between terms and dense integer IDs, in memory (the string server).

    ID 0 is reserved for "unbound". Side arrays indexed by ID keep the kind of
    each term and its numeric value so that the executor can filter and
    aggregate on numbers without decoding terms.

    Terms that only stream timing data uses (a new observation IRI every
    reading) must not stay forever, or memory grows with the stream. Such terms
    are encoded *transient*: each transient-log chunk holds a reference to its
    IDs, and when the last chunk holding an ID expires and nothing pinned it
    (stored data, an update, a plain ``encode``), the ID is freed and reused.
    """

    def __init__(self) -> None:
        self._ids: dict[Term, int] = {}
        self._terms: list[Term | None] = [None]
        self._kinds = np.zeros(1024, dtype=np.uint8)
        self._numbers = np.full(1024, np.nan)
        self._refs = np.zeros(1024, dtype=np.int32)
        #: IDs encoded transient and not pinned since; only these can be freed
        self._transient: set[int] = set()
        self._free: list[int] = []
        #: writers (loads, updates, stream ingestion, the stream engine's
        #: declarations) may come from several threads; readers need no lock
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def highest_id(self) -> int:
        """The highest ID ever handed out (0: none yet; freed IDs count)."""
        return len(self._terms) - 1

    def permanent_terms(self) -> list[Term | None]:
        """The term of each ID from 0 to the highest handed out, None where the
        ID is free or transient (only stored data's terms are permanent), as
        of one moment (a checkpoint writes them)."""
        with self._lock:
            terms = list(self._terms)
            for term_id in self._transient:
                terms[term_id] = None
            return terms

    def encode(self, term: Term) -> int:
        """The ID of ``term``, assigning a new one if it is not known yet. The
        ID is permanent (pinned)."""
        found = self._ids.get(term)
        if found is not None and not self._transient:
            return found
        with self._lock:
            found = self._ids.get(term)
            if found is not None:
                self._transient.discard(found)
                return found
            return self._assign(term)

    def encode_transient(self, term: Term) -> int:
        """The ID of ``term``; a new one may be freed again (see :meth:`release`)."""
        found = self._ids.get(term)
        if found is not None:
            return found
        with self._lock:
            found = self._ids.get(term)
            if found is not None:
                return found
            new_id = self._assign(term)
            self._transient.add(new_id)
            return new_id

    def _assign(self, term: Term) -> int:
        if self._free:
            new_id = self._free.pop()
            self._terms[new_id] = term
        else:
            new_id = len(self._terms)
            self._terms.append(term)
            if new_id >= len(self._kinds):
                self._grow(max(new_id + 1, 2 * len(self._kinds)))
        self._describe(new_id, term)
        return new_id

    def restore(self, term_id: int, term: Term) -> None:
        """Give ``term`` the permanent ID it had before a restart (a cluster
        coordinator reads its terms back from its log, so that they match
        the IDs its shards store); the IDs skipped meanwhile are free."""
        with self._lock:
            if self._ids.get(term) == term_id:
                return
            if term in self._ids or (term_id < len(self._terms) and self._terms[term_id] is not None):
                raise ValueError(f"cannot restore {term} as ID {term_id}: already taken")
            while len(self._terms) < term_id:
                self._free.append(len(self._terms))
                self._terms.append(None)
            if len(self._terms) == term_id:
                self._terms.append(term)
            else:  # an ID skipped earlier (the log is mostly in ID order: rare)
                self._free.remove(term_id)
                self._terms[term_id] = term
            if term_id >= len(self._kinds):
                self._grow(max(term_id + 1, 2 * len(self._kinds)))
            self._describe(term_id, term)

    def _describe(self, new_id: int, term: Term) -> None:
        self._ids[term] = new_id
        cls = term.__class__
        if cls is IRI:
            self._kinds[new_id] = KIND_IRI
        elif cls is BNode:
            self._kinds[new_id] = KIND_BNODE
        elif cls is TripleTerm:
            self._kinds[new_id] = KIND_TRIPLE
        else:
            self._kinds[new_id] = KIND_LITERAL
            self._numbers[new_id] = numeric_value(term)

    def _grow(self, size: int) -> None:
        self._kinds = np.resize(self._kinds, size)
        numbers = np.full(size, np.nan)
        numbers[: len(self._numbers)] = self._numbers
        self._numbers = numbers
        refs = np.zeros(size, dtype=np.int32)
        refs[: len(self._refs)] = self._refs
        self._refs = refs

    def encode_many(self, terms: list[Term]) -> np.ndarray:
        """IDs for a list of terms as an int64 array."""
        encode = self.encode
        return np.fromiter((encode(t) for t in terms), dtype=np.int64, count=len(terms))

    def encode_spelled_transient(self, spelled: SpelledTerms) -> np.ndarray:
        """:meth:`encode_transient` of each canonical spelling, one term at a
        time (the store's compact dictionary does this in whole-array steps)."""
        encode = self.encode_transient
        return np.fromiter((encode(parse_term(spelled.spelling(i))) for i in range(len(spelled))),
                           dtype=np.int64, count=len(spelled))

    def encode_spellings(self, terms: pa.Array) -> np.ndarray:
        """IDs for distinct canonical N-Triples spellings, one term at a time
        (the store's compact dictionary does this in whole-array steps)."""
        return self.encode_many([parse_term(t) for t in terms.to_pylist()])

    # ------------------------------------------------------ transient terms
    def pin(self, ids: np.ndarray) -> None:
        """Make IDs permanent (their terms are now in stored data)."""
        if self._transient and len(ids):
            with self._lock:
                self._transient.difference_update(np.unique(ids).tolist())

    def hold(self, ids: np.ndarray) -> None:
        """One more reference to each ID per occurrence in ``ids`` (a stream
        batch's rows, a report's distinct IDs). Counted per occurrence so that
        whoever releases the same IDs in other groupings releases exactly what
        was held: a stream log merges the batches it held one by one into one
        chunk, which it releases at once (counted per distinct ID, a term in two
        merged batches kept one reference for ever)."""
        if len(ids):
            self.hold_counted(*np.unique(ids, return_counts=True))

    def hold_counted(self, distinct: np.ndarray, counts: np.ndarray) -> None:
        """:meth:`hold` of each of the ``distinct`` IDs ``counts`` times (a
        caller that grouped them already, by a faster way than sorting)."""
        if len(distinct):
            with self._lock:
                self._refs[distinct] += counts.astype(self._refs.dtype, copy=False)

    def release(self, ids: np.ndarray) -> int:
        """Drop the references :meth:`hold` took, one per occurrence in ``ids``;
        transient IDs left without any are freed. Returns how many terms were
        freed."""
        return len(self.release_freeing(ids))

    def release_freeing(self, ids: np.ndarray) -> list[int]:
        """:meth:`release`, returning the IDs freed (an index of the terms forgets them)."""
        if not len(ids):
            return []
        return self.release_counted(*np.unique(ids, return_counts=True))

    def release_counted(self, distinct: np.ndarray, counts: np.ndarray) -> list[int]:
        """:meth:`release_freeing` of each of the ``distinct`` IDs ``counts`` times."""
        if not len(distinct):
            return []
        with self._lock:
            self._refs[distinct] -= counts.astype(self._refs.dtype, copy=False)
            if not self._transient:
                return []
            transient = self._transient
            unheld = distinct[self._refs[distinct] <= 0].tolist()
            dead = [term_id for term_id in unheld if term_id in transient]
            if not dead:
                return []
            transient.difference_update(dead)
            ids, terms = self._ids, self._terms
            for term_id in dead:
                del ids[terms[term_id]]
                terms[term_id] = None
            self._kinds[dead] = 0
            self._numbers[dead] = np.nan
            self._free.extend(dead)
            return dead

    # --------------------------------------------------------------- lookup
    def lookup(self, term: Term) -> int:
        """The ID of ``term`` or 0 when the dictionary has never seen it."""
        return self._ids.get(term, 0)

    def lookup_pinned(self, term: Term) -> int:
        """Like :meth:`lookup`, but 0 for a transient ID: a reader outside the
        stream engine's lock must not hold an ID that may be freed and reused."""
        found = self._ids.get(term, 0)
        return 0 if found and self._transient and found in self._transient else found

    def decode(self, term_id: int) -> Term | None:
        """The term for an ID (None for 0, the unbound marker)."""
        return self._terms[term_id]

    def decode_many(self, ids: np.ndarray) -> list[Term | None]:
        terms = self._terms
        return [terms[i] for i in ids.tolist()]

    def kinds(self, ids: np.ndarray) -> np.ndarray:
        """Kind code (KIND_IRI, KIND_BNODE, KIND_LITERAL; 0 for unbound) per ID."""
        return self._kinds[ids]

    def numbers(self, ids: np.ndarray) -> np.ndarray:
        """Numeric value per ID, NaN for non-numeric terms."""
        return self._numbers[ids]
