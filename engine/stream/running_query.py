"""A registered continuous query at run time: its clock, its windows'
evaluation on the hybrid store, its report policy and its retained events."""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Callable

import numpy as np

from engine.rdf.terms import XSD_INTEGER, Literal
from engine.sparql.exec.dataset import merged
from engine.sparql.exec.executor import Executor, QueryDataset
from engine.sparql.exec.forms import construct
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.expr.evaluate import EvalContext, ExprError
from engine.sparql.syntax.registration import ContinuousQuery
from engine.store.layered_graph import LayeredGraph
from engine.store.memory_graph import MemoryGraph
from engine.store.quad_store import DEFAULT_GRAPH, QuadStore
from engine.store.union_graph import UnionGraph
from engine.stream.events import WindowEvent
from engine.stream.registry import StreamState
from engine.stream.transient import WindowContent
from engine.stream.windows import common_step, first_window_after, first_window_holding

#: C-SPARQL's f:timestamp(?s, ?p, ?o): when the triple entered the window
TIMESTAMP_FUNCTION = "http://larkc.eu/csparql/sparql/jena/ext#timestamp"

#: receives each window's event, and None once when the query is unregistered
Subscriber = Callable[[WindowEvent | None], None]


def _as_of(table, cutoffs: dict[int, int]):
    return table.as_of(cutoffs) if isinstance(table, LayeredGraph) else table


class RunningQuery:
    """State of one registered query; the stream engine drives it under its lock."""

    def __init__(self, spec: ContinuousQuery, streams: list[StreamState], retain: int) -> None:
        self.spec = spec
        self.streams = streams
        self.step_ms, self.count = common_step(spec.windows)
        self.next_index: int | None = None
        self.sequence = 0
        self.previous: Counter | None = None
        self.events: deque[WindowEvent] = deque(maxlen=retain)
        self.subscribers: list[Subscriber] = []
        self._subscribers_lock = threading.Lock()
        self.registered_at = time.time()
        self.last_evaluation_ms: float | None = None
        self._start_clock()

    # ------------------------------------------------------------------ clock
    def _start_clock(self) -> None:
        if self.count is not None:
            self.next_index = self.streams[0].log.total // self.count + 1
            return
        marks = [s.watermark for s in self.streams if s.watermark is not None]
        if marks:
            self.next_index = first_window_after(min(marks), self.step_ms)

    def start_at(self, first_item_ts: int) -> None:
        """The first data item reached one of the query's streams."""
        if self.next_index is None and self.step_ms is not None:
            self.next_index = first_window_holding(first_item_ts, self.step_ms)

    def due(self) -> int | None:
        """The close (ms, or sequence number for count windows) of the next window
        if all its data has arrived, else None."""
        if self.next_index is None:
            return None
        if self.count is not None:
            close = self.next_index * self.count
            return close if self.streams[0].log.total >= close else None
        close = self.next_index * self.step_ms
        for s in self.streams:
            if s.watermark is None or s.watermark < close:
                return None
        return close

    def pending_close_ms(self) -> int | None:
        """Smallest application time a future evaluation reads the store as of."""
        if self.next_index is None or self.count is not None:
            return None
        return self.next_index * self.step_ms

    def oldest_needed(self) -> tuple[int | None, int | None]:
        """``(ts, seq)`` before which this query needs no transient data."""
        if self.next_index is None:
            return None, None
        if self.count is not None:
            return None, (self.next_index - 1) * self.count
        close = self.next_index * self.step_ms
        return close - max(w.range_ms for w in self.spec.windows), None

    # ------------------------------------------------------------- evaluation
    def window_contents(self, close: int) -> list[WindowContent]:
        if self.count is not None:
            return [self.streams[0].log.sequence_range(close - self.count, close)]
        return [
            s.log.time_range(close - w.range_ms, close)
            for s, w in zip(self.streams, self.spec.windows, strict=True)
        ]

    def evaluate(self, quad_store: QuadStore, service_client, close: int, closed_at: float) -> WindowEvent:
        """Run the query over window ``close`` and apply the report policy."""
        started = time.perf_counter()
        contents = self.window_contents(close)
        terms = QueryTerms(quad_store.terms, transient=True)
        snapshot = quad_store.snapshot()
        if self.count is not None:
            last = [int(c.ts.max()) + 1 for c in contents if len(c)]
            cutoff = last[0] if last else 0
        else:
            cutoff = close
        cutoffs = {s.number: cutoff for s in self.streams}
        dataset = self._dataset(snapshot.graphs, terms, contents, cutoffs)
        ctx = EvalContext(base=self.spec.query.base)
        ctx.functions[TIMESTAMP_FUNCTION] = _timestamp_function(contents, terms)
        table = Executor(terms, dataset, ctx, service_client).run(self.spec.query.pattern)
        if self.count is not None:
            start, end = (int(contents[0].ts.min()), cutoff) if len(contents[0]) else (0, 0)
        else:
            start, end = close - max(w.range_ms for w in self.spec.windows), close
        event = self._report(table, terms, start, end)
        event.closed_at = closed_at
        self.next_index += 1
        self.last_evaluation_ms = (time.perf_counter() - started) * 1000
        return event

    def _dataset(
        self, graphs: dict, terms: QueryTerms, contents: list[WindowContent], cutoffs: dict[int, int]
    ) -> QueryDataset:
        query = self.spec.query
        stored_default = list(query.dataset.default) if query.dataset else []
        stored_named = list(query.dataset.named) if query.dataset else []
        named = {}
        for g in stored_named:
            gid = terms.encode(g)
            named[gid] = _as_of(graphs.get(gid) or MemoryGraph.empty(), cutoffs)
        if self.spec.language == "rspql":
            if stored_default:
                default = merged([_as_of(graphs.get(terms.encode(g)) or MemoryGraph.empty(), cutoffs)
                                   for g in stored_default])
            else:
                default = _as_of(graphs.get(DEFAULT_GRAPH) or MemoryGraph.empty(), cutoffs)
            if not query.dataset:
                named = {g: _as_of(t, cutoffs) for g, t in graphs.items() if g != DEFAULT_GRAPH}
            windows = {
                w.name: MemoryGraph(c.s, c.p, c.o) for w, c in zip(self.spec.windows, contents, strict=True)
            }
            return QueryDataset(default, named, windows)
        # C-SPARQL: the default graph is the RDF merge of the windows and the FROM graphs
        window = MemoryGraph(
            np.concatenate([c.s for c in contents]),
            np.concatenate([c.p for c in contents]),
            np.concatenate([c.o for c in contents]),
        )
        if not stored_default:
            return QueryDataset(window, named)
        stored = merged([_as_of(graphs.get(terms.encode(g)) or MemoryGraph.empty(), cutoffs)
                          for g in stored_default])
        fresh = ~UnionGraph([stored]).contains(window.s, window.p, window.o)
        window = MemoryGraph(window.s[fresh], window.p[fresh], window.o[fresh], unique=True)
        return QueryDataset(UnionGraph([window, stored]), named)

    def _report(self, table, terms: QueryTerms, start: int, end: int) -> WindowEvent:
        query = self.spec.query
        self.sequence += 1
        event = WindowEvent(self.spec.name, self.sequence, start, end, query.form,
                            [v.name for v in query.variables])
        if query.form == "ASK":
            event.boolean = table.length > 0
            return event
        if query.form == "CONSTRUCT":
            event.triples = self._policy(construct(query.template, table, terms))
            return event
        columns = [terms.decode_column(table.column(v)) for v in event.variables]
        rows = list(zip(*columns, strict=True)) if columns else [()] * table.length
        event.rows = self._policy(rows)
        return event

    def _policy(self, rows: list) -> list:
        """RSTREAM: all rows; ISTREAM / DSTREAM: the multiset difference with
        the previous window's rows (terms, so IDs freed meanwhile do not matter)."""
        if self.spec.report == "RSTREAM":
            return rows
        current = Counter(rows)
        previous = self.previous or Counter()
        self.previous = current
        delta = current - previous if self.spec.report == "ISTREAM" else previous - current
        return list(delta.elements())

    # ------------------------------------------------------------ subscribers
    def publish(self, event: WindowEvent) -> None:
        with self._subscribers_lock:
            self.events.append(event)
            subscribers = list(self.subscribers)
        for subscriber in subscribers:
            subscriber(event)

    def subscribe(self, subscriber: Subscriber, after_sequence: int | None = None) -> list[WindowEvent]:
        """Add a subscriber; returns the retained events after ``after_sequence``
        (for ``Last-Event-ID``) so the caller can replay them first."""
        with self._subscribers_lock:
            self.subscribers.append(subscriber)
            if after_sequence is None:
                return []
            return [e for e in self.events if e.sequence > after_sequence]

    def close(self) -> None:
        """Tell every subscriber the query is gone (they get None) and forget them."""
        with self._subscribers_lock:
            subscribers, self.subscribers = self.subscribers, []
        for subscriber in subscribers:
            subscriber(None)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        with self._subscribers_lock:
            if subscriber in self.subscribers:
                self.subscribers.remove(subscriber)

    def to_json(self) -> dict:
        spec = self.spec
        return {
            "name": spec.name,
            "language": spec.language,
            "report": spec.report,
            "form": spec.query.form,
            "output_stream": spec.output_stream.value if spec.output_stream else None,
            "windows": [
                {"stream": w.stream.value, "name": w.name.value if w.name else None,
                 "range_ms": w.range_ms, "step_ms": w.step_ms, "triples": w.triples}
                for w in spec.windows
            ],
            "next_window_close": None if self.next_index is None else self.next_index * (
                self.step_ms or self.count),
            "windows_reported": self.sequence,
            "last_evaluation_ms": self.last_evaluation_ms,
            "subscribers": len(self.subscribers),
            "query": spec.text,
        }


def _timestamp_function(contents: list[WindowContent], terms: QueryTerms):
    """f:timestamp over the window's rows: the latest timestamp of the triple.

    The first call sorts the window's rows by (s, p, o, ts) once; each call is
    then a binary search on the subject and a scan of its few rows."""
    index: list[np.ndarray] = []

    def build() -> None:
        s = np.concatenate([c.s for c in contents])
        p = np.concatenate([c.p for c in contents])
        o = np.concatenate([c.o for c in contents])
        ts = np.concatenate([c.ts for c in contents])
        order = np.lexsort((ts, o, p, s))
        index.extend((s[order], p[order], o[order], ts[order]))

    def timestamp(s, p, o) -> Literal:
        if not index:
            build()
        subjects, predicates, objects, stamps = index
        sid, pid, oid = terms.encode(s), terms.encode(p), terms.encode(o)
        lo = int(np.searchsorted(subjects, sid, side="left"))
        hi = int(np.searchsorted(subjects, sid, side="right"))
        hits = np.flatnonzero((predicates[lo:hi] == pid) & (objects[lo:hi] == oid))
        if not len(hits):
            raise ExprError("f:timestamp: the triple is not in the window")
        return Literal(str(int(stamps[lo + hits[-1]])), XSD_INTEGER)

    return timestamp
