"""One ingested batch before encoding: item timestamps and spelled triples.

Whatever the body's syntax, the stream engine ingests a batch as arrays:
per item its timestamp and number of triples, and the triples' terms as
canonical N-Triples spellings (:class:`~engine.rdf.SpelledTerms`; subject,
predicate and object of triple ``i`` at ``3i``, ``3i + 1``, ``3i + 2``).
The dictionary encodes them in bulk under the engine's lock; the body was
read outside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.rdf import SpelledTerms, Term, parse_term


@dataclass(frozen=True)
class SpelledBatch:
    """Items in body order; ``arrival[k]``: item ``k`` is stamped when it
    arrives (its ``times`` entry is then meaningless)."""

    times: np.ndarray
    counts: np.ndarray
    terms: SpelledTerms
    arrival: np.ndarray

    def __len__(self) -> int:
        return len(self.times)

    @classmethod
    def of_items(cls, items: Sequence[tuple[int | None, Sequence[tuple[Term, Term, Term]]]]) -> SpelledBatch:
        """The batch of parsed items (``(timestamp or None, triples)``)."""
        times = np.array([0 if ts is None else int(ts) for ts, _ in items], dtype=np.int64)
        arrival = np.array([ts is None for ts, _ in items], dtype=bool)
        counts = np.array([len(triples) for _, triples in items], dtype=np.int64)
        terms = SpelledTerms.of_terms(term for _, triples in items for triple in triples for term in triple)
        return cls(times, counts, terms, arrival)

    def stamped(self, now_ms: int) -> SpelledBatch:
        """This batch with arrival time ``now_ms`` filled in."""
        if not self.arrival.any():
            return self
        return replace(self, times=np.where(self.arrival, now_ms, self.times),
                       arrival=np.zeros_like(self.arrival))

    def items(self) -> list[tuple[int, list[tuple[Term, Term, Term]]]]:
        """The items as terms (for what still logs terms)."""
        spelled = [parse_term(self.terms.spelling(i)) for i in range(len(self.terms))]
        out = []
        at = 0
        for ts, count in zip(self.times.tolist(), self.counts.tolist(), strict=True):
            out.append((ts, [tuple(spelled[k : k + 3]) for k in range(at, at + 3 * count, 3)]))
            at += 3 * count
        return out

    @classmethod
    def joined(cls, batches: Sequence[SpelledBatch]) -> SpelledBatch:
        """The items of ``batches`` one after the other, as one batch (a
        source ingests the messages it has received together: one log
        record, one flush, one round of windows)."""
        if len(batches) == 1:
            return batches[0]
        offsets = np.cumsum([0] + [len(b.terms.data) for b in batches[:-1]])
        starts = [b.terms.starts + at for b, at in zip(batches, offsets, strict=True)]
        terms = SpelledTerms(np.concatenate([b.terms.data for b in batches]), np.concatenate(starts),
                             np.concatenate([b.terms.lengths for b in batches]))
        return cls(np.concatenate([b.times for b in batches]), np.concatenate([b.counts for b in batches]),
                   terms, np.concatenate([b.arrival for b in batches]))
