"""The stream side of the hybrid store: declare streams, ingest items,
register continuous queries, fire windows in order.

One ingest call is one batch: its items are checked first (a late item
rejects the whole batch, so nothing of it is ingested), then encoded, its
timeless triples absorbed into the stored graph of the stream as one
timestamped delta in one store transaction (a one-shot query sees whole
batches or nothing), all its triples appended to the stream's transient log,
and the watermark advanced. Then every query whose next window has all its
data fires, window after window, in order; the output of ``REGISTER STREAM``
queries is ingested into their output streams, which may fire more queries.
Last, transient data and stored deltas that no window can reach any more are
freed or compacted.

With a journal (:class:`StreamJournal`, the durability layer's write-ahead
log), every batch, declaration, drop, registration and unregistration is written
to it under the lock before it is applied, in the order applied, and the
call returns once the journal says it is durable (waited for outside the
lock, so one disk flush covers several requests).

Every window is evaluated within the engine's bounds (``timeout`` seconds,
``max_rows`` rows per step, and the server's :class:`~engine.store.Shutdown`),
since it runs under the engine's lock: a window over them (or failing
otherwise) is reported by an event with its error instead of an answer, and
the query goes on with its next window; other queries and streams are not
affected. The server's shutdown leaves the windows still due unevaluated:
the request is answered (its batch is logged, and a data directory's
recovery evaluates them at the next start).

Events leave through each query's :class:`~engine.stream.broadcast.Broadcast`
into subscriber queues that consumers drain on their own side: under its lock
the engine never runs a consumer's code. Callers make one call per request
(``ingest_body`` parses a POST body outside the lock, then ingests it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np

from engine.rdf import IRI
from engine.sparql.syntax import ContinuousQuery, parse_registration
from engine.store import (
    QueryCancelled,
    RowBudgetExceeded,
    Shutdown,
    StoreUnavailable,
    deadline_check,
    row_budget,
)
from engine.stream.batch_rows import batch_rows
from engine.stream.clock_cohorts import ClockCohort, ClockCohorts
from engine.stream.duplicates import duplicate_key, fan_out
from engine.stream.errors import (
    BadRegistration,
    DuplicateName,
    LateItem,
    StreamInUse,
    TooManyWindows,
    UnknownQuery,
    UnknownStream,
)
from engine.stream.events import WindowError, WindowEvent
from engine.stream.incremental import INCREMENTAL_MODES
from engine.stream.items import Item, read_batch
from engine.stream.registry import StreamDefinition, StreamState
from engine.stream.running_query import RunningQuery
from engine.stream.shared_plan import evaluate_group
from engine.stream.spelled_batch import SpelledBatch
from engine.stream.stream_names import derived_name
from engine.stream.subscription import DEFAULT_CAPACITY, Subscription
from engine.stream.transient import StreamLog, TransientLog
from engine.stream.window_stats import WindowStats

log = logging.getLogger("rivulet.streams")

DEFAULT_RETAINED_EVENTS = 1000
#: windows all queries together may report in one ingest request
MAX_WINDOWS_AT_ONCE = 100_000
#: how often the idle clock moves the watermark of idle wall-clock streams
IDLE_TICK_SECONDS = 0.1
#: seconds a due window waits for a store that is briefly unavailable (a shard restarting)
UNAVAILABLE_PATIENCE = 60.0


class StreamJournal(Protocol):
    """Where the engine's acknowledged changes are logged before they apply."""

    def log_batch(self, name: str, batch: SpelledBatch, deliveries: Sequence[str] = ()) -> int: ...
    def log_declare(self, definition: StreamDefinition) -> int: ...
    def log_drop(self, name: str) -> int: ...
    def log_register(self, name: str, text: str, base: str | None) -> int: ...
    def log_unregister(self, name: str) -> int: ...
    def wait_durable(self, position: int) -> None: ...


class StreamEngine:
    """Streams and continuous queries over one :class:`engine.api.Store`."""

    def __init__(self, store, retain_events: int = DEFAULT_RETAINED_EVENTS,
                 incremental: str = "auto", timeout: float | None = None,
                 max_rows: int | None = None) -> None:
        """``timeout`` (seconds) and ``max_rows`` (rows one step may produce)
        bound each window's evaluation; None: no bound."""
        if incremental not in INCREMENTAL_MODES:
            raise ValueError(f"incremental must be one of {INCREMENTAL_MODES}, not {incremental!r}")
        self.store = store
        self.retain_events = retain_events
        self.timeout = timeout
        self.max_rows = max_rows
        #: the server's shutdown: once its grace has run out, a window being evaluated stops
        self.shutdown = Shutdown()
        #: when queries evaluate windows from their change (:mod:`~engine.stream.incremental`)
        self.incremental = incremental
        self._lock = threading.RLock()
        self.streams: dict[str, StreamState] = {}
        self.queries: dict[str, RunningQuery] = {}
        #: the queries' clocks by cohort (per-batch bookkeeping a step per cohort)
        self._clocks = ClockCohorts()
        self._next_stream_number = 0
        #: a number per shared shape key (grouping by a small int, not by the key)
        self._shape_ids: dict[tuple, int] = {}
        #: a number per duplicate key, and how many registered queries have each
        self._duplicate_ids: dict[tuple, int] = {}
        self._copies: Counter[int] = Counter()
        self._idle_clock: threading.Thread | None = None
        self._closed = threading.Event()
        #: where changes are logged before they apply (None: nothing is durable)
        self.journal: StreamJournal | None = None

    def lock(self) -> threading.RLock:
        """The engine's lock (a checkpoint holds it to cut the log at a consistent point)."""
        return self._lock

    def _durable(self, position: int | None) -> None:
        if position is not None and self.journal is not None:
            self.journal.wait_durable(position)

    # ---------------------------------------------------------------- streams
    def declare_stream(self, definition: StreamDefinition, number: int | None = None
                       ) -> tuple[StreamState, bool]:
        """Declare a stream, or redeclare one with new settings; ``True`` if new.

        A stream's IRI never changes (a name declared with another IRI is
        refused, as is an IRI another name has). While a registered query
        reads the stream or writes into it, a redeclaration may change its
        idle policy only: the timing predicates and the graph decide what the
        query's windows read from the store. ``number`` names the stream in
        the store's timestamped deltas; a new stream takes the log position
        of its declaration (or the next number, without a journal), so that a
        stream declared again after a drop never shares the number of the
        old one's deltas, and a recovery, which passes the logged position,
        numbers every stream as before."""
        with self._lock:
            state = self.streams.get(definition.name)
            self._check_declaration(definition, state)
            position = self.journal.log_declare(definition) if self.journal is not None else None
            encode = self.store.terms.encode
            timing_ids = np.array([encode(IRI(p)) for p in definition.timing], dtype=np.int64)
            timeless_ids = (None if definition.timeless is None else
                            np.array([encode(IRI(p)) for p in definition.timeless], dtype=np.int64))
            created = state is None
            if created:
                number = self._next_number(number if number is not None else position)
                state = StreamState(definition, number, timing_ids, timeless_ids,
                                    encode(definition.stored_graph), self._new_log(number))
                self.streams[definition.name] = state
            else:
                state.definition = definition
                state.timing_ids, state.timeless_ids = timing_ids, timeless_ids
                state.graph_id = encode(definition.stored_graph)
            if definition.idle == "wallclock":
                self._start_idle_clock()
        self._durable(position)
        return state, created

    def _check_declaration(self, definition: StreamDefinition, state: StreamState | None) -> None:
        """Refuse, before anything is logged, a declaration that would take
        over another stream or change what a registered query reads."""
        name, iri = definition.name, definition.iri
        other = self._stream_by_iri(iri)
        if other is not None and other is not state:
            raise DuplicateName(f"stream IRI <{iri.value}> is already declared as {other.definition.name!r}")
        if state is None:
            return
        if state.definition.iri != iri:
            raise DuplicateName(f"stream {name!r} is <{state.definition.iri.value}>: a stream's IRI does not "
                                f"change; declare <{iri.value}> under another name, or drop {name!r} first "
                                f"(DELETE /streams/{name})")
        before, after = state.definition, definition
        changed = [label for label, field in (("timing", "timing"), ("timeless", "timeless"),
                                              ("graph", "stored_graph"))
                   if getattr(before, field) != getattr(after, field)]
        users = self._users(state)
        if changed and users:
            raise StreamInUse(f"stream {name!r} is read or written by {_listed(users)}: its "
                              f"{' and '.join(changed)} cannot change while "
                              f"{'it is' if len(users) == 1 else 'they are'} registered")

    def _next_number(self, wanted: int | None) -> int:
        """``wanted`` (a declaration's log position), or the next unused number."""
        number = self._next_stream_number if wanted is None else wanted
        self._next_stream_number = max(self._next_stream_number, number + 1)
        return number

    def drop_stream(self, name: str) -> None:
        """Drop stream ``name``: it is forgotten, its transient data freed
        (with the terms only that data used); what it absorbed stays in its
        stored graph. Refused (:class:`StreamInUse`) while a registered
        query reads it or writes into it (``REGISTER STREAM``): unregister
        them first. The same name may then be declared again, as a new
        stream."""
        with self._lock:
            state = self.stream(name)
            users = self._users(state)
            if users:
                raise StreamInUse(f"stream {name!r} is read or written by {_listed(users)}: unregister "
                                  f"{'it' if len(users) == 1 else 'them'} before dropping the stream")
            position = self.journal.log_drop(name) if self.journal is not None else None
            del self.streams[name]
            self._discard(state)
        self._durable(position)

    def _discard(self, state: StreamState) -> None:
        """Free a dropped stream's transient data and the terms only it used.
        The drop is done (and logged) whatever happens here: a cluster whose
        shards cannot take the expiry now frees their shares at the
        coordinator's next start, which empties the shards' stream logs."""
        try:
            freed = state.log.discard()
        except Exception as exc:
            log.warning("stream %r is dropped, but its transient rows stay on the shards until the "
                        "coordinator restarts: %s", state.definition.name, exc)
            return
        terms = self.store.quad_store.terms
        for chunk in freed:
            terms.release(chunk.term_ids)

    def _users(self, state: StreamState) -> list[str]:
        """The registered queries that read ``state`` or write into it."""
        iri = state.definition.iri
        return [name for name, running in self.queries.items()
                if any(s is state for s in running.streams) or running.spec.output_stream == iri]

    def _new_log(self, number: int) -> StreamLog:
        """The log of stream ``number``: in this process, unless the store
        keeps streams' rows elsewhere (a cluster's shards)."""
        factory = self.store.quad_store.stream_log_factory
        return factory(number) if factory is not None else TransientLog()

    def stream(self, name: str) -> StreamState:
        state = self.streams.get(name)
        if state is None:
            raise UnknownStream(f"unknown stream {name!r}")
        return state

    def _stream_by_iri(self, iri: IRI) -> StreamState | None:
        for state in self.streams.values():
            if state.definition.iri == iri:
                return state
        return None

    # ----------------------------------------------------------------- ingest
    def ingest_body(self, name: str, body: bytes, media_type: str, timestamp: str | None = None) -> dict:
        """Ingest the body of one POST to stream ``name`` (see
        :func:`~engine.stream.items.read_batch`); returns a summary. The body
        is read before the engine's lock is taken, its terms encoded under it."""
        self.stream(name)
        return self.ingest(name, read_batch(body, media_type, timestamp))

    def ingest(self, name: str, items: Iterable[Item] | SpelledBatch, absorb: bool = True,
               logged_at: int | None = None, deliveries: Sequence[str] = ()) -> dict:
        """Ingest one batch of items into stream ``name``; returns a summary.
        ``absorb=False``: the stored graphs hold the batch's timeless triples
        already, as they were then (a recovery replays the batch for its
        windows; absorbing it again would undo a later update's deletions).
        ``logged_at``: the batch's position in the journal, when a recovery
        replays it from there. ``deliveries``: the identities of the broker
        messages the batch is made of, logged with it and remembered by the
        stream (:mod:`~engine.stream.deliveries`)."""
        batch = items if isinstance(items, SpelledBatch) else SpelledBatch.of_items(list(items))
        with self._lock:
            state = self.stream(name)
            received = time.time()
            stamped = self._check_order(state, batch, int(received * 1000))
            if len(stamped):
                self._check_jump(state, int(stamped.times[-1]))
            journal = self.journal
            position = journal.log_batch(name, stamped, deliveries) if journal and len(stamped) else logged_at
            state.deliveries.add(deliveries)
            events, triples = self._ingest(state, stamped, received, absorb=absorb, batch=position)
            summary = {
                "stream": name,
                # a heartbeat (a timestamp alone) moves the watermark but is no item
                "items": int(np.count_nonzero(stamped.counts)),
                "triples": triples,
                "watermark_ms": state.watermark,
                "windows_fired": len(events),
                "windows_failed": sum(1 for event in events if event.error is not None),
            }
        self._durable(position)
        return summary

    def _check_jump(self, state: StreamState, watermark: int) -> None:
        """Refuse a watermark that would make the queries report more than
        MAX_WINDOWS_AT_ONCE windows together in this request (a heartbeat in
        the wrong unit, a clock in seconds...): every window must be
        reported, and that many would hold the server for minutes. The bound
        is per request, whatever the number of queries reading the stream."""
        total = sum(cohort.windows_until(watermark) for cohort in self._clocks.reading(state))
        if total > MAX_WINDOWS_AT_ONCE:
            pending = {running.spec.name: windows for running in self.queries.values()
                       if state in running.streams and (windows := running.schedule.windows_until(watermark))}
            largest = sorted(pending.items(), key=lambda item: -item[1])[:3]
            listed = ", ".join(f"{count:,} of query {name!r}" for name, count in largest)
            more = f" and {len(pending) - len(largest)} more queries" if len(pending) > len(largest) else ""
            raise TooManyWindows(
                f"timestamp {watermark} ms would close {total:,} windows at once ({listed}{more}); "
                f"one request may close at most {MAX_WINDOWS_AT_ONCE:,} windows of all queries together: "
                "send intermediate heartbeats, or check the timestamp's unit (milliseconds)"
            )

    def heartbeat(self, name: str, timestamp: int) -> dict:
        return self.ingest(name, [(timestamp, [])])

    @staticmethod
    def _check_order(state: StreamState, batch: SpelledBatch, now_ms: int) -> SpelledBatch:
        """The batch stamped (arrival time ``now_ms``); LateItem for the first
        item older than the one before it (or than the stream's watermark)."""
        stamped = batch.stamped(now_ms)
        times = stamped.times
        before = np.empty_like(times)
        if len(times):
            before[0] = times[0] if state.watermark is None else state.watermark
            before[1:] = times[:-1]
        late = np.flatnonzero(times < before)
        if len(late):
            state.late_items += len(times)  # the whole batch is refused
            raise LateItem(state.definition.name, int(times[late[0]]), int(before[late[0]]))
        return stamped

    def _ingest(
        self, state: StreamState, items: SpelledBatch, received: float,
        from_producer: bool = True, absorb: bool = True, batch: int | None = None,
    ) -> tuple[list, int]:
        """Absorb a batch and fire the windows it completes: ``(events, triples logged)``."""
        triples = self._absorb(state, items, from_producer, absorb, batch)
        events = self._fire_due(received)
        self._reclaim()
        return events, triples

    def _absorb(
        self, state: StreamState, items: SpelledBatch, from_producer: bool = True,
        absorb: bool = True, batch: int | None = None,
    ) -> int:
        """Encode a batch, absorb its timeless triples into the stream's stored
        graph (one transaction, told the batch's journal position ``batch``;
        not with ``absorb=False``), log all its triples (each item's distinct
        ones: :mod:`~engine.stream.batch_rows`), advance the watermark; returns
        the number of triples logged.

        Terms are encoded transient: the log chunk holds them, and only the
        terms of absorbed (stored) triples are pinned, so terms that timing
        data alone uses are freed with the chunk (:meth:`_reclaim`)."""
        quad_store = self.store.quad_store
        terms = quad_store.terms
        data_items = int(np.count_nonzero(items.counts))
        logged = 0
        if data_items:  # a heartbeat changes no stored data: no transaction, no new snapshot
            txn = quad_store.begin(journaled=False, batch=batch if absorb else None)
            try:
                ids = terms.encode_spelled_transient(items.terms)
                ts, s, p, o = batch_rows(items.times, items.counts, ids)
                logged = len(ts)
                timeless = ~state.is_timing(p)
                if absorb:
                    txn.create(state.graph_id)
                if absorb and timeless.any():
                    terms.pin(np.concatenate([s[timeless], p[timeless], o[timeless]]))
                    txn.append(state.graph_id, s[timeless], p[timeless], o[timeless], ts[timeless],
                               state.number)
                state.log.append(ts, s, p, o, index=self._has_readers(state), txn=txn)
                terms.hold(np.concatenate([s, p, o]))
                for cohort in self._clocks.reading(state):
                    cohort.start_at(int(ts[0]))
                # the commit compacts within the bounds handed down: they must cover this batch
                # (a query's clock starts with it, a count window's log holds it)
                self._hand_down_retention()
            except BaseException:
                quad_store.abort(txn)
                raise
            txn.commit()
        if len(items):
            state.watermark = int(items.times[-1])
        state.record(data_items, logged, from_producer)
        return logged

    def _has_readers(self, state: StreamState) -> bool:
        return next(self._clocks.reading(state), None) is not None

    # ------------------------------------------------------------------ queries
    def register(self, text: str, base: str | None = None) -> RunningQuery:
        """Parse, plan and register a continuous query (once: it is a stored procedure)."""
        spec = parse_registration(text, base)
        return self.register_parsed(spec, base)

    def register_parsed(self, spec: ContinuousQuery, base: str | None = None) -> RunningQuery:
        with self._lock:
            if spec.name in self.queries:
                raise DuplicateName(f"a query named {spec.name!r} is already registered")
            self._check_streams(spec)
            if spec.output_stream is not None and self._stream_by_iri(spec.output_stream) is None:
                # declared (and logged) as any stream, so that its watermark is kept too
                name = derived_name(spec.output_stream, self.streams)
                self.declare_stream(StreamDefinition(name, spec.output_stream))
            journal = self.journal
            position = journal.log_register(spec.name, spec.text, base) if journal is not None else None
            running = self._register(spec)
        self._durable(position)
        return running

    def _check_streams(self, spec: ContinuousQuery) -> None:
        """Refuse a registration before it is logged: its streams must exist."""
        for window in spec.windows:
            if self._stream_by_iri(window.stream) is None:
                raise UnknownStream(f"unknown stream <{window.stream.value}>: declare it first "
                                    "(PUT /streams/{name})")
        if spec.output_stream is not None and spec.query.form != "CONSTRUCT":
            raise BadRegistration("REGISTER STREAM needs a CONSTRUCT query")

    def _register(self, spec: ContinuousQuery) -> RunningQuery:
        """Register a query :meth:`_check_streams` has accepted."""
        with self._lock:
            streams = [self._stream_by_iri(window.stream) for window in spec.windows]
            running = RunningQuery(spec, streams, self.retain_events, self.incremental)
            if running.shape is not None:
                running.shape_id = self._shape_ids.setdefault(running.shape.key, len(self._shape_ids))
            key = duplicate_key(spec)
            if key is not None:
                running.duplicate_id = self._duplicate_ids.setdefault(key, len(self._duplicate_ids))
                self._copies[running.duplicate_id] += 1
            self.queries[spec.name] = running
            running.clock = self._clocks.add(running.schedule)
            self._hand_down_retention()
            return running

    def unregister(self, name: str) -> None:
        with self._lock:
            if name not in self.queries:
                raise UnknownQuery(f"unknown query {name!r}")
            position = self.journal.log_unregister(name) if self.journal is not None else None
            running = self.queries.pop(name)
            self._clocks.remove(running.clock, running.schedule)
            if running.duplicate_id is not None:
                self._copies[running.duplicate_id] -= 1
            running.close()
            self._reclaim()
        self._durable(position)

    def query(self, name: str) -> RunningQuery:
        running = self.queries.get(name)
        if running is None:
            raise UnknownQuery(f"unknown query {name!r}")
        return running

    def subscribe(
        self, name: str, after_sequence: int | None = None, capacity: int = DEFAULT_CAPACITY
    ) -> Subscription:
        """A queue of query ``name``'s window events for one consumer, which
        drains it from its own thread or loop; the retained events after
        ``after_sequence`` (``Last-Event-ID``) come first."""
        return self.query(name).subscribe(after_sequence, capacity)

    def unsubscribe(self, name: str, subscription: Subscription, stalled: bool = False) -> None:
        """The consumer of ``subscription`` went away (nothing to do if the
        query is gone); ``stalled``: it was cut off for not reading, which
        counts it among the dropped subscribers."""
        running = self.queries.get(name)
        if running is not None:
            running.broadcast.unsubscribe(subscription, stalled)

    # ----------------------------------------------------------------- firing
    def _fire_due(self, received: float) -> list[WindowEvent]:
        """Evaluate every window whose data is complete, in window order per
        query, until no query is due (outputs of REGISTER STREAM may make more due).

        Copies of one query due at the same close are evaluated once, and the
        answer handed to the others (:mod:`~engine.stream.duplicates`); queries
        that are the same up to constants and due at the same close are
        evaluated once for all (:mod:`~engine.stream.shared_plan`); both one
        window per round. The others run alone, all their due windows at once."""
        fired: list[WindowEvent] = []
        try:
            self._fire_rounds(received, fired)
        except QueryCancelled:  # the server's shutdown (a time limit only fails its window)
            log.warning("the server is shutting down: the windows still due are left to its next start "
                        "(with a data directory, recovery evaluates them from the logged batches)")
        return fired

    def _fire_rounds(self, received: float, fired: list[WindowEvent]) -> None:
        """Evaluate due windows, round after round, into ``fired``."""
        progress = True
        while progress:
            progress = False
            copies: dict[tuple[int, int], list[RunningQuery]] = {}
            # whether a cohort's clocks may be due: asked once per cohort, and
            # again after a window emits into a stream (its watermark moves)
            may_be_due: dict[ClockCohort, bool] = {}
            for running in list(self.queries.values()):
                cohort = running.clock
                due = may_be_due.get(cohort)
                if due is None:
                    due = may_be_due[cohort] = cohort.may_be_due()
                if not due:
                    continue
                if running.shape_id is not None or self._copies[running.duplicate_id] > 1:
                    close = running.due()
                    if close is not None:
                        copies.setdefault((running.duplicate_id, close), []).append(running)
                    continue
                while (close := running.due()) is not None:
                    self._publish(running, self._evaluate(running, close, received), fired)
                    progress = True
                    if running.spec.output_stream is not None:
                        may_be_due.clear()
            groups: dict[tuple[int, int], list[RunningQuery]] = {}
            led: dict[RunningQuery, WindowEvent] = {}  # each leader's event, for its copies
            for (_, close), members in copies.items():
                leader = members[0]
                leader.keep_answer = len(members) > 1
                if leader.shape_id is not None:
                    groups.setdefault((leader.shape_id, close), []).append(leader)
                else:
                    led[leader] = self._evaluate(leader, close, received)
            for (_, close), group in groups.items():
                if len(group) == 1:
                    events = [self._evaluate(group[0], close, received)]
                else:
                    events = self._evaluate_group(group, close, received)
                led.update(zip(group, events, strict=True))
            for (_, close), members in copies.items():
                leader = members[0]
                event = led[leader]
                self._publish(leader, event, fired)
                if len(members) > 1:  # a leader of no copies kept nothing for them
                    others = members[1:]
                    copied = fan_out(event, leader.hand_over(), others, close, received)
                    for running, copy in zip(others, copied, strict=True):
                        self._publish(running, copy, fired)
            progress = progress or bool(copies)

    def _evaluate(self, running: RunningQuery, close: int, received: float) -> WindowEvent:
        """The event of one window of one query, evaluated within the
        engine's bounds; a window that fails is reported as failed."""
        started = time.perf_counter()
        try:
            return _waiting_for_store(lambda: self._bounded(
                lambda: running.evaluate(self.store.quad_store, self.store.service_client, close, received)))
        except Exception as exc:
            error = _window_error(exc)
            elapsed_ms = (time.perf_counter() - started) * 1000
            event = running.fail(close, received, error, elapsed_ms)
            log.log(logging.ERROR if error.reason == "error" else logging.WARNING,
                    "window %d of query %r, [%d, %d) ms, failed after %.2f s: %s: %s; the query goes on "
                    "with its next window", event.sequence, running.spec.name, event.start_ms, event.end_ms,
                    elapsed_ms / 1000, error.reason, error.message,
                    exc_info=exc if error.reason == "error" else None)
            return event

    def _evaluate_group(self, group: list[RunningQuery], close: int, received: float) -> list[WindowEvent]:
        """The events of the window closing at ``close`` of the queries of
        one shared shape, from one evaluation within the engine's bounds; if
        it fails, each query is evaluated alone (within its own bounds), so
        that one query's failure is only its own."""
        try:
            return _waiting_for_store(lambda: self._bounded(lambda: evaluate_group(
                group, group[0].shape, self.store.quad_store, close, received)))
        except Exception as exc:
            error = _window_error(exc)
            log.warning("the shared evaluation of %d queries (%s) for the window closing at %d ms failed: "
                        "%s: %s; each query is evaluated alone", len(group),
                        ", ".join(repr(r.spec.name) for r in group), close, error.reason, error.message)
        return [self._evaluate(running, close, received) for running in group]

    def _bounded(self, evaluate):
        """``evaluate()`` within the engine's bounds: its time limit starts now."""
        with row_budget(self.max_rows, deadline_check(self.timeout, self.shutdown)):
            return evaluate()

    def _publish(self, running: RunningQuery, event: WindowEvent, fired: list[WindowEvent]) -> None:
        running.publish(event)
        fired.append(event)
        if running.spec.output_stream is not None:
            self._emit(running, event)

    def _emit(self, running: RunningQuery, event: WindowEvent) -> None:
        """The constructed triples of a window become an item of the output stream
        at the window's close (queries reading it fire in the same loop); a
        failed window constructs none, but its close still moves that
        stream's watermark, so the queries reading it are not held up. An
        output older than that stream's watermark (only possible if a producer
        also heartbeats it) cannot be reordered and is left out."""
        target = self._stream_by_iri(running.spec.output_stream)
        if target.watermark is not None and event.end_ms < target.watermark:
            log.warning("output of %r for the window closing at %d ms left out: "
                        "stream %r is already at %d ms", running.spec.name, event.end_ms,
                        target.definition.name, target.watermark)
            return
        self._absorb(target, SpelledBatch.of_items([(event.end_ms, event.triples)]))

    # ------------------------------------------------------------ monitoring
    def reset_counters(self) -> None:
        """Zero what monitoring counts: each stream's items, triples and late
        items, each query's windows reported and failed and their timings. A
        recovery replays the logged batches through :meth:`ingest`, which
        counts them again; called once it is done, so that counters count
        what this process received, from 0, as a restarted Prometheus target's
        do (the windows' sequence numbers, the streams' watermarks and each
        query's last failed window go on)."""
        with self._lock:
            for state in self.streams.values():
                state.items = state.triples = state.late_items = 0
                state.clear_rate()
            for running in self.queries.values():
                running.failures.clear()  # the last failed window stays known: its event is retained
                running.stats = WindowStats()

    # --------------------------------------------------------------- reclaim
    def _reclaim(self) -> None:
        """Free the transient data no window can reach, and the terms only it
        used; then hand the store the new retention bounds (stored deltas are
        compacted at every store commit, within the last bounds handed down)."""
        terms = self.store.quad_store.terms
        read: set[int] = set()  # ids of the streams some query reads
        oldest: dict[int, tuple[int | None, int | None]] = {}  # by id of the stream
        for cohort in self._clocks:
            ts, seq = cohort.oldest_needed()
            for state in cohort.streams:
                read.add(id(state))
                if ts is None and seq is None:
                    continue
                before_ts, before_seq = oldest.get(id(state), (None, None))
                if ts is not None:
                    before_ts = ts if before_ts is None else min(before_ts, ts)
                if seq is not None:
                    before_seq = seq if before_seq is None else min(before_seq, seq)
                oldest[id(state)] = (before_ts, before_seq)
        for state in self.streams.values():
            if id(state) in read and id(state) not in oldest:
                continue  # readers waiting for their first item: nothing is old yet
            before_ts, before_seq = oldest.get(id(state), (None, None))
            for chunk in state.log.expire(before_ts, before_seq):
                terms.release(chunk.term_ids)
        self._hand_down_retention()

    def _hand_down_retention(self) -> None:
        """Tell the store which stored deltas must keep their timestamps. Called
        under the lock whenever the bounds may move (a query registered, a
        batch about to be committed, windows fired, the log reclaimed), so the
        store never calls up into this layer:
        between two calls the bounds it holds can only be lower than the true
        ones, and a commit then compacts less, never wrongly."""
        self.store.quad_store.retain_timestamps(self.retention_bounds())

    def retention_bounds(self) -> dict[int, int]:
        """Per stream number, the earliest application time a pending window
        will read the store as of: deltas of that stream from then on must keep
        their timestamps. They move when a query is registered or unregistered,
        when windows fire and when the log is reclaimed."""
        bounds: dict[int, int] = {}
        for cohort in self._clocks:
            for state in cohort.streams:
                bound = cohort.store_bound(state)
                if bound is not None:
                    bounds[state.number] = min(bounds.get(state.number, bound), bound)
        return bounds

    def _start_idle_clock(self) -> None:
        """A daemon thread that advances idle streams' watermarks (started on
        the first stream that asks for it; ``close`` stops it)."""
        if self._idle_clock is not None:
            return

        def tick() -> None:
            while not self._closed.wait(IDLE_TICK_SECONDS):
                try:
                    self.advance_idle(int(time.time() * 1000))
                except Exception:  # keep the clock alive; the next tick retries
                    log.exception("idle clock tick failed")

        self._idle_clock = threading.Thread(target=tick, name="rivulet-idle-clock", daemon=True)
        self._idle_clock.start()

    def close(self) -> None:
        """Stop background work (the idle clock)."""
        self._closed.set()

    def advance_idle(self, now_ms: int) -> None:
        """Move the watermark of idle streams with the wall-clock policy."""
        with self._lock:
            for state in self.streams.values():
                definition = state.definition
                if definition.idle != "wallclock":
                    continue
                idle_since = None if state.last_arrival is None else state.last_arrival * 1000
                if idle_since is not None and now_ms - idle_since < definition.idle_lag_ms:
                    continue  # not idle: the producer's own timestamps drive the watermark
                mark = now_ms - definition.idle_lag_ms
                try:
                    self._check_jump(state, mark)
                except TooManyWindows as exc:
                    log.warning("idle clock of stream %r held back: %s", definition.name, exc)
                    continue
                if state.watermark is None or mark > state.watermark:
                    self._ingest(state, SpelledBatch.of_items([(mark, [])]), time.time(), from_producer=False)


def _window_error(exc: Exception) -> WindowError:
    """Why a window failed; raises again what must stop the request itself:
    the server's shutdown, and a store that stayed unavailable (the window
    then stays due and is evaluated by a later request)."""
    stopping = isinstance(exc, QueryCancelled) and exc.reason == "shutdown"
    if stopping or isinstance(exc, StoreUnavailable):
        raise exc
    if isinstance(exc, RowBudgetExceeded):
        return WindowError("row_limit", str(exc))
    if isinstance(exc, QueryCancelled) and exc.reason == "time_limit":
        return WindowError("time_limit", f"evaluation stopped: {exc}")
    return WindowError("error", f"{type(exc).__name__}: {exc}")


def _waiting_for_store(evaluate):
    """``evaluate()``, waiting out a store that is briefly unavailable (a
    shard restarting): a due window is never skipped, and its schedule moves
    on only once it has been evaluated."""
    deadline = time.monotonic() + UNAVAILABLE_PATIENCE
    while True:
        try:
            return evaluate()
        except StoreUnavailable as exc:
            if time.monotonic() > deadline:
                raise
            log.warning("a window waits for the store: %s", exc)
            time.sleep(min(exc.retry_after, 0.5))


def _listed(names: list[str]) -> str:
    shown = ", ".join(repr(name) for name in sorted(names)[:5])
    return f"quer{'y' if len(names) == 1 else 'ies'} {shown}{' ...' if len(names) > 5 else ''}"
