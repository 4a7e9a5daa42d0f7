"""The small interface between Rivulet and a message broker.

Everything broker-neutral (parsing, ingesting through the stream engine,
waiting for the log, deduplicating, counting, keeping window order on the
way out) lives in :mod:`~endpoint.brokers.stream_source` and
:mod:`~endpoint.brokers.query_sink`. A broker's client library is wrapped
by two classes only:

- an :class:`Inlet` subscribes and hands each received message to the
  source as a :class:`Delivery`; it acknowledges a delivery to the broker
  only when told (:meth:`Inlet.acknowledge`), and keeps at most the
  configured number of unacknowledged deliveries in flight, so a fast
  broker waits instead of filling memory;
- an :class:`Outlet` publishes one payload and says when the broker has
  taken it, reconnecting by itself while the broker is away.

Both reconnect with back-off and report their state (:class:`LinkState`).
:func:`inlet_for` and :func:`outlet_for` pick them by the broker URL's
scheme: a Kafka connector would add a ``kafka`` scheme there, an Inlet
whose :class:`Delivery` identity is topic, partition and offset, committing
the offset in :meth:`Inlet.acknowledge`, and an Outlet producing with
``acks=all``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from endpoint.brokers.config import Broker


@dataclass
class Delivery:
    """One message as a broker delivered it. ``identity`` names the message
    across deliveries (the deduplication key); ``dedupe``: a second delivery
    of that identity is the same item (see :mod:`~endpoint.brokers.stream_source`);
    ``timestamp``: its item's timestamp as text, when the message carries one
    beside the payload; ``token``: what the inlet needs to acknowledge it."""

    topic: str
    payload: bytes
    identity: str
    dedupe: bool
    timestamp: str | None = None
    token: object = None
    received: float = field(default_factory=time.time)


@dataclass
class LinkState:
    """A connection's state, shown by ``GET /streams/{name}`` and ``/metrics``."""

    connected: bool = False
    connects: int = 0
    disconnects: int = 0
    last_error: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def up(self) -> None:
        with self._lock:
            self.connected = True
            self.connects += 1
            self.last_error = None

    def down(self, reason: str | None) -> None:
        """Disconnected; ``reason`` is kept unless it would hide why the
        connection was never made (a refusal, then the broker closing)."""
        with self._lock:
            if reason and (self.connected or not self.last_error):
                self.last_error = reason
            if self.connected:
                self.disconnects += 1
            self.connected = False

    def to_json(self) -> dict:
        return {"connected": self.connected, "connects": self.connects, "disconnects": self.disconnects,
                "last_error": self.last_error}


class Inlet(Protocol):
    """A subscription to a broker that hands deliveries to ``deliver``."""

    state: LinkState

    def start(self, deliver: Callable[[Delivery], None]) -> None:
        """Connect (in the background, retrying) and deliver every message;
        ``deliver`` may block, which holds the broker back."""

    def acknowledge(self, delivery: Delivery) -> None:
        """Tell the broker ``delivery`` is taken care of (it will not send it again)."""

    def stop(self, forget: bool = False) -> None:
        """Disconnect, leaving unacknowledged messages to the broker;
        ``forget``: the stream is dropped, the broker may forget the subscription."""


class Outlet(Protocol):
    """A publisher that keeps its connection to a broker up by itself."""

    state: LinkState

    def start(self) -> None:
        """Connect in the background (retrying), before there is anything to publish."""

    def publish(self, topic: str, payload: bytes, qos: int, properties: dict[str, str],
                stopping: threading.Event) -> bool:
        """Publish and wait until the broker has it (QoS 1) or it is sent (QoS 0),
        however long the broker is away; False only if ``stopping`` was set first."""

    def stop(self) -> None:
        """Disconnect."""


def inlet_for(broker: Broker, topic: str, qos: int, inflight: int, timestamp_property: str | None,
              id_property: str, dedupe_all: bool) -> Inlet:
    """The inlet of ``broker``'s scheme."""
    if broker.scheme == "mqtt":
        from endpoint.brokers.mqtt import MqttInlet

        return MqttInlet(broker, topic, qos, inflight, timestamp_property, id_property, dedupe_all)
    raise ValueError(f"no connector for {broker.scheme!r}")


def outlet_for(broker: Broker) -> Outlet:
    """The outlet of ``broker``'s scheme."""
    if broker.scheme == "mqtt":
        from endpoint.brokers.mqtt import MqttOutlet

        return MqttOutlet(broker)
    raise ValueError(f"no connector for {broker.scheme!r}")
