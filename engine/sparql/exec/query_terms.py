"""Term IDs as one query sees them: the store's dictionary plus query-local terms.

Constants that the store has never seen, and values computed by BIND,
SELECT expressions or aggregates, get negative IDs local to the query, so
that answering a query never grows the store's dictionary. A negative ID
never matches stored data, which is exactly right: the store holds no triple
with a term it has never seen.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.rdf import (
    IRI,
    KIND_BNODE,
    KIND_IRI,
    KIND_LITERAL,
    KIND_TRIPLE,
    BNode,
    Term,
    TermDictionary,
    TripleTerm,
    numeric_value,
)
from engine.store.compact_dictionary import SHORT_COLUMN
from engine.store.distinct_ids import unique_inverse

#: columns at least this long are decoded a distinct ID at a time
DEDUPLICATE_FROM = 256


def decode_repeating(ids: np.ndarray, decode: Callable[[np.ndarray], list]) -> list:
    """``decode(ids)`` for a column of IDs, each distinct ID decoded once when
    the column repeats them: a long column of a join's answer holds a row per
    combination of few terms, so the column is gathered from its distinct
    terms in C rather than decoded an ID at a time in Python."""
    if len(ids) == 0:
        return []
    if len(ids) >= DEDUPLICATE_FROM and _repeats(ids):
        distinct, inverse = unique_inverse(ids)
        if len(distinct) * 2 <= len(ids):
            terms = np.empty(len(distinct), dtype=object)
            for i, term in enumerate(decode(distinct)):
                terms[i] = term  # one by one: a term must not be unpacked as a sequence
            return terms[inverse.reshape(-1)].tolist()
    return decode(ids)


def _repeats(ids: np.ndarray) -> bool:
    """Whether a sample of 64 IDs spread over the column holds repeats (a
    column of distinct IDs is then not sorted for nothing)."""
    sample = np.sort(ids[:: len(ids) // 64])
    return bool(np.count_nonzero(sample[1:] == sample[:-1]))


class QueryTerms:
    """``transient=True`` (continuous queries, which run under the stream
    engine's lock) also finds terms that only stream data uses; one-shot
    queries see pinned terms only, since a transient ID may be freed and
    reused while they run."""

    def __init__(self, dictionary: TermDictionary, transient: bool = False) -> None:
        self.dictionary = dictionary
        self._lookup = dictionary.lookup if transient else dictionary.lookup_pinned
        self._local_ids: dict[Term, int] = {}
        self._local_terms: list[Term] = []

    def encode(self, term: Term) -> int:
        found = self._lookup(term)
        if found:
            return found
        local = self._local_ids.get(term)
        if local is None:
            self._local_terms.append(term)
            local = -len(self._local_terms)
            self._local_ids[term] = local
        return local

    def decode(self, term_id: int) -> Term | None:
        if term_id > 0:
            return self.dictionary.decode(term_id)
        if term_id < 0:
            return self._local_terms[-term_id - 1]
        return None

    def decode_column(self, ids: np.ndarray) -> list[Term | None]:
        return decode_repeating(ids, self._decode_distinct)

    def _decode_distinct(self, ids: np.ndarray) -> list[Term | None]:
        if len(ids) > SHORT_COLUMN and ids.min() >= 0:
            return self.dictionary.decode_many(ids)
        decode = self.decode  # a short column: an ID at a time costs less than NumPy's calls
        return [decode(i) for i in ids.tolist()]

    def spellings(self, ids: np.ndarray) -> list[bytes | None]:
        """The stored N-Triples spellings of the IDs that have one (a
        compact store's terms), None for the others (see
        ``CompactTermDictionary.spellings``)."""
        spell = getattr(self.dictionary, "spellings", None)
        return [None] * len(ids) if spell is None else spell(ids)

    def encode_column(self, terms: list[Term | None]) -> np.ndarray:
        encode = self.encode
        return np.fromiter((0 if t is None else encode(t) for t in terms), dtype=np.int64, count=len(terms))

    def numbers(self, ids: np.ndarray) -> np.ndarray:
        """Numeric value per ID (NaN when not a number or unbound)."""
        safe = np.where(ids > 0, ids, 0)
        values = self.dictionary.numbers(safe)
        local = ids < 0
        if local.any():
            values = values.copy()
            # once per distinct local term (an aggregate column repeats a few values)
            distinct, inverse = np.unique(ids[local], return_inverse=True)
            numbers = np.array([numeric_value(self._local_terms[-i - 1]) for i in distinct.tolist()])
            values[local] = numbers[inverse.reshape(-1)]
        values[ids == 0] = np.nan
        return values

    def kinds(self, ids: np.ndarray) -> np.ndarray:
        kinds = self.dictionary.kinds(np.where(ids > 0, ids, 0))
        local = ids < 0
        if local.any():
            kinds = kinds.copy()
            codes = {IRI: KIND_IRI, BNode: KIND_BNODE, TripleTerm: KIND_TRIPLE}
            distinct, inverse = np.unique(ids[local], return_inverse=True)
            distinct_kinds = np.array(
                [codes.get(self._local_terms[-i - 1].__class__, KIND_LITERAL) for i in distinct.tolist()],
                dtype=kinds.dtype,
            )
            kinds[local] = distinct_kinds[inverse.reshape(-1)]
        return kinds
