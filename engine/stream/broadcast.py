"""A query's reported windows on their way out: the retained events and the subscribers.

The last ``retain`` events stay so that a reconnecting client resumes after
the last one it saw (``Last-Event-ID``). Subscribing and publishing share one
lock, so a subscriber gets every event exactly once: those published before
it subscribed in its replay, the later ones in its queue. Publishing only
offers to queues (:class:`~engine.stream.subscription.Subscription` never
blocks), so holding the lock while doing it costs the engine nothing; a
subscriber whose queue overflowed is forgotten on the spot.
"""

from __future__ import annotations

import threading
from collections import deque

from engine.stream.events import WindowEvent
from engine.stream.subscription import DEFAULT_CAPACITY, Subscription


class Broadcast:
    """Retained events and live subscriptions of one registered query."""

    def __init__(self, retain: int) -> None:
        self._retained: deque[WindowEvent] = deque(maxlen=retain)
        self._subscriptions: list[Subscription] = []
        self._last_sequence = 0
        self._lock = threading.Lock()
        #: subscribers dropped so far for not reading (for monitoring)
        self.dropped = 0

    def publish(self, event: WindowEvent) -> None:
        """Retain the event and queue it for every subscriber; drop the stalled ones."""
        with self._lock:
            self._retained.append(event)
            self._last_sequence = event.sequence
            kept = [s for s in self._subscriptions if s.offer(event)]
            self.dropped += len(self._subscriptions) - len(kept)
            self._subscriptions = kept

    def subscribe(self, after_sequence: int | None = None, capacity: int = DEFAULT_CAPACITY) -> Subscription:
        """A new subscription, replaying the retained events after
        ``after_sequence`` (None: none; an id the query never reached, from
        before a re-registration or a restart, starts afresh)."""
        with self._lock:
            replay = []
            if after_sequence is not None and after_sequence <= self._last_sequence:
                replay = [e for e in self._retained if e.sequence > after_sequence]
            subscription = Subscription(replay, capacity)
            self._subscriptions.append(subscription)
            return subscription

    def retained(self) -> list[WindowEvent]:
        """The retained events, oldest first (a checkpoint keeps them)."""
        with self._lock:
            return list(self._retained)

    def restore(self, events: list[WindowEvent]) -> None:
        """Retain ``events`` again after a restart, so that clients resume
        with ``Last-Event-ID`` as if the server had never stopped."""
        with self._lock:
            self._retained.extend(events)
            if events:
                self._last_sequence = max(self._last_sequence, events[-1].sequence)

    def unsubscribe(self, subscription: Subscription, stalled: bool = False) -> None:
        """Forget a subscription whose consumer went away; ``stalled``: it
        was cut off for not reading (a send that never completed), a drop."""
        with self._lock:
            if subscription in self._subscriptions:
                self._subscriptions.remove(subscription)
                if stalled:
                    self.dropped += 1

    def close(self) -> None:
        """The query is unregistered: end every subscription."""
        with self._lock:
            subscriptions, self._subscriptions = self._subscriptions, []
        for subscription in subscriptions:
            subscription.end()

    def __len__(self) -> int:
        """Live subscriptions."""
        return len(self._subscriptions)
