"""What the MQTT tests do over and over: publish, declare, register, wait, read windows."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable

import httpx
import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from tests.endpoint.sse_client import SSEReader

EX = "http://example.org/"
http = httpx.Client(timeout=30)
#: seconds any wait of these tests may take before it fails
WAIT_S = 40


def wait_for(condition: Callable[[], object], seconds: float = WAIT_S, what: str = "a condition") -> object:
    """Poll ``condition`` until it is truthy; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds} s for {what}")
        time.sleep(0.05)


def declare(url: str, name: str, source: dict | None = None, **fields) -> httpx.Response:
    body = {"iri": f"{EX}{name}", **fields, **({"source": source} if source is not None else {})}
    return http.put(f"{url}/streams/{name}", json=body)


def register(url: str, text: str) -> None:
    response = http.post(f"{url}/queries", content=text, headers={"Content-Type": "application/sparql-query"})
    assert response.status_code == 201, response.text


def source_state(url: str, name: str) -> dict:
    return http.get(f"{url}/streams/{name}").json()["source_state"] or {}


def connected(url: str, name: str) -> bool:
    return bool(source_state(url, name).get("connected"))


def windows(url: str, query: str, count: int | None = None, settle: float = 0.0) -> list[dict]:
    """The query's window events from its first (the retained ones, then
    live ones): at least ``count`` of them, or what came within ``settle`` s."""
    reader = SSEReader(f"{url}/queries/{query}/events", last_event_id="0")
    try:
        if count is not None:
            wait_for(lambda: len(reader.events) >= count, what=f"{count} windows of {query}")
        time.sleep(settle)
        return [data for _, _, data in reader.events]
    finally:
        reader.close()


def values(event: dict, variable: str) -> Counter:
    return Counter(binding[variable]["value"] for binding in event["results"]["results"]["bindings"]
                   if variable in binding)


class Publisher:
    """A QoS 1 publisher with a persistent session (as a sensor gateway
    runs one): messages published while the broker is away are sent when it
    is back; ``acked`` counts the broker's acknowledgements."""

    def __init__(self, broker_url: str, client_id: str, username: str | None = None,
                 password: str | None = None) -> None:
        host, port = broker_url.removeprefix("mqtt://").split(":")
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
        self.client.max_inflight_messages_set(100)
        self.client.max_queued_messages_set(0)
        self.client.reconnect_delay_set(0.2, 1)
        if username is not None:
            self.client.username_pw_set(username, password)
        self.acked = 0
        self._lock = threading.Lock()
        self._up = threading.Event()
        self.client.on_publish = self._on_publish
        self.client.on_connect = lambda c, u, f, reason, p: self._up.set() if not reason.is_failure else None
        connect = Properties(PacketTypes.CONNECT)
        connect.SessionExpiryInterval = 3600
        self.client.connect_async(host, int(port), 30, clean_start=False, properties=connect)
        self.client.loop_start()
        if not self._up.wait(10):
            raise AssertionError(f"the test publisher cannot connect to {broker_url}")

    def _on_publish(self, client, userdata, mid, reason, properties) -> None:
        with self._lock:
            self.acked += 1

    def publish(self, topic: str, payload: bytes | str, **user_properties: str) -> None:
        properties = Properties(PacketTypes.PUBLISH)
        if user_properties:
            properties.UserProperty = [(key.replace("_", "-"), text) for key, text in user_properties.items()]
        self.client.publish(topic, payload, qos=1, properties=properties)

    def wait_acked(self, count: int, seconds: float = WAIT_S) -> None:
        wait_for(lambda: self.acked >= count, seconds, f"the broker to acknowledge {count} messages")

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
