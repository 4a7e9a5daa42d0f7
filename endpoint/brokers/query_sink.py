"""A query's windows published to a broker, one message per window, in window order.

The sink subscribes to the query's events as an SSE client does and
publishes each one from its own thread: the event's JSON as the SSE event
carries it (:func:`~endpoint.sse.event_payload`), or, with format
``triples``, the window's constructed triples in N-Triples with the
window's close in the ``timestamp`` user property (an item another
Rivulet's MQTT source can ingest as it is). It publishes the next window
only once the broker has acknowledged the previous one (QoS 1), so windows
arrive in order, and while the broker is away it waits and sends the same
message again after reconnecting: a window can be delivered twice (its
``sequence`` says which it is), never skipped while the query retains it.

Should the broker stay away for longer than the subscription's queue holds
windows, the subscription is dropped and taken up again after the last
window published, from the events the query retains (its last 1,000);
windows older than those are counted as skipped and logged. The sequence
of the last window published is kept in the sink's state, which
:mod:`~endpoint.brokers.connectors` writes to the data directory, so a
restarted server goes on after it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from endpoint.brokers.config import SinkConfig
from endpoint.brokers.connector import Outlet, outlet_for
from endpoint.sse import event_payload
from engine.rdf import format_term
from engine.stream import NO_EVENT_YET, StreamEngine, WindowEvent
from engine.stream.errors import UnknownQuery

log = logging.getLogger("rivulet.brokers")

#: windows a sink may have waiting while the broker is away before it takes them from the retained ones
QUEUE = 1000
#: seconds between looks whether the sink is told to stop
POLL_S = 0.2


class QuerySink:
    """The sink of one registered query."""

    def __init__(self, engine: StreamEngine, query: str, config: SinkConfig, after: int | None = None,
                 outlet: Outlet | None = None, on_published: Callable[[], None] | None = None) -> None:
        self.engine = engine
        self.query = query
        self.config = config
        self.outlet = outlet or outlet_for(config.broker)
        #: the sequence number of the last window the broker acknowledged
        self.last_sequence = after
        self.published = 0
        self.skipped = 0
        self._on_published = on_published
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"rivulet-sink-{query}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=10)
        self.outlet.stop()

    def _run(self) -> None:
        self.outlet.start()
        while not self._stopping.is_set():
            try:
                subscription = self.engine.subscribe(self.query, self.last_sequence, QUEUE)
            except UnknownQuery:
                log.warning("query %r is gone: its sink stops", self.query)
                return
            for event in subscription.replay:
                if not self._send(event):
                    return
            while not self._stopping.is_set():
                event = subscription.wait(POLL_S)
                if event is NO_EVENT_YET:
                    continue
                if event is None:
                    break  # dropped (the broker was away too long) or the query unregistered
                if not self._send(event):
                    return
            self.engine.unsubscribe(self.query, subscription)
            if subscription.ended:
                return

    def _send(self, event: WindowEvent) -> bool:
        if self.last_sequence is not None and event.sequence <= self.last_sequence:
            return True  # published before the subscription was taken up again
        if self.last_sequence is not None and event.sequence > self.last_sequence + 1:
            missed = event.sequence - self.last_sequence - 1
            self.skipped += missed
            log.warning("sink of query %r: %d windows after %d were no longer retained and are not "
                        "published", self.query, missed, self.last_sequence)
        payload, properties = self._message(event)
        if not self.outlet.publish(self.config.topic, payload, self.config.qos, properties, self._stopping):
            return False
        self.last_sequence = event.sequence
        self.published += 1
        if self._on_published is not None:
            self._on_published()
        return True

    def _message(self, event: WindowEvent) -> tuple[bytes, dict[str, str]]:
        properties = {"query": self.query, "sequence": str(event.sequence)}
        if self.config.format == "triples":
            lines = "".join(f"{format_term(s)} {format_term(p)} {format_term(o)} .\n"
                            for s, p, o in event.triples)
            return lines.encode(), {**properties, "timestamp": str(event.end_ms)}
        return event_payload(event).encode(), properties

    def to_json(self) -> dict:
        return {
            "query": self.query,
            "broker": self.config.broker.describe(),
            "topic": self.config.topic,
            "qos": self.config.qos,
            "format": self.config.format,
            "client_id": self.config.broker.client_id,
            **self.outlet.state.to_json(),
            "published": self.published,
            "last_sequence": self.last_sequence,
            "skipped": self.skipped,
        }
