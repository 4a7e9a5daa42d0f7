"""What a window reports: all its rows, or only the change since the window before.

RSTREAM reports every row; ISTREAM the rows new since the previous window,
DSTREAM the rows gone since then, both as multiset differences. The rows are
compared as ID columns (:mod:`~engine.stream.id_rows`: one sort, no Python
object per row) and only the reported ones are decoded, each distinct ID
once, into the positions of their terms that the event carries
(:mod:`~engine.stream.reported_rows`). An ID compares as
its term only while it names it: the policy holds (``TermDictionary.hold``)
the IDs of the rows it keeps, so a window-only term that the previous result
names is not freed when its batch leaves the window, and its ID is not
reused by another term; it is released when the next result replaces that
one (or the query goes). A term the dictionary does not number (a value the
query computed) gets a negative key of the policy's own, kept while a kept
row names it, and given up for the dictionary's ID once the term has one.

A query evaluated incrementally hands over only the change
(:meth:`ReportPolicy.apply_change`); the policy then keeps the window's
result itself, whatever the report. Copies of one query
(:mod:`~engine.stream.duplicates`) apply their policies to one answer: its
multiset is counted once (:func:`shared_count`) and shared by their
policies, and the copies whose previous result is the same shared multiset
report the same rows, worked out once.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from engine.rdf import Term, TermDictionary
from engine.sparql.exec.query_terms import decode_repeating
from engine.stream.id_rows import IdMultiset, WindowRows, combine, decode_rows
from engine.stream.reported_rows import ReportedRows, joined


def shared_count(answer: WindowRows) -> IdMultiset | None:
    """The multiset of ``answer`` that the policies of several copies may share
    (None: it has rows only a policy can key, computed values or decoded rows)."""
    if answer.ids is None or (answer.ids < 0).any():
        return None
    return IdMultiset.of(answer.ids)


class ReportPolicy:
    """The report policy of one query, with the previous window's rows it needs,
    each row ``width`` keys wide."""

    def __init__(self, report: str, width: int, keep_result: bool = False) -> None:
        self.report = report
        self.width = width
        #: whether the previous window's rows are kept (ISTREAM, DSTREAM, incremental)
        self.keep_result = keep_result or report != "RSTREAM"
        self._previous = IdMultiset.empty(width)
        #: the previous rows as a checkpoint kept them, until a window gives a dictionary
        self._restored: Counter | None = None
        #: the dictionary whose IDs the policy holds, and those IDs
        self._dictionary: TermDictionary | None = None
        self._held = np.zeros(0, dtype=np.int64)
        #: IDs held for results replaced, released once their rows are reported
        self._released = np.zeros(0, dtype=np.int64)
        #: the policy's own keys (negative) of terms the dictionary did not number
        self._local_keys: dict[Term, int] = {}
        self._local_terms: dict[int, Term] = {}
        self._last_local = 0

    def apply(self, answer: WindowRows, counted: IdMultiset | None = None,
              reported: dict | None = None) -> ReportedRows:
        """The rows (or triples) to report for a window whose answer is
        ``answer``. ``counted``: its :func:`shared_count`, made once for the
        policies of several copies; ``reported``: what those policies
        reported so far, by previous result and report (the previous results
        are kept in it, so that their ``id`` stays theirs while it lives)."""
        if not self.keep_result:
            return answer.reported()
        previous = self._previous_rows(answer.dictionary)
        if counted is not None:
            current = counted
        else:  # RSTREAM keeps the result for changes (incremental): with its rows decoded
            decoded = answer.reported() if self.report == "RSTREAM" else None
            current = IdMultiset.of(self._keys(answer), decoded)
        self._keep(current)
        if self.report == "RSTREAM":
            delta = answer.reported()
        elif reported is not None and (id(previous), self.report) in reported:
            delta = reported[id(previous), self.report][1]
        else:
            rows, counts, _ = combine([(previous.rows, previous.counts), (current.rows, current.counts)],
                                      self.width)
            before, after = counts[:, 0], counts[:, 1]
            delta = self._decoded(rows, after - before if self.report == "ISTREAM" else before - after)
            if reported is not None:
                reported[id(previous), self.report] = (previous, delta)
        self._settle()
        return delta

    def apply_afresh(self, answer: WindowRows, counted: IdMultiset | None = None,
                     reported: dict | None = None) -> ReportedRows:
        """As :meth:`apply`, for a window after which the query's next window is
        evaluated in full (a shared group's or a copy's evaluation): RSTREAM
        then needs no previous result, so it keeps none and holds no IDs
        (what made K queries of one group cost K multisets a window)."""
        if self.report != "RSTREAM":
            return self.apply(answer, counted, reported)
        if len(self._held) or len(self._previous.rows) or self._restored is not None:
            self._restored = None
            self.forget()
        return answer.reported()

    def apply_change(self, added: WindowRows, removed: WindowRows) -> ReportedRows:
        """The rows to report for a window whose answer is the previous one's
        plus ``added`` minus ``removed`` (both multisets; ``removed`` is part of
        the previous answer). Costs the change and the result's size in
        array steps; only RSTREAM decodes the whole result."""
        previous = self._previous_rows(added.dictionary)
        plus, minus = self._keys(added), self._keys(removed)
        rows, counts, first = combine([(previous.rows, previous.counts), (plus, np.ones(len(plus))),
                                       (minus, np.ones(len(minus)))], self.width)
        total = counts[:, 0] + counts[:, 1] - counts[:, 2]
        kept = total > 0
        if self.report == "RSTREAM":  # the rows kept are decoded already
            decoded = self._decoded_rows(previous, rows, first).take(kept)
            self._keep(IdMultiset(rows[kept], total[kept], decoded))
            delta = decoded.repeated(total[kept])
        else:
            self._keep(IdMultiset(rows[kept], total[kept]))
            gained, lost = counts[:, 1], counts[:, 2]
            delta = self._decoded(rows, gained - lost if self.report == "ISTREAM" else lost - gained)
        self._settle()
        return delta

    def unchanged(self) -> ReportedRows:
        """The rows to report for a window whose answer is the previous one."""
        if self.report != "RSTREAM":
            return ReportedRows.empty(self.width)
        previous = self._previous
        if previous.decoded is None:
            return self._decoded(previous.rows, previous.counts)
        return previous.decoded.repeated(previous.counts)

    def result(self) -> WindowRows:
        """The whole answer of the last window (kept only with ``keep_result``),
        valid while this policy holds it."""
        return WindowRows(self._previous.elements(), self._dictionary, self._decode)

    def previous_rows(self) -> Counter:
        """The previous window's rows, decoded (what a checkpoint keeps)."""
        if self._restored is not None:
            return Counter(self._restored)
        rows = decode_rows(self._previous.rows, self._decode)
        return Counter(dict(zip(rows, self._previous.counts.tolist(), strict=True)))

    def restore(self, previous: Counter) -> None:
        """Compare the next window with ``previous`` (kept across a restart)."""
        self.forget()
        self._restored = Counter(previous)

    def forget(self) -> None:
        """Keep no rows (the query is unregistered): the IDs held go back."""
        self._keep(IdMultiset.empty(self.width))
        self._settle()
        self._local_keys.clear()
        self._local_terms.clear()

    # ------------------------------------------------------------------ keys
    def _previous_rows(self, dictionary: TermDictionary | None) -> IdMultiset:
        """The previous result in current keys: rows restored from a
        checkpoint are keyed now, and a computed term that the dictionary
        numbers since is given its ID."""
        if dictionary is not None:
            self._dictionary = dictionary
        if self._restored is not None:
            restored, self._restored = self._restored, None
            rows = list(restored)
            keys = self._encode(rows).reshape(len(rows), self.width)
            self._keep(IdMultiset(keys, np.array([restored[r] for r in rows], dtype=np.int64)))
        elif self._local_terms:
            numbered = {key: self._dictionary.lookup(term) for key, term in self._local_terms.items()}
            numbered = {key: found for key, found in numbered.items() if found}
            if numbered:
                rows = self._previous.rows.copy()
                for key, found in numbered.items():
                    rows[rows == key] = found
                    del self._local_keys[self._local_terms.pop(key)]
                self._keep(IdMultiset(rows, self._previous.counts, self._previous.decoded))
        return self._previous

    def _keys(self, answer: WindowRows) -> np.ndarray:
        """The rows of ``answer`` as this policy's keys: dictionary IDs, and
        its own keys for the terms that have none."""
        if answer.ids is None:
            rows = answer.rows()
            return self._encode(rows).reshape(len(rows), self.width)
        ids = answer.ids
        local = ids < 0
        if not local.any():
            return ids
        distinct = np.unique(ids[local])
        keys = self._encode_terms(answer.decode(distinct))
        ids = ids.copy()
        ids[local] = keys[np.searchsorted(distinct, ids[local])]
        return ids

    def _encode(self, rows: list[tuple]) -> np.ndarray:
        """The keys of decoded rows, flattened."""
        return self._encode_terms([term for row in rows for term in row])

    def _encode_terms(self, terms: list[Term | None]) -> np.ndarray:
        """The key of each term: its dictionary ID, else the policy's own."""
        keys = np.zeros(len(terms), dtype=np.int64)
        for i, term in enumerate(terms):
            if term is not None:
                keys[i] = self._dictionary.lookup(term) or self._local_key(term)
        return keys

    def _local_key(self, term: Term) -> int:
        key = self._local_keys.get(term)
        if key is None:
            key = self._last_local = self._last_local - 1
            self._local_keys[term], self._local_terms[key] = key, term
        return key

    def _keep(self, current: IdMultiset) -> None:
        """``current`` is the result kept: the policy holds one reference to
        each of its IDs, so it takes one on the IDs new to it (those only the
        result it replaces names are released once its rows are reported:
        :meth:`_settle`)."""
        held = current.term_ids
        if self._dictionary is not None:
            self._dictionary.hold(held[~_among(held, self._held)])
        self._released = np.concatenate([self._released, self._held[~_among(self._held, held)]])
        self._held, self._previous = held, current

    def _settle(self) -> None:
        """The rows of the results replaced are reported: release their IDs
        (an ID the kept result names stays held) and forget the own keys no
        kept row names."""
        if self._dictionary is not None and len(self._released):
            self._dictionary.release(self._released)
        self._released = np.zeros(0, dtype=np.int64)
        if self._local_terms:
            rows = self._previous.rows
            named = set(np.unique(rows[rows < 0]).tolist())
            for key in [k for k in self._local_terms if k not in named]:
                del self._local_keys[self._local_terms.pop(key)]

    # -------------------------------------------------------------- decoding
    def _decode(self, keys: np.ndarray) -> list:
        """Terms of a column of keys (IDs held by this policy, or its own keys)."""
        return decode_repeating(keys, self._decode_distinct)

    def _decode_distinct(self, keys: np.ndarray) -> list:
        if not len(keys) or keys.min() >= 0:
            return self._dictionary.decode_many(keys) if len(keys) else []
        local = self._local_terms
        decode = self._dictionary.decode
        return [local[k] if k < 0 else decode(k) for k in keys.tolist()]

    def _decoded_rows(self, previous: IdMultiset, rows: np.ndarray, first: np.ndarray) -> ReportedRows:
        """``rows`` decoded, where ``first`` says which are rows of
        ``previous`` (the first ``len(previous.rows)`` positions): the rows it
        kept decoded are taken as they are, only the others decoded."""
        if previous.decoded is None:
            return ReportedRows.of_ids(rows, self._decode_distinct)
        old = first < len(previous.rows)
        new = ReportedRows.of_ids(rows[~old], self._decode_distinct)
        return joined(previous.decoded, new, np.where(old, first, -1))

    def _decoded(self, rows: np.ndarray, counts: np.ndarray) -> ReportedRows:
        """The decoded ``rows``, each repeated ``counts`` times (none if <= 0)."""
        return ReportedRows.of_ids(np.repeat(rows, np.maximum(counts, 0), axis=0), self._decode_distinct)


def _among(ids: np.ndarray, sorted_ids: np.ndarray) -> np.ndarray:
    """Mask of the ``ids`` found in ``sorted_ids`` (sorted, distinct)."""
    if not len(sorted_ids):
        return np.zeros(len(ids), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return sorted_ids[at] == ids
