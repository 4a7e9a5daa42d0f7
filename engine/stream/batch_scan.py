"""Reading a body of (timestamped) N-Triples in one compiled pass.

A producer writes one statement a line, one space between the timestamp and
the terms and between the terms, `` .`` at the end, and no escapes (that is
what ``awk`` and every client here write). For such a body the line and term
boundaries are found, and every rule of the statement grammar that could
fail is checked (the characters of IRIs, blank-node labels and language
tags, the timestamps' digits, range and order), in one left-to-right pass
over the bytes (:mod:`engine.stream.batch_scan_kernel`), so no Python step
runs per line or per term. The terms' bytes are then already the store's
canonical spelling.

Anything else (comments, blank lines, tabs, escapes, RDF 1.2 triple terms,
``xsd:dateTime`` timestamps, upper-case language tags, ``xsd:string``, a line the grammar
refuses) makes :func:`scan_body` return None: the caller then reads the
body with the statement parser, which accepts what it accepts and refuses
what it refuses with the same messages as always. So this reader only ever
takes a body that the parser would have read to the same items.
"""

from __future__ import annotations

import numpy as np

from engine.rdf import SpelledTerms
from engine.stream import batch_scan_kernel
from engine.stream.batch_format import LATEST_MS

#: UTF-8 line separators ``str.splitlines`` knows besides LF: the parser's business
_MULTI_REFUSED = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def scan_body(body: bytes, timestamped: bool) -> tuple[np.ndarray, np.ndarray, SpelledTerms] | None:
    """``(timestamps, triples, terms)`` of the items of a body of timestamped
    N-Triples (``timestamped``; one item per run of equal timestamps,
    heartbeats included) or of plain N-Triples (one item, timestamp 0); None
    when the body is not in the plain form this reader takes (see the
    module docstring)."""
    if not body or (not body.isascii() and any(marker in body for marker in _MULTI_REFUSED)):
        return None
    if b"<<(" in body:  # an RDF 1.2 triple term: nested terms are the parser's
        return None
    raw = np.frombuffer(body, dtype=np.uint8)
    scanned = batch_scan_kernel.scan(raw, timestamped, LATEST_MS)
    if scanned is None:
        return None
    times, data, starts, lengths = scanned
    if timestamped:
        new = np.ones(len(times), dtype=bool)
        new[1:] = times[1:] != times[:-1]
        item = np.cumsum(new) - 1
        counts = np.bincount(item[data], minlength=int(new.sum())).astype(np.int64)
        times = times[new]
    else:
        times = np.zeros(1, dtype=np.int64)
        counts = np.array([len(data)], dtype=np.int64)
    return times, counts, SpelledTerms(raw, starts, lengths)
