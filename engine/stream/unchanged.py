"""Whether a window reads exactly what the query's last evaluation read.

CityBench's sensors report every few seconds or minutes while its queries
slide by one second: most windows hold the same observations as the window
before, and the stored graphs have not changed. Such a window has the
answer of the last one evaluated, provably, when the query's answer is a
function of its inputs alone; then it is not evaluated again.

The inputs of an evaluation at instant ``t`` (:class:`WindowInputs`):

* each time window's rows: the log numbers rows by arrival and keeps them in
  timestamp order, so the rows of ``[start, end)`` are the arrival numbers
  from :meth:`~engine.stream.transient.TransientLog.sequence_at` ``(start)`` to
  ``sequence_at(end)``: two windows hold the same rows iff these are equal;
* the stored graphs cut as of ``t``: each stream's rows before ``t`` (equal
  numbers: no row of the stream, so no absorbed delta, arrived in between),
  and the stored graphs the query reads, the same objects (a commit makes
  new ones for the graphs it changes) or, in a cluster, the same
  ``unchanged_since`` key.

Only time windows over logs in this process qualify (a count window moves
with every triple), and only queries whose answer depends on nothing else:
no ``SERVICE`` (a remote endpoint may change), no function whose value is
new at each call (``RAND``, ``NOW``, ``UUID``, ``STRUUID``, ``BNODE``), no
blank node in a ``CONSTRUCT`` template (each window makes fresh ones).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.rdf import BNode
from engine.sparql.exec import QueryTerms
from engine.sparql.syntax import ContinuousQuery
from engine.stream.incremental import same_graph
from engine.stream.registry import StreamState
from engine.stream.schedule import WindowSchedule

#: words whose presence makes an answer depend on more than the window's inputs
_VOLATILE = re.compile(r"\b(?:SERVICE|RAND|NOW|UUID|STRUUID|BNODE)\b", re.IGNORECASE)


@dataclass(frozen=True)
class WindowInputs:
    """What one evaluation read: per time window, its rows' arrival numbers
    ``(first, end)`` (``None`` when empty); per stream, the number of its
    first row at or after the instant; the IDs of the stored graphs read and
    the graphs (None: absent), in order."""

    windows: tuple[tuple[int, int] | None, ...]
    as_of: tuple[int, ...]
    graph_ids: tuple[int, ...]
    graphs: tuple

    def same_as(self, other: WindowInputs | None) -> bool:
        return (other is not None and self.windows == other.windows and self.as_of == other.as_of
                and self.graph_ids == other.graph_ids
                and all(same_graph(a, b) for a, b in zip(self.graphs, other.graphs, strict=True)))


def may_reuse(spec: ContinuousQuery, schedule: WindowSchedule, streams: list[StreamState]) -> bool:
    """Whether ``spec``'s answer at an instant is a function of its
    :class:`WindowInputs` alone (and those can be read)."""
    if schedule.count is not None or not all(hasattr(s.log, "sequence_at") for s in streams):
        return False
    if any(isinstance(term, BNode) for triple in spec.query.template
           for term in (triple.subject, triple.predicate, triple.object)):
        return False
    return _VOLATILE.search(spec.text) is None


def window_inputs(spec: ContinuousQuery, schedule: WindowSchedule, streams: list[StreamState], close: int,
                  graphs: dict, terms: QueryTerms) -> WindowInputs:
    """The inputs of the evaluation at ``close`` over the snapshot's ``graphs``."""
    windows = []
    for stream, (start, end) in zip(streams, schedule.bounds(close), strict=True):
        first, after = stream.log.sequence_at(start), stream.log.sequence_at(end)
        windows.append((first, after) if after > first else None)
    as_of = tuple(stream.log.sequence_at(close) for stream in streams)
    dataset = spec.query.dataset
    if dataset is None and spec.language == "rspql":
        ids = list(graphs)  # the default graph and every named graph
    else:
        ids = [terms.encode(g) for g in (*dataset.default, *dataset.named)] if dataset else []
    return WindowInputs(tuple(windows), as_of, tuple(ids), tuple(graphs.get(graph_id) for graph_id in ids))
