"""One subscriber's bounded queue of window events.

The engine fills it while it holds its lock, so filling must never block and
never run a consumer's code: :meth:`Subscription.offer` appends under the
queue's own short lock and, if an asyncio consumer is waiting, schedules its
wake-up on that consumer's loop (``call_soon_threadsafe``), nothing more. A
consumer that stops reading does not hold the engine or the other
subscribers back: when its queue is full it is dropped (its pending events
are discarded and its stream ends). Consumers drain the queue from their own
side: ``await next()`` in an event loop (the SSE writer of the Starlette
application), ``wait(timeout)`` in a thread (the SSE writer of the Flask
blueprint, which runs in a WSGI server's thread), ``drain()`` in plain code
(tests, benchmarks).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections import deque
from collections.abc import Callable

from engine.stream.events import WindowEvent

#: events a subscriber may have waiting before it is considered stalled
DEFAULT_CAPACITY = 256


class NoEventYet:
    """What :meth:`Subscription.wait` returns when its time ran out first."""


#: the one value of :class:`NoEventYet`
NO_EVENT_YET = NoEventYet()


class Subscription:
    """Events of one query for one consumer: first ``replay`` (the retained
    events it asked to resume after), then the live ones, until the query is
    unregistered (:attr:`ended`) or the consumer stalls (:attr:`dropped`)."""

    def __init__(self, replay: list[WindowEvent], capacity: int = DEFAULT_CAPACITY) -> None:
        self.replay = replay
        self.capacity = capacity
        self.dropped = False
        self.ended = False
        self._events: deque[WindowEvent] = deque()
        self._lock = threading.Lock()
        #: wakes the consumer waiting for an event (set by next() or wait())
        self._waiter: Callable[[], None] | None = None

    @property
    def closed(self) -> bool:
        return self.dropped or self.ended

    def offer(self, event: WindowEvent) -> bool:
        """Queue an event without blocking; False if the subscriber is (now)
        dropped because its queue was full, or already closed."""
        with self._lock:
            if self.closed:
                return False
            if len(self._events) >= self.capacity:
                self.dropped = True
                self._events.clear()
            else:
                self._events.append(event)
        self._wake()
        return not self.dropped

    def end(self) -> None:
        """The query is gone: the consumer gets the events already queued, then the end."""
        with self._lock:
            self.ended = True
        self._wake()

    def drain(self) -> list[WindowEvent]:
        """The queued events, now, without waiting."""
        with self._lock:
            events = list(self._events)
            self._events.clear()
        return events

    async def next(self) -> WindowEvent | None:
        """The next live event, waiting for it; None once the subscription is closed."""
        while True:
            with self._lock:
                if self._events and not self.dropped:
                    return self._events.popleft()
                if self.closed:
                    return None
                ready = asyncio.Event()
                self._waiter = functools.partial(asyncio.get_running_loop().call_soon_threadsafe, ready.set)
            await ready.wait()

    def wait(self, timeout: float) -> WindowEvent | NoEventYet | None:
        """The next live event, waiting at most ``timeout`` seconds in the
        calling thread (:data:`NO_EVENT_YET` if none came); None once the
        subscription is closed."""
        with self._lock:
            if self._events and not self.dropped:
                return self._events.popleft()
            if self.closed:
                return None
            ready = threading.Event()
            self._waiter = ready.set
        if not ready.wait(timeout):
            with self._lock:
                if self._waiter == ready.set:
                    self._waiter = None
            return NO_EVENT_YET
        return self.wait(0)

    def __len__(self) -> int:
        return len(self._events)

    def _wake(self) -> None:
        """Wake an awaiting consumer on its own loop (the engine never runs its code)."""
        with self._lock:
            waiter, self._waiter = self._waiter, None
        if waiter is None:
            return
        try:
            waiter()
        except RuntimeError:  # the consumer's loop has closed: nobody is waiting any more
            pass
