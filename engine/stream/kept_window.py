"""What a query keeps of its window graph from one step to the next.

A sliding window shares most of its batches with the window before it: at
each step a few batch slices enter and a few leave. The batches are indexed
once at ingest (:mod:`~engine.store.timed_triples`); what a C-SPARQL query
used to redo at every step is the merge with its stored ``FROM`` graph: each
window match was looked up in the stored graph, so that a triple both
streamed and stored counts once. When the FROM graph is the same from one
step to the next, each batch is instead read without its stored triples
(:meth:`~engine.store.timed_triples.TimedTriples.without`), worked out when
the batch first enters the query's window and kept on the batch for every
later step (and every other query with that FROM graph); a batch that
leaves every window is freed with it. Only settled batches are filtered
(ones the log will not merge again); the matches of the few small ones at
the log's tail are looked up per match. A FROM graph that changes at every
step (one a stream appends to, cut at each close) is merged per match as
before: filtering whole batches for one window would cost more.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.sparql.exec import merged
from engine.store import Graph
from engine.stream.transient import SMALL_BATCH

#: a log chunk of more rows than this is never merged with a later one
SETTLED_ROWS = SMALL_BATCH // 2


class KeptWindow:
    """One query's memory of the stored graph its last windows were merged
    with, and from which close on it has stayed the same."""

    def __init__(self) -> None:
        self._beside: Graph | None = None
        self._since: int | None = None

    def parts(self, parts: Sequence[Sequence], stored: Sequence[Graph], close: int) -> list[list]:
        """The window ``parts`` (per stream, its batch slices) the query reads
        at ``close`` beside the ``stored`` graphs: without their stored
        triples once the stored graphs' merge is the one of an earlier close,
        else as they are."""
        beside = merged(list(stored)) if stored else None
        if beside is None or not len(beside):
            self._beside = None
            return [list(slices) for slices in parts]
        if beside is not self._beside:
            self._beside, self._since = beside, close
        if close == self._since:
            return [list(slices) for slices in parts]
        return [[_without(part, beside) for part in slices] for slices in parts]


def _without(part, beside: Graph):
    """``part`` without the triples of ``beside``, when it can say (a batch
    or a slice of one in this process) and its batch is settled: one of more
    than SMALL_BATCH / 2 rows is never merged into a later chunk, so the work
    serves every step the batch spans. A smaller batch (a producer posting a
    few triples per step) would be filtered anew each time the log merges it
    with the next: its matches are looked up as they come instead."""
    without = getattr(part, "without", None)
    if without is None or len(getattr(part, "batch", part)) <= SETTLED_ROWS:
        return part
    return without(beside)
