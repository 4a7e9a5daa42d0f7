"""Terms as canonical N-Triples spellings inside one byte buffer.

A request body of N-Triples already holds every term spelled as the store
spells it (in the common case: no escapes, no ``xsd:string``, lower-case
language tags). Keeping each term as a span of that buffer lets a
dictionary hash and look up a whole batch in array operations instead of
making a Python object per term; :meth:`SpelledTerms.of_terms` spells terms
that came from another parser the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from engine.rdf.ntriples import format_term
from engine.rdf.terms import Term


@dataclass(frozen=True)
class SpelledTerms:
    """Term ``i`` is spelled ``data[starts[i] : starts[i] + lengths[i]]`` (UTF-8)."""

    data: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)

    @classmethod
    def of_terms(cls, terms: Iterable[Term]) -> SpelledTerms:
        """The canonical spellings of ``terms`` (one Python step per term: for
        the bodies the array scanner leaves to the statement parser)."""
        encoded = [format_term(term).encode("utf-8") for term in terms]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        starts = np.zeros(len(encoded), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), starts, lengths)

    def spelling(self, i: int) -> str:
        start = int(self.starts[i])
        return self.data[start : start + int(self.lengths[i])].tobytes().decode("utf-8")

    def take(self, positions: np.ndarray) -> SpelledTerms:
        """The spellings at ``positions`` (same buffer)."""
        return SpelledTerms(self.data, self.starts[positions], self.lengths[positions])

    def equal_to(self, other_data: np.ndarray, other_starts: np.ndarray, other_lengths: np.ndarray
                 ) -> np.ndarray:
        """Per term, whether its bytes equal ``other_data[other_starts[i]:][:other_lengths[i]]``:
        the check that a hash match is the same term, for a whole batch at once."""
        same = self.lengths == other_lengths
        at = np.flatnonzero(same & (self.lengths > 0))
        if not len(at):
            return same
        lengths = self.lengths[at]
        mine = self.data[span_positions(self.starts[at], lengths)]
        theirs = other_data[span_positions(np.asarray(other_starts, dtype=np.int64)[at], lengths)]
        differs = np.zeros(len(at), dtype=bool)
        bad = np.flatnonzero(mine != theirs)
        if len(bad):
            span = np.repeat(np.arange(len(at)), lengths)
            differs[span[bad]] = True
        same[at[differs]] = False
        return same

    def ntriples(self) -> tuple[np.ndarray, np.ndarray]:
        """The terms, in threes, as N-Triples lines ``s p o .`` (as
        :func:`~engine.rdf.write_graph` writes them), assembled in array
        steps: the bytes, and where each line ends. Terms that already lie
        in such lines (a scanned body) are cut out of it whole."""
        lengths, starts = self.lengths.reshape(-1, 3), self.starts.reshape(-1, 3)
        ends = np.cumsum(lengths.sum(axis=1) + 5)  # two spaces and " .\n"
        if self._in_lines(starts, lengths):
            keep = np.zeros(len(self.data) + 1, dtype=np.int8)
            keep[starts[:, 0]] = 1
            keep[starts[:, 2] + lengths[:, 2] + 3] -= 1
            return self.data[np.cumsum(keep[:-1], dtype=np.int8).view(bool)], ends
        spelled = self.data[span_positions(self.starts, self.lengths)]
        after = np.cumsum(self.lengths).reshape(-1, 3)
        at = np.concatenate([after[:, 0], after[:, 1], np.repeat(after[:, 2], 3)])
        separators = np.concatenate([np.full(2 * len(after), ord(" ")),
                                     np.tile(np.frombuffer(b" .\n", dtype=np.uint8), len(after))])
        order = np.argsort(at, kind="stable")
        return np.insert(spelled, at[order], separators[order].astype(np.uint8)), ends

    def _in_lines(self, starts: np.ndarray, lengths: np.ndarray) -> bool:
        """Whether each three terms are one ``s p o .\n`` line of the buffer."""
        if not len(starts):
            return False
        gaps = starts[:, :2] + lengths[:, :2]
        tail = starts[:, 2] + lengths[:, 2]
        if int(tail[-1]) + 3 > len(self.data) or not (starts[:, 1:] == gaps + 1).all():
            return False
        data = self.data
        return bool((data[gaps] == ord(" ")).all() and (data[tail] == ord(" ")).all()
                    and (data[tail + 1] == ord(".")).all() and (data[tail + 2] == ord("\n")).all())


def span_positions(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Every position of the spans ``[start, start + length)``, back to back:
    one flat index per byte, to copy or compare many spans in one step."""
    shift = starts - (np.cumsum(lengths) - lengths)
    return np.repeat(shift, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
