"""Running engine calls in worker threads, and cancelling queries.

The engine is synchronous NumPy code, so a call that may take a while
leaves the event loop for a worker thread (at most ``Settings.workers`` at
once). A query gets a ``should_stop`` callable that turns true when its time
limit passes, its client disconnects or the server's shutdown has run out
of grace; the engine polls it between operators and gives up, which frees
the worker for the next request. An update gets its time limit and the
shutdown too (:meth:`Workers.update`), not the disconnect: it is atomic, and
a client that sent it and left still expects it applied.

Most queries of a serving workload are small and repeated: the hop to a
thread and back, and the task that watches for a disconnect, cost more than
answering them. So each plan's last run time is remembered (by its shape,
:meth:`engine.api.Store.cached_shape`: a query with another constant is
the same plan for this purpose), and a plan that last ran in under
:data:`INLINE_BUDGET` runs on the event loop itself, under a short limit
(:data:`INLINE_LIMIT`): should it run longer this time, it is stopped and
run again in a worker thread with the full time limit (queries change
nothing, so running one again is safe).

The time remembered is the CPU time of the running thread, not the time on
the clock: with several clients' queries and an update in threads at once,
each waits for the interpreter lock much of its wall time, so the clock
would call a small plan slow and keep it off the event loop, where it then
waits again. A run that stalls the loop anyway (a cold memory-mapped page,
say) still meets :data:`INLINE_LIMIT`, which is wall time. A plan that calls
another endpoint (SERVICE) waits without using the CPU, so it never runs on
the event loop (``calls_out``).

A request may ask for a shorter time limit than the server's (its
``timeout`` parameter): :meth:`Workers.limit` caps it, and a query with
its own limit always runs in a worker thread, so that it stops at that
limit and not a short inline run later.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TypeVar

import anyio
from starlette.requests import Request

from engine.api import QueryCancelled
from engine.store import Shutdown

log = logging.getLogger("rivulet.endpoint")

T = TypeVar("T")

#: a plan whose last run took less than this (seconds) runs on the event loop
INLINE_BUDGET = 0.002
#: an inline run taking longer than this is stopped and moved to a worker thread
INLINE_LIMIT = 0.02
#: plans whose run time is remembered (the plan cache holds 512)
REMEMBERED_PLANS = 2048
#: the scope key naming why a request's query or update was cancelled
#: ("time_limit", "client_gone", "shutdown"), which the traffic metrics read (:mod:`endpoint.traffic`)
CANCELLED = "rivulet.cancelled"
#: the scope key holding the time limit a request set itself (seconds, already
#: capped by the server's), for the message of its 503 (:mod:`endpoint.errors`)
TIME_LIMIT = "rivulet.time_limit"


class ClientGone(Exception):
    """The client disconnected before its answer was ready."""


class Workers:
    """The pool of worker threads the HTTP layer hands engine calls to."""

    def __init__(self, workers: int, query_timeout: float, shutdown: Shutdown | None = None) -> None:
        self.limiter = anyio.CapacityLimiter(workers)
        self.query_timeout = query_timeout
        #: the server's shutdown, which stops every query and update still running after its grace
        self.shutdown = shutdown if shutdown is not None else Shutdown()
        #: id of a plan -> seconds its last run took
        self._run_time: dict[int, float] = {}
        #: queries and updates cancelled so far, per reason ("time_limit", "client_gone", "shutdown"),
        #: for /metrics
        self.cancellations: Counter[str] = Counter()

    def limit(self, request: Request, requested: float) -> float:
        """The time limit of a request that asked for ``requested`` seconds:
        the smaller of that and the server's, kept in the request's scope for
        the message should it run over."""
        limit = min(requested, self.query_timeout)
        request.scope[TIME_LIMIT] = limit
        return limit

    def runs_inline(self, plan: object) -> bool:
        """Did this plan's last runs take less than :data:`INLINE_BUDGET` of CPU?"""
        return self._run_time.get(id(plan), INLINE_BUDGET) < INLINE_BUDGET

    def run_inline(self, plan: object, fn: Callable[[Callable[[], bool]], T]) -> T | None:
        """Run ``fn(should_stop)`` on the calling thread (the event loop) under
        :data:`INLINE_LIMIT` of wall time (how long the loop may stall); None
        if it ran over (it was stopped and the plan is no longer run inline).
        Remembers the CPU time it took."""
        deadline = time.monotonic() + INLINE_LIMIT
        cpu = time.thread_time()
        try:
            result = fn(lambda: time.monotonic() > deadline)
        except QueryCancelled:
            self._remember(plan, INLINE_BUDGET, smoothed=False)
            return None
        self._remember(plan, time.thread_time() - cpu)
        return result

    def _remember(self, plan: object, seconds: float, smoothed: bool = True) -> None:
        """Remember a run time: by default the mean of this one and the one
        remembered, so that one slow run (another constant of the shape, or
        a busy machine) does not send the next to a thread."""
        if len(self._run_time) >= REMEMBERED_PLANS:
            self._run_time.clear()
        previous = self._run_time.get(id(plan)) if smoothed else None
        self._run_time[id(plan)] = seconds if previous is None else (previous + seconds) / 2

    async def run_plan(self, request: Request, plan: object, fn: Callable[[Callable[[], bool]], T],
                       time_limit: float | None = None, calls_out: bool = False) -> T:
        """Run ``fn(should_stop)`` for a parsed plan: on the event loop when
        the plan ran fast last time (see the module docstring), else as
        :meth:`query` does. Remembers the run's CPU time. ``time_limit``: the
        request's own (see :meth:`limit`), which never runs inline; nor does a
        plan that ``calls_out`` to another endpoint."""
        if time_limit is None and not calls_out and self.runs_inline(plan):
            result = self.run_inline(plan, fn)
            if result is not None:
                return result

        def timed(should_stop: Callable[[], bool]) -> T:
            # the run's own CPU, neither the wait for a thread nor for the
            # interpreter lock: a busy server must still know its small queries
            cpu = time.thread_time()
            answer = fn(should_stop)
            self._remember(plan, time.thread_time() - cpu)
            return answer

        return await self.query(request, timed, time_limit)

    async def call(self, fn: Callable[..., T], *args) -> T:
        """Run a call that needs no cancellation (parsing, loads, stream requests)."""
        return await anyio.to_thread.run_sync(fn, *args, limiter=self.limiter)

    async def update(self, request: Request, fn: Callable[[float, Shutdown], T],
                     time_limit: float | None = None) -> T:
        """Run ``fn(time_limit, shutdown)``, an update that stops itself at
        its time limit (the server's, or ``time_limit`` from :meth:`limit`)
        or the server's shutdown (raising :class:`QueryCancelled`, answered
        503); the cancellation is counted and logged as a query's."""
        started = time.monotonic()
        limit = self.query_timeout if time_limit is None else time_limit
        try:
            return await anyio.to_thread.run_sync(fn, limit, self.shutdown, limiter=self.limiter)
        except QueryCancelled as exc:
            self._cancelled(request, exc.reason, "update", time.monotonic() - started, limit)
            raise

    async def query(self, request: Request, fn: Callable[[Callable[[], bool]], T],
                    time_limit: float | None = None) -> T:
        """Run ``fn(should_stop)``; cancel it when the client disconnects or
        the time limit (the server's, or ``time_limit`` from :meth:`limit`)
        passes. Raises :class:`QueryCancelled` on timeout and
        :class:`ClientGone` on a disconnect (the application's error handlers
        answer 503 and 499)."""
        disconnected = threading.Event()
        started = time.monotonic()
        limit = self.query_timeout if time_limit is None else time_limit
        deadline = started + limit

        shutdown = self.shutdown

        def should_stop() -> bool:
            return disconnected.is_set() or time.monotonic() > deadline or shutdown.overdue()

        # errors are raised after the task group: inside it anyio would wrap
        # them in an ExceptionGroup
        error: Exception | None = None
        async with anyio.create_task_group() as watchers:
            watchers.start_soon(_watch_disconnect, request, disconnected)
            try:
                result = await anyio.to_thread.run_sync(fn, should_stop, limiter=self.limiter)
            except Exception as exc:
                error = exc
            finally:
                watchers.cancel_scope.cancel()
        if error is None:
            return result
        if isinstance(error, QueryCancelled):
            if disconnected.is_set():
                reason = "client_gone"
            elif shutdown.overdue():
                reason = "shutdown"
                error = QueryCancelled("the server is shutting down", reason)
            else:
                reason = "time_limit"
                error = QueryCancelled(str(error), reason)
            self._cancelled(request, reason, "query", time.monotonic() - started, limit)
            if disconnected.is_set():
                raise ClientGone() from error
        raise error

    def _cancelled(self, request: Request, reason: str, what: str, elapsed: float, limit: float) -> None:
        """Count and log a query or update stopped for ``reason``."""
        self.cancellations[reason] += 1
        request.scope[CANCELLED] = reason
        why = {"client_gone": "client disconnected", "shutdown": "the server is shutting down"}.get(
            reason, f"over the {limit:g} s time limit")
        log.warning("%s cancelled after %.2f s: %s", what, elapsed, why)

    async def stream(self, chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
        """Serialise a result in worker threads one chunk at a time. The first
        chunk is written before this returns, so that an error in it (a value
        the format cannot carry, say) is answered with its status rather than
        cutting a response already begun; if the response stops early (the
        client went away) say so in the log."""
        first = await anyio.to_thread.run_sync(next, chunks, None, limiter=self.limiter)
        return self._rest(first, chunks)

    async def _rest(self, first: bytes | None, chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
        finished = False
        try:
            chunk = first
            while True:
                if chunk is None:
                    finished = True
                    return
                yield chunk
                chunk = await anyio.to_thread.run_sync(next, chunks, None, limiter=self.limiter)
        except Exception as exc:
            finished = True
            log.error("an answer failed after its first bytes were sent (%s); the connection is "
                      "cut so that the client sees it incomplete", exc)
            raise
        finally:
            if not finished:
                log.warning("result stream stopped early: client disconnected")


async def _watch_disconnect(request: Request, disconnected: threading.Event) -> None:
    """Wait for the client to go away. The request body has been read by
    now, so the only message still to come is ``http.disconnect``."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            disconnected.set()
            return
