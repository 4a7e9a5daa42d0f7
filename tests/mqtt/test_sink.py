"""A query's windows published to a real Mosquitto: the SSE event's JSON,
QoS 1, in window order, held back and sent while the broker was away."""

from __future__ import annotations

import json
import threading

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from tests.mqtt.helpers import EX, http, register, wait_for, windows

BATCH = "application/x-timestamped-ntriples"


class Subscriber:
    """A QoS 1 subscriber with a persistent session: what the broker keeps
    for it while either side is away reaches it later."""

    def __init__(self, broker_url: str, topic: str) -> None:
        host, port = broker_url.removeprefix("mqtt://").split(":")
        self.messages: list[mqtt.MQTTMessage] = []
        self._lock = threading.Lock()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"reader-{topic}",
                                  protocol=mqtt.MQTTv5)
        self.client.reconnect_delay_set(0.2, 1)
        self.client.on_connect = lambda c, u, f, reason, p: c.subscribe(topic, qos=1)
        self.client.on_message = self._on_message
        connect = Properties(PacketTypes.CONNECT)
        connect.SessionExpiryInterval = 3600
        self.client.connect_async(host, int(port), 30, clean_start=False, properties=connect)
        self.client.loop_start()

    def _on_message(self, client, userdata, message) -> None:
        with self._lock:
            self.messages.append(message)

    def wait(self, count: int) -> list[mqtt.MQTTMessage]:
        wait_for(lambda: len(self.messages) >= count, what=f"{count} published windows")
        with self._lock:
            return list(self.messages)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def post(url: str, body: str) -> None:
    response = http.post(f"{url}/streams/s", content=body, headers={"Content-Type": BATCH})
    assert response.status_code == 202, response.text


def items(start: int, stop: int) -> str:
    return "".join(f'{1_000_000 + 100 * k} <{EX}m{k}> <{EX}p> "{k}" .\n' for k in range(start, stop))


def test_windows_are_published_in_order_and_wait_for_the_broker(broker, rivulet, tmp_path):
    mosquitto = broker(persistent=True)
    server = rivulet("--data-dir", str(tmp_path / "data"))
    assert http.put(f"{server.url}/streams/s", json={"iri": f"{EX}s"}).status_code == 201
    register(server.url, f"REGISTER QUERY q AS SELECT ?o FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                         f"WHERE {{ ?m <{EX}p> ?o }}")
    register(server.url, f"REGISTER QUERY c AS CONSTRUCT {{ ?m <{EX}seen> ?o }} FROM STREAM <{EX}s> "
                         f"[RANGE 1s STEP 1s] WHERE {{ ?m <{EX}p> ?o }}")
    reader = Subscriber(mosquitto.url, "out/#")
    response = http.put(f"{server.url}/queries/q/sink", json={"broker": mosquitto.url, "topic": "out/q"})
    assert response.status_code == 201, response.text
    response = http.put(f"{server.url}/queries/c/sink",
                        json={"broker": mosquitto.url, "topic": "out/c", "format": "triples"})
    assert response.status_code == 201, response.text
    wait_for(lambda: http.get(f"{server.url}/queries/q/sink").json()["connected"], what="the sink")
    post(server.url, items(0, 50))  # five windows close (the fifth at 1_004_900's successor)
    post(server.url, items(50, 51))
    first = reader.wait(10)
    mosquitto.stop()
    post(server.url, items(51, 120))  # seven more windows while the broker is away
    post(server.url, items(120, 121))
    mosquitto.start()
    published = reader.wait(24)
    by_topic = {topic: [m for m in published if m.topic == topic] for topic in ("out/q", "out/c")}
    events = windows(server.url, "q", 12)
    sequences = [json.loads(m.payload)["sequence"] for m in by_topic["out/q"]]
    # at least once: messages whose acknowledgements the restart lost come again, and MQTT
    # resends them after what was delivered (1, 2, ..., 5, 2, 3, ...); their first deliveries are
    # every window, in order, with no gap
    assert list(dict.fromkeys(sequences)) == list(range(1, 13))
    unique = {json.loads(m.payload)["sequence"]: json.loads(m.payload) for m in by_topic["out/q"]}
    assert [unique[k]["results"] for k in range(1, 13)] == [e["results"] for e in events[:12]]
    assert unique[3] == events[2]  # the same JSON as the SSE event
    constructed = [m for m in by_topic["out/c"]]
    assert len({dict(m.properties.UserProperty)["sequence"] for m in constructed}) == 12
    third = next(m for m in constructed if dict(m.properties.UserProperty)["sequence"] == "3")
    assert dict(third.properties.UserProperty)["timestamp"] == "1003000"
    assert sorted(third.payload.decode().splitlines()) == sorted(
        f'<{EX}m{k}> <{EX}seen> "{k}" .' for k in range(20, 30))
    state = http.get(f"{server.url}/queries/q/sink").json()
    assert (state["published"], state["last_sequence"], state["skipped"]) == (12, 12, 0)
    assert state["connects"] >= 2 and len(first) >= 10
    metrics = http.get(f"{server.url}/metrics").text
    assert 'rivulet_query_sink_published_total{query="q"} 12.0' in metrics
    # a restarted server's sinks go on after the last window they published
    server.stop()
    server = rivulet("--data-dir", str(tmp_path / "data"))
    wait_for(lambda: http.get(f"{server.url}/queries/q/sink").json()["connected"], what="the sink again")
    assert http.get(f"{server.url}/queries/q/sink").json()["last_sequence"] == 12
    post(server.url, items(121, 131))
    after = reader.wait(len(published) + 2)[len(published):]
    assert sorted(json.loads(m.payload)["sequence"] for m in after if m.topic == "out/q") == [13]
    assert http.delete(f"{server.url}/queries/q/sink").status_code == 204
    assert http.get(f"{server.url}/queries/q/sink").status_code == 404
    reader.close()


def test_a_bad_sink_is_refused(plain_server):
    server = plain_server
    assert http.put(f"{server.url}/streams/sunk", json={"iri": f"{EX}sunk"}).status_code == 201
    register(server.url, f"REGISTER QUERY q AS SELECT ?o FROM STREAM <{EX}sunk> [RANGE 1s STEP 1s] "
                         "WHERE { ?m ?p ?o }")
    for body, status, said in (
        ({"broker": "mqtt://127.0.0.1", "topic": "out/q", "format": "triples"}, 400, "CONSTRUCT"),
        ({"broker": "mqtt://127.0.0.1", "topic": "out/+"}, 400, "wildcards"),
        ({"broker": "mqtt://127.0.0.1"}, 400, "sink.topic"),
        ({"broker": "mqtt://127.0.0.1", "topic": "t", "password": "p"}, 400, "password_file"),
    ):
        response = http.put(f"{server.url}/queries/q/sink", json=body)
        assert (response.status_code, said in response.text) == (status, True), response.text
    response = http.put(f"{server.url}/queries/nope/sink", json={"broker": "mqtt://127.0.0.1", "topic": "t"})
    assert response.status_code == 404
    assert http.put(f"{server.url}/queries/q/sink", content=b"{not json").status_code == 400
    assert http.get(f"{server.url}/queries/q/sink").status_code == 404
