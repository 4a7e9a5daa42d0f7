"""The rows of one ingested batch: each item's distinct triples, as term IDs.

A stream item is an RDF graph, so a triple written twice in one item (two
equal N-Triples lines, two batch lines of one timestamp, a Turtle document
that repeats a statement) is one triple of it. The stream's elements are the
items' distinct triples, each item's in the order of their first occurrence;
a triple that a later item holds again is a new element (a count window
counts it again). Count windows number these rows; time windows, whose
content is a set anyway, read the same rows, so dropping the repeats changes
no time window's answer and saves their memory.

The test is vectorised: one fingerprint per row (mixed with its timestamp:
an item's rows share one) sorted once; only a batch in which two
fingerprints are equal numbers its items and is sorted exactly to find the
repeats.
"""

from __future__ import annotations

import numpy as np

from engine.store import fingerprints

#: odd multiplier of a row's timestamp in its fingerprint
_TIME_MIX = np.uint64(0xD6E8FEB86659FD93)

#: a batch's rows: timestamp, subject, predicate and object columns
Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def batch_rows(times: np.ndarray, counts: np.ndarray, ids: np.ndarray) -> Rows:
    """The rows of a batch of items (timestamps ``times``, ``counts`` triples
    each; ``ids``: the triples' subject, predicate and object IDs in turn),
    a triple repeated within one item kept once."""
    ts = np.repeat(times, counts)
    s, p, o = (np.ascontiguousarray(ids[k::3]) for k in range(3))
    if not may_repeat(ts, s, p, o):
        return ts, s, p, o
    item = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    keep = first_occurrences(item, s, p, o)
    return ts[keep], s[keep], p[keep], o[keep]


def may_repeat(ts: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> bool:
    """Whether two rows may hold one triple at one timestamp (the only way one
    item can repeat a triple): equal fingerprints, found by one sort."""
    if len(ts) < 2:
        return False
    prints = np.sort(fingerprints(s, p, o) ^ (ts.view(np.uint64) * _TIME_MIX))
    return bool((prints[1:] == prints[:-1]).any())


def first_occurrences(item: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
    """Mask of the rows that are the first of their triple within their ``item``."""
    order = np.lexsort((o, p, s, item))  # stable: equal rows keep their arrival order
    ordered = [column[order] for column in (item, s, p, o)]
    repeat = np.zeros(len(order), dtype=bool)
    repeat[1:] = np.logical_and.reduce([column[1:] == column[:-1] for column in ordered])
    keep = np.ones(len(order), dtype=bool)
    keep[order[repeat]] = False
    return keep
