"""MQTT connectors (paho-mqtt), MQTT 5.

The inlet keeps a persistent session (clean start off, a session that does
not expire while the stream exists) and acknowledges each QoS 1 message by
hand (paho's ``manual_ack``) when the source says its item is durable: a
message the server received but did not acknowledge before it stopped or
died is sent again by the broker when the inlet reconnects (flagged DUP).
Its Receive Maximum (the source's ``inflight``) asks the broker to send no
more before acknowledgements come back, and paho's network thread waits in
``on_message`` while the source's queue is full (a broker may overshoot
the Receive Maximum: TCP then holds it back), so a broker that delivers
faster than the engine ingests is slowed down, never buffered without
bound. Dropping the stream ends the session at the broker.

The outlet publishes with the same kind of session, so a QoS 1 message
whose acknowledgement was lost is sent again after a reconnect. paho
reconnects both with a doubling delay (1 s to 30 s).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from endpoint.brokers.config import Broker, BrokerUnreachable
from endpoint.brokers.connector import Delivery, LinkState

log = logging.getLogger("rivulet.brokers")

#: a session the broker keeps while the client is away (the largest MQTT 5 allows: never expires)
SESSION_EXPIRY = 0xFFFFFFFF
KEEPALIVE_S = 30
RECONNECT_MIN_S, RECONNECT_MAX_S = 1, 30
#: how often a waiting publisher looks whether it is told to stop
POLL_S = 0.2
#: seconds between attempts to connect when the credentials cannot be read
RETRY_S = 2.0


def _client(broker: Broker, state: LinkState, manual_ack: bool, receive_maximum: int | None
            ) -> tuple[mqtt.Client, Properties]:
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=broker.client_id,
                         protocol=mqtt.MQTTv5, manual_ack=manual_ack)
    client.reconnect_delay_set(RECONNECT_MIN_S, RECONNECT_MAX_S)
    client.max_queued_messages_set(0)
    if broker.username is not None:
        client.username_pw_set(broker.username, broker.password())
    connect = Properties(PacketTypes.CONNECT)
    connect.SessionExpiryInterval = SESSION_EXPIRY
    if receive_maximum is not None:
        connect.ReceiveMaximum = receive_maximum

    def on_disconnect(client, userdata, flags, reason, properties) -> None:
        if reason != 0 and state.connected:
            log.warning("client %s lost %s: %s; reconnecting (%d to %d s apart)", broker.client_id,
                        broker.describe(), reason, RECONNECT_MIN_S, RECONNECT_MAX_S)
        state.down(None if reason == 0 else f"disconnected: {reason}")

    client.on_disconnect = on_disconnect
    client.on_connect_fail = lambda client, userdata: state.down(f"cannot connect to {broker.describe()}")
    return client, connect


def _run(client: mqtt.Client, connect: Properties, broker: Broker, state: LinkState, role: str,
         on_up: Callable[[mqtt.Client, object], None] | None) -> None:
    """Connect in the background and keep the link's state: a refusal is
    logged and kept as the reason; on every (re)connection ``on_up`` runs
    (a source subscribes again)."""

    def on_connect(client, userdata, flags, reason, properties) -> None:
        if reason.is_failure:
            log.warning("%s client %s refused by %s: %s", role, broker.client_id, broker.describe(), reason)
            state.down(f"refused by {broker.describe()}: {reason}")
            return
        state.up()
        if on_up is not None:
            on_up(client, flags)

    client.on_connect = on_connect
    client.connect_async(broker.host, broker.port, KEEPALIVE_S, clean_start=False, properties=connect)
    client.loop_start()


def _user_properties(message: mqtt.MQTTMessage) -> dict[str, str]:
    properties = getattr(message, "properties", None)
    pairs = getattr(properties, "UserProperty", None) or []
    return dict(pairs)


class MqttInlet:
    """A QoS 0/1 subscription with manual acknowledgements."""

    def __init__(self, broker: Broker, topic: str, qos: int, inflight: int, timestamp_property: str | None,
                 id_property: str, dedupe_all: bool) -> None:
        self.broker = broker
        self.topic = topic
        self.qos = qos
        self.inflight = inflight
        self.timestamp_property = timestamp_property
        self.id_property = id_property
        self.dedupe_all = dedupe_all
        self.state = LinkState()
        self._client: mqtt.Client | None = None

    def start(self, deliver: Callable[[Delivery], None]) -> None:
        try:
            client, connect = _client(self.broker, self.state, manual_ack=True, receive_maximum=self.inflight)
        except BrokerUnreachable as exc:
            self.state.down(str(exc))
            raise

        def subscribe(client: mqtt.Client, flags) -> None:
            client.subscribe(self.topic, qos=self.qos)
            log.info("source connected to %s (client %s, session %s), subscribed to %r",
                     self.broker.describe(), self.broker.client_id,
                     "resumed" if flags.session_present else "new", self.topic)

        def on_message(client, userdata, message: mqtt.MQTTMessage) -> None:
            deliver(self._delivery(message))

        client.on_message = on_message
        _run(client, connect, self.broker, self.state, "source", subscribe)
        self._client = client

    def _delivery(self, message: mqtt.MQTTMessage) -> Delivery:
        properties = _user_properties(message)
        stamp = properties.get(self.timestamp_property) if self.timestamp_property else None
        explicit = properties.get(self.id_property)
        if explicit is not None:
            identity = f"{message.topic}\n{explicit}"
        else:
            digest = hashlib.sha256(message.topic.encode())
            digest.update(b"\0" + (stamp or "").encode() + b"\0")
            digest.update(message.payload)
            identity = digest.hexdigest()[:32]
        return Delivery(message.topic, message.payload, identity,
                        dedupe=explicit is not None or self.dedupe_all or bool(message.dup),
                        timestamp=stamp, token=(message.mid, message.qos))

    def acknowledge(self, delivery: Delivery) -> None:
        mid, qos = delivery.token
        if self._client is not None and qos > 0:
            self._client.ack(mid, qos)

    def stop(self, forget: bool = False) -> None:
        """Disconnect; ``forget``: end the session too (the stream is dropped)."""
        client, self._client = self._client, None
        if client is None:
            return
        if forget:
            ending = Properties(PacketTypes.DISCONNECT)
            ending.SessionExpiryInterval = 0
            client.disconnect(properties=ending)
        else:
            client.disconnect()
        client.loop_stop()
        self.state.down(None)


class MqttOutlet:
    """A publisher that waits for each QoS 1 message's acknowledgement."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.state = LinkState()
        self._acked: set[int] = set()
        self._changed = threading.Condition()
        self._client: mqtt.Client | None = None

    def _connect(self) -> mqtt.Client:
        if self._client is not None:
            return self._client
        client, connect = _client(self.broker, self.state, manual_ack=False, receive_maximum=None)

        def on_publish(client, userdata, mid, reason, properties) -> None:
            with self._changed:
                self._acked.add(mid)
                self._changed.notify_all()

        client.on_publish = on_publish
        _run(client, connect, self.broker, self.state, "sink", None)
        self._client = client
        return client

    def start(self) -> None:
        try:
            self._connect()
        except BrokerUnreachable as exc:  # publish() tries again
            self.state.down(str(exc))

    def publish(self, topic: str, payload: bytes, qos: int, properties: dict[str, str],
                stopping: threading.Event) -> bool:
        publish = Properties(PacketTypes.PUBLISH)
        if properties:
            publish.UserProperty = list(properties.items())
        while not stopping.is_set():
            try:
                client = self._connect()
            except BrokerUnreachable as exc:
                self.state.down(str(exc))
                stopping.wait(RETRY_S)
                continue
            if qos == 0 and not client.is_connected():  # paho drops a QoS 0 message it cannot send now
                stopping.wait(POLL_S)
                continue
            # QoS 1: paho keeps the message while the broker is away and sends it again after reconnecting
            info = client.publish(topic, payload, qos=qos, properties=publish)
            if qos == 0 and info.rc != mqtt.MQTT_ERR_SUCCESS:
                stopping.wait(POLL_S)
                continue
            with self._changed:
                while info.mid not in self._acked:
                    if stopping.is_set():
                        return False
                    if qos == 0 and not client.is_connected():
                        return True  # at most once: lost with the connection
                    self._changed.wait(POLL_S)
                self._acked.discard(info.mid)
            return True
        return False

    def stop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.disconnect()
            client.loop_stop()
        self.state.down(None)
