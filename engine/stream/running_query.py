"""A registered continuous query at run time: the parts that drive it, composed.

Each job has its own module: the window clock (:mod:`~engine.stream.schedule`),
the shape it may share with other queries (:mod:`~engine.stream.shared_shape`),
the dataset of one window (:mod:`~engine.stream.window_dataset`), what a
window reports (:mod:`~engine.stream.report_policy`) and where the reports go
(:mod:`~engine.stream.broadcast`). This class evaluates one window with them
and numbers the events; the stream engine calls it under its lock, within
the window's bounds (time, rows).

An evaluation that fails changes nothing here: the answer is worked out
before the sequence number, the report policy's previous rows and the
incremental state move, so the engine reports the window as failed
(:meth:`RunningQuery.fail`) and the next window is reported against the last
one that was evaluated. A window whose inputs are those of the last one
evaluated has its answer (:mod:`~engine.stream.unchanged`) and is not
evaluated again.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.sparql.exec import Executor, QueryTerms, Solutions, construct_ids, merged
from engine.sparql.expr import EvalContext
from engine.sparql.plan import HeldOrders
from engine.sparql.syntax import ContinuousQuery
from engine.store import QuadStore
from engine.stream.broadcast import Broadcast
from engine.stream.clock_cohorts import ClockCohort
from engine.stream.events import WindowBounds, WindowError, WindowEvent
from engine.stream.id_rows import IdMultiset, WindowRows
from engine.stream.incremental import IncrementalWindows, delta_shape
from engine.stream.kept_window import KeptWindow
from engine.stream.registry import StreamState
from engine.stream.report_policy import ReportPolicy
from engine.stream.report_trigger import ReportTrigger
from engine.stream.schedule import WindowSchedule
from engine.stream.shared_shape import shared_shape
from engine.stream.subscription import DEFAULT_CAPACITY, Subscription
from engine.stream.unchanged import WindowInputs, may_reuse, window_inputs
from engine.stream.window_dataset import (
    TIMESTAMP_FUNCTION,
    Window,
    read_window,
    stored_graphs,
    timestamp_function,
    window_dataset,
)
from engine.stream.window_stats import WindowStats


@dataclass
class QueryProgress:
    """What a restart needs to resume a query where it stopped. ``next_index``
    is its clock's state (:class:`~engine.stream.schedule.WindowSchedule`):
    the next instant over the clock unit (with one STEP, the index of the
    next window), so a checkpoint taken before windows could differ resumes alike."""

    next_index: int | None
    sequence: int
    previous_rows: Counter
    events: list[WindowEvent]


@lru_cache(maxsize=1024)
def _stream_windows(names: tuple[tuple[str, str | None], ...],
                    bounds: tuple[tuple[int, int], ...]) -> tuple[WindowBounds, ...]:
    """An event's stream windows, made once for all the queries that report
    the same ones at the same close (a group of K queries: K events, one
    tuple; it is immutable)."""
    return tuple(WindowBounds(stream, name, start, end)
                 for (stream, name), (start, end) in zip(names, bounds, strict=True))


class RunningQuery:
    """One registered query: evaluates its due windows and publishes their events."""

    def __init__(self, spec: ContinuousQuery, streams: list[StreamState], retain: int,
                 incremental: str = "auto") -> None:
        self.spec = spec
        self.streams = streams
        self.schedule = WindowSchedule(spec.windows, streams)
        shape = None if incremental == "never" else delta_shape(spec)
        #: the state of incremental evaluation, for the shapes that allow it
        self.incremental = (None if shape is None else
                            IncrementalWindows(shape, self.schedule.range_ms, self.schedule.step_ms,
                                               always=incremental == "always"))
        if self.incremental is not None:
            self.schedule.lookback_ms = self.schedule.step_ms  # the rows leaving the window
        #: what the query keeps of its window from step to step: time windows over
        #: logs in this process (a count window is copied per window anyway)
        self.kept_window = (KeptWindow() if self.schedule.count is None
                            and all(s.log.in_process for s in streams) else None)
        self.variable_names = [v.name for v in spec.query.variables]
        width = 3 if spec.query.form == "CONSTRUCT" else len(self.variable_names)
        self.policy = ReportPolicy(spec.report, width, keep_result=self.incremental is not None)
        #: which window closes are reported (the registration's report strategy)
        self.trigger = ReportTrigger(spec.report_strategy, self.schedule, streams)
        self.broadcast = Broadcast(retain)
        #: windows reported so far (the sequence number of the last event)
        self.sequence = 0
        self.registered_at = time.time()
        self.last_evaluation_ms: float | None = None
        #: windows whose evaluation failed, per reason (since this process started), and the last one
        self.failures: Counter[str] = Counter()
        self.last_error: WindowEvent | None = None
        #: evaluation times and report delays of the windows published (for monitoring)
        self.stats = WindowStats()
        #: the orders of the query's patterns, made at its first window and kept
        #: until the window's workload moves them (Strider's trigger)
        self.plans = HeldOrders()
        #: the query's pattern with constants abstracted, if it can share its plan
        self.shape = shared_shape(spec)
        #: a small number equal for the registered queries of one shape (the engine's)
        self.shape_id: int | None = None
        #: the dictionary and the IDs of the shape's constants once all are pinned
        #: (:mod:`~engine.stream.shared_plan`'s, which looks them up at every window until then)
        self.constant_ids: tuple | None = None
        #: this query's clock cohort (the engine's; :mod:`~engine.stream.clock_cohorts`)
        self.clock: ClockCohort | None = None
        #: a small number equal for the registered copies of this query (the engine's;
        #: :mod:`~engine.stream.duplicates`), None for a query that shares with none
        self.duplicate_id: int | None = None
        #: set while this query leads copies: its next evaluation keeps its whole
        #: answer (before the report policy) in ``answer`` for them
        self.keep_answer = False
        #: whether a window whose inputs did not change reuses the last answer
        #: (:mod:`~engine.stream.unchanged`), and the inputs of that answer
        self.reuse = may_reuse(spec, self.schedule, streams)
        self._inputs: WindowInputs | None = None
        #: the whole answer of the last window, kept while this query leads copies
        #: or may reuse it (None: not kept, or the report policy keeps it)
        self.answer: WindowRows | bool | None = None
        #: windows answered without evaluation, their inputs unchanged
        self.unchanged_windows = 0
        #: each window's (stream IRI, name or None), as its events name it
        self._window_names = tuple((w.stream.value, w.name.value if w.name else None) for w in spec.windows)

    def due(self) -> int | None:
        """The close of the next window this query reports, once its data is
        complete; the closes its report strategy passes over are skipped on
        the way, without evaluation (the next one evaluated is in full)."""
        while (close := self.schedule.due()) is not None and not self.trigger.reports_at(close):
            self.schedule.advance()
            self._inputs = None
            if self.incremental is not None:
                self.incremental.forget()
        return close

    def evaluate(self, quad_store: QuadStore, service_client, close: int, closed_at: float) -> WindowEvent:
        """Run the query over the window closing at ``close`` and apply the
        report policy: from the change since the previous window when that is
        exact and cheaper (:mod:`~engine.stream.incremental`), else in full."""
        started = time.perf_counter()
        terms = QueryTerms(quad_store.terms, transient=True)
        graphs = quad_store.snapshot().graphs
        inputs = (window_inputs(self.spec, self.schedule, self.streams, close, graphs, terms)
                  if self.reuse else None)
        if inputs is not None and inputs.same_as(self._inputs):
            return self._unchanged(close, closed_at, started)
        window = read_window(self.spec, self.schedule, close)
        stored = stored_graphs(self.spec, window, self.streams, graphs, terms)
        beside = None
        if self.incremental is not None:
            beside = merged(list(stored)) if stored else None
            change = self.incremental.change(self.streams, stored, beside, terms, self.spec.query.base, close,
                                             self.kept_window)
            if change is not None:
                event = self._new_event(window.start_ms, window.end_ms, window.bounds)
                event.reported = self.policy.apply_change(*change)
                self.answer = self.policy.result() if self.keep_answer else None
                self._inputs = inputs
                return self._close(event, closed_at, self._elapsed(started, delta=True))
            if beside is not None:
                stored = (beside,)  # merged once for both paths
        dataset = window_dataset(self.spec, window, self.streams, graphs, terms, stored, beside,
                                 self.kept_window)
        ctx = EvalContext(base=self.spec.query.base)
        ctx.functions[TIMESTAMP_FUNCTION] = timestamp_function(window.rows, terms)
        executor = Executor(terms, dataset, ctx, service_client, plans=self.plans)
        solutions = executor.run(self.spec.query.pattern)
        event = self.report(solutions, terms, window, closed_at, 0.0)
        self._inputs = inputs
        if self.incremental is not None:
            self.incremental.based_on(close, stored)
        self.last_evaluation_ms = self._elapsed(started, delta=False)
        return event

    def _unchanged(self, close: int, closed_at: float, started: float) -> WindowEvent:
        """The event of the window closing at ``close``, whose inputs are those
        of the last window evaluated: its answer is that window's."""
        event = self._new_event(*self._bounds(close))
        if self.answer is None:  # the report policy holds it
            event.reported = self.policy.unchanged()
            if self.keep_answer:
                self.answer = self.policy.result()
        else:
            self._apply(event, self.answer)
        if self.incremental is not None:
            self.incremental.unchanged(close)
        self.unchanged_windows += 1
        return self._close(event, closed_at, (time.perf_counter() - started) * 1000)

    def hand_over(self) -> WindowRows | bool | None:
        """The whole answer kept for this query's copies; it stops leading them."""
        answer, self.keep_answer = self.answer, False
        if not self._reuses_answer:
            self.answer = None
        return answer

    @property
    def _reuses_answer(self) -> bool:
        """Whether the next window may need the last answer kept here (it
        may reuse it, and the report policy does not keep it)."""
        return self.reuse and (self.spec.query.form == "ASK" or not self.policy.keep_result)

    def _elapsed(self, started: float, delta: bool) -> float:
        """Milliseconds since ``started``, recorded for the path's running cost."""
        elapsed_ms = (time.perf_counter() - started) * 1000
        if self.incremental is not None:
            self.incremental.costs.record(delta, elapsed_ms)
        return elapsed_ms

    def report(self, solutions: Solutions, terms: QueryTerms, window: Window, closed_at: float,
               elapsed_ms: float) -> WindowEvent:
        """The event of a window from its solutions; the clock moves on. The
        answer is made before anything of the query's state changes (making
        it may still fail)."""
        form = self.spec.query.form
        if form == "ASK":
            answer: WindowRows | bool = solutions.length > 0
        else:
            if form == "CONSTRUCT":
                ids = construct_ids(self.spec.query.template, solutions, terms)
            elif self.variable_names:
                ids = np.stack([solutions.column(v) for v in self.variable_names], axis=1)
            else:
                ids = np.zeros((solutions.length, 0), dtype=np.int64)
            answer = WindowRows(ids, terms.dictionary, terms.decode_column)
        event = self._new_event(window.start_ms, window.end_ms, window.bounds)
        self._apply(event, answer)
        return self._close(event, closed_at, elapsed_ms)

    def _apply(self, event: WindowEvent, answer: WindowRows | bool, counted: IdMultiset | None = None,
               reported: dict | None = None, afresh: bool = False) -> None:
        """Put the window's ``answer`` into ``event`` through the report policy
        (``counted`` and ``reported``: see :meth:`ReportPolicy.apply`); kept
        whole for this query's copies when it leads them (in this round: as
        IDs), and for the next window if that may reuse it and the policy
        does not keep it already (decoded: its IDs may be freed by then).
        ``afresh``: the next window is evaluated in full
        (:meth:`ReportPolicy.apply_afresh`)."""
        if isinstance(answer, bool):
            event.boolean = answer
            self.answer = answer if self.keep_answer or self._reuses_answer else None
            return
        apply = self.policy.apply_afresh if afresh else self.policy.apply
        event.reported = apply(answer, counted, reported)
        self.answer = (answer.detached() if self._reuses_answer else
                       answer if self.keep_answer else None)

    def report_answer(self, answer: WindowRows | bool, start_ms: int, end_ms: int,
                      bounds: Sequence[tuple[int, int]], closed_at: float, counted: IdMultiset | None = None,
                      reported: dict | None = None) -> WindowEvent:
        """The event of a window whose whole ``answer`` a copy of this query
        worked out (:mod:`~engine.stream.duplicates`): numbered and reported
        through this query's own policy (``counted``, ``reported``: see
        :meth:`ReportPolicy.apply`); the clock moves on. The incremental
        state does not follow the copy's: this query's next window alone is
        evaluated in full."""
        started = time.perf_counter()
        event = self._new_event(start_ms, end_ms, bounds)
        self._apply(event, answer, counted, reported, afresh=True)
        self._inputs = None
        if self.incremental is not None:
            self.incremental.forget()
        return self._close(event, closed_at, (time.perf_counter() - started) * 1000)

    def fail(self, close: int, closed_at: float, error: WindowError, elapsed_ms: float) -> WindowEvent:
        """The event of the window closing at ``close`` whose evaluation
        failed: numbered as any window, with ``error`` instead of an answer.
        The report policy keeps the rows of the last window evaluated (an
        ISTREAM or DSTREAM client's running total stays right), the next
        window is evaluated in full, and the clock moves on."""
        event = self._new_event(*self._bounds(close))
        event.error = error
        self.failures[error.reason] += 1
        self.last_error = event
        if self.incremental is not None:
            self.incremental.forget()
        return self._close(event, closed_at, elapsed_ms)

    def report_rows(self, rows: WindowRows, window: Window, closed_at: float,
                    elapsed_ms: float) -> WindowEvent:
        """The event of a SELECT window whose rows the group evaluation this
        query shares worked out; the clock moves on."""
        event = self._new_event(window.start_ms, window.end_ms, window.bounds)
        self._apply(event, rows, afresh=True)
        self._inputs = None
        if self.incremental is not None:
            self.incremental.forget()
        return self._close(event, closed_at, elapsed_ms)

    def _new_event(self, start_ms: int, end_ms: int, bounds: Sequence[tuple[int, int]]) -> WindowEvent:
        """The next numbered event, for the evaluation of ``[start_ms, end_ms)``
        whose stream windows have ``bounds``."""
        self.sequence += 1
        return WindowEvent(self.spec.name, self.sequence, start_ms, end_ms, self.spec.query.form,
                           self.variable_names, windows=_stream_windows(self._window_names, tuple(bounds)))

    def _bounds(self, close: int) -> tuple[int, int, Sequence[tuple[int, int]]]:
        """The bounds an evaluation at ``close`` is reported with (as
        :meth:`_new_event` takes them); those of time windows are known
        without reading them."""
        if self.schedule.count is None:
            bounds = self.schedule.bounds(close)
            return min(start for start, _ in bounds), close, bounds
        window = read_window(self.spec, self.schedule, close)
        return window.start_ms, window.end_ms, window.bounds

    def _close(self, event: WindowEvent, closed_at: float, elapsed_ms: float) -> WindowEvent:
        event.closed_at = closed_at
        self.schedule.advance()
        self.last_evaluation_ms = elapsed_ms
        return event

    def progress(self) -> QueryProgress:
        """Where this query stands, for a checkpoint."""
        return QueryProgress(self.schedule.next_index, self.sequence, self.policy.previous_rows(),
                             self.broadcast.retained())

    def resume(self, progress: QueryProgress) -> None:
        """Continue from a checkpoint's ``progress``: the next window is the
        first one not reported, numbered after the last one reported."""
        self.schedule.next_index = progress.next_index
        self.sequence = progress.sequence
        self.policy.restore(progress.previous_rows)
        self.broadcast.restore(progress.events)

    def publish(self, event: WindowEvent) -> None:
        self.stats.record((self.last_evaluation_ms or 0.0) / 1000, event.reported_at - event.closed_at)
        self.broadcast.publish(event)

    def subscribe(self, after_sequence: int | None = None, capacity: int = DEFAULT_CAPACITY) -> Subscription:
        """A queue of this query's events for one consumer, replaying the retained
        events after ``after_sequence`` (for ``Last-Event-ID``) first."""
        return self.broadcast.subscribe(after_sequence, capacity)

    def close(self) -> None:
        """The query is unregistered: every subscription ends, and the report
        policy gives back the term IDs it held."""
        self.broadcast.close()
        self.policy.forget()

    def _evaluation_json(self) -> dict:
        """How this query's windows were evaluated: in full, or from their change."""
        if self.incremental is None:
            return {"incremental": False}
        costs = self.incremental.costs
        return {"incremental": True, "full_windows": costs.full_windows, "delta_windows": costs.delta_windows,
                "full_ms_recent": costs.cost(False), "delta_ms_recent": costs.cost(True)}

    def _last_error_json(self) -> dict | None:
        """The last failed window: which, when, why."""
        event = self.last_error
        if event is None or event.error is None:
            return None
        return {"sequence": event.sequence, "window": {"start_ms": event.start_ms, "end_ms": event.end_ms},
                "reason": event.error.reason, "message": event.error.message,
                "reported_at_ms": round(event.reported_at * 1000)}

    def to_json(self) -> dict:
        spec = self.spec
        return {
            "name": spec.name,
            "language": spec.language,
            "report": spec.report,
            "report_strategy": {"name": spec.report_strategy.name,
                                "period_ms": spec.report_strategy.period_ms,
                                "windows_skipped": self.trigger.skipped},
            "form": spec.query.form,
            "output_stream": spec.output_stream.value if spec.output_stream else None,
            "windows": [
                {"stream": w.stream.value, "name": w.name.value if w.name else None,
                 "range_ms": w.range_ms, "step_ms": w.step_ms, "triples": w.triples}
                for w in spec.windows
            ],
            "next_window_close": self.schedule.next_close(),
            "windows_reported": self.sequence,
            "windows_failed": sum(self.failures.values()),
            "last_error": self._last_error_json(),
            "last_evaluation_ms": self.last_evaluation_ms,
            "evaluation": self._evaluation_json(),
            "subscribers": len(self.broadcast),
            "query": spec.text,
        }
