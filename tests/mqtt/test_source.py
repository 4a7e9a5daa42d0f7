"""A stream fed by a real Mosquitto broker: items arrive, windows fire,
bad messages are counted and logged, credentials are checked, and what a
stream's source is declared with is checked before anything is declared."""

from __future__ import annotations

import random

import pytest

from tests.mqtt.helpers import (
    EX,
    Publisher,
    connected,
    declare,
    http,
    register,
    source_state,
    values,
    wait_for,
    windows,
)

BATCH = "application/x-timestamped-ntriples"


def line(k: int) -> str:
    return f'<{EX}m{k}> <{EX}p> "{k}" .\n'


def test_items_arrive_and_windows_fire(broker, rivulet, tmp_path):
    mosquitto = broker()
    server = rivulet("--data-dir", str(tmp_path / "data"))
    source = {"broker": mosquitto.url, "topic": "sensors/+/temp", "timestamp": "property"}
    response = declare(server.url, "s", source)
    assert response.status_code == 201, response.text
    assert response.json()["source"] == source
    register(server.url, f"REGISTER QUERY q AS SELECT ?o FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                         "WHERE { ?m ?p ?o }")
    wait_for(lambda: connected(server.url, "s"), what="the source to connect")
    publisher = Publisher(mosquitto.url, "gateway")
    for k in range(30):  # 10 items a second, over three seconds, from two sensors
        publisher.publish(f"sensors/{k % 2}/temp", line(k), timestamp=str(1_000_000 + 100 * k))
    publisher.publish("sensors/0/temp", "", timestamp="1003000")  # a heartbeat closes the third window
    publisher.publish("elsewhere", line(99), timestamp="1003000")  # not the source's topic
    publisher.wait_acked(32)
    events = windows(server.url, "q", 3)
    assert [values(event, "o") for event in events[:3]] == [
        {str(k): 1 for k in range(10 * w, 10 * w + 10)} for w in range(3)]
    state = wait_for(lambda: (s := source_state(server.url, "s"))["acknowledged"] == 31 and s,
                     what="31 acknowledgements")
    assert (state["messages"], state["items"], state["bad_messages"], state["duplicates"]) == (31, 30, 0, 0)
    assert state["connected"] and state["topic"] == "sensors/+/temp" and state["lag_s"] < 5
    metrics = http.get(f"{server.url}/metrics").text
    assert 'rivulet_stream_source_acknowledged_total{stream="s"} 31.0' in metrics
    assert 'rivulet_stream_source_connected{stream="s"} 1.0' in metrics
    # dropping the stream stops its source
    assert http.delete(f"{server.url}/queries/q").status_code == 204
    assert http.delete(f"{server.url}/streams/s").status_code == 204
    assert 'stream="s"' not in http.get(f"{server.url}/metrics").text
    publisher.close()


def _bad_payloads(rng: random.Random) -> list[tuple[bytes, str | None, str]]:
    """Messages a source must refuse, with the timestamp property each carries
    and what the refusal says: cut and corrupted N-Triples, bytes that are
    not UTF-8, timestamps that are not ones, no timestamp, a late item."""
    good = line(7).encode()
    bad: list[tuple[bytes, str | None, str]] = []
    for _ in range(12):
        cut = rng.randrange(1, len(good) - 3)
        bad.append((good[:cut], "1000500", "malformed N-Triples"))
    for _ in range(6):
        at = rng.randrange(len(good) - 2)
        bad.append((good[:at] + rng.choice([b"<", b'"', b"\\", b"\xff\xfe", b"@@"]) + good[at + 1:],
                    "1000500", ""))
    bad += [(good, "yesterday", "not a timestamp"), (good, "99999999999999999999", "out of range"),
            (good, None, "no 'timestamp' user property"), (b"", None, "user property"),
            (good, "5", "late item")]
    return bad


def test_bad_messages_are_counted_logged_and_never_stop_the_source(broker, rivulet, tmp_path):
    mosquitto = broker()
    server = rivulet("--data-dir", str(tmp_path / "data"))
    assert declare(server.url, "s", {"broker": mosquitto.url, "topic": "in/s", "timestamp": "property"}
                   ).status_code == 201
    assert declare(server.url, "b", {"broker": mosquitto.url, "topic": "in/b", "format": BATCH}
                   ).status_code == 201
    wait_for(lambda: connected(server.url, "s") and connected(server.url, "b"), what="the sources")
    publisher = Publisher(mosquitto.url, "gateway")
    publisher.publish("in/s", line(0), timestamp="1000000")
    bad = _bad_payloads(random.Random(30))
    good = 1
    for number, (payload, stamp, _) in enumerate(bad):
        properties = {"timestamp": stamp} if stamp is not None else {}
        publisher.publish("in/s", payload, **properties)
        publisher.publish("in/s", line(100 + number), timestamp=str(1_001_000 + number))
        good += 1
    # a batch whose third line goes back in time, one with a broken second line, then a good one
    publisher.publish("in/b", f"1000 {line(1)}2000 {line(2)}1500 {line(3)}")
    publisher.publish("in/b", f"1000 {line(1)}2000 <{EX}broken .\n")
    publisher.publish("in/b", f"3000 {line(4)}3001 {line(5)}")
    publisher.wait_acked(good + len(bad) + 3)
    state = wait_for(lambda: (s := source_state(server.url, "s"))["acknowledged"] == good + len(bad) and s,
                     what="every message acknowledged")
    # a corrupted byte may still leave a readable item (an IRI with other characters), or the same
    # message as an earlier one (same payload, same timestamp: a duplicate): count those too
    readable = state["items"] - good
    assert state["bad_messages"] + readable + state["duplicates"] == len(bad)
    assert state["bad_messages"] >= len(bad) - 6
    assert state["connected"] and "topic 'in/s'" in state["last_bad_message"]
    batches = wait_for(lambda: (s := source_state(server.url, "b"))["acknowledged"] == 3 and s,
                       what="the batches acknowledged")
    assert (batches["bad_messages"], batches["items"]) == (2, 2)
    log = "".join(server.stop())
    assert "bad message on topic 'in/s'" in log
    assert "line 1" in log and "line 3" in log and "line 2" in log  # the parser's position
    for _, _, said in bad:
        assert said in log
    publisher.close()


def test_credentials_from_a_password_file(broker, rivulet, tmp_path):
    mosquitto = broker(users={"rivulet": "s3cret-pass", "other": "x"})
    good, wrong = tmp_path / "good.pass", tmp_path / "wrong.pass"
    good.write_text("s3cret-pass\n")
    wrong.write_text("not-it\n")
    server = rivulet("--data-dir", str(tmp_path / "data"))
    base = {"broker": mosquitto.url, "topic": "t", "username": "rivulet", "timestamp": "property"}
    assert declare(server.url, "ok", {**base, "password_file": str(good)}).status_code == 201
    refused = {**base, "password_file": str(wrong), "topic": "u"}
    assert declare(server.url, "refused", refused).status_code == 201
    wait_for(lambda: connected(server.url, "ok"), what="the source with the right password")
    publisher = Publisher(mosquitto.url, "gateway", "other", "x")
    publisher.publish("t", line(1), timestamp="1000")
    wait_for(lambda: source_state(server.url, "ok")["items"] == 1, what="the item")
    refused = source_state(server.url, "refused")
    assert not refused["connected"] and "refused" in (refused["last_error"] or "")
    stored = http.get(f"{server.url}/streams/ok").json()["source"]
    assert stored["password_file"] == str(good)
    assert "s3cret" not in http.get(f"{server.url}/streams").text
    publisher.close()


@pytest.mark.parametrize("source, said", [
    ({"topic": "t"}, "source.broker"),
    ({"broker": "http://127.0.0.1:1", "topic": "t"}, "unsupported scheme"),
    ({"broker": "mqtt://u:p@127.0.0.1", "topic": "t"}, "credentials"),
    ({"broker": "mqtt://127.0.0.1:99999", "topic": "t"}, "bad port"),
    ({"broker": "mqtt://127.0.0.1", "topic": "a/#/b"}, "wildcard"),
    ({"broker": "mqtt://127.0.0.1", "topic": "a+"}, "wildcard"),
    ({"broker": "mqtt://127.0.0.1", "topic": ""}, "source.topic"),
    ({"broker": "mqtt://127.0.0.1", "topic": "t", "password": "x"}, "password_file"),
    ({"broker": "mqtt://127.0.0.1", "topic": "t", "qos": 2}, "source.qos"),
    ({"broker": "mqtt://127.0.0.1", "topic": "t", "inflight": 0}, "source.inflight"),
    ({"broker": "mqtt://127.0.0.1", "topic": "t", "format": "text/csv"}, "source.format"),
    ({"broker": "mqtt://127.0.0.1", "topic": "t", "format": BATCH, "timestamp": "arrival"}, "payload"),
    ({"broker": "mqtt://127.0.0.1", "topic": "t", "colour": "red"}, "unknown fields"),
    ("mqtt://127.0.0.1", "JSON object"),
])
def test_a_bad_source_is_refused_and_nothing_declared(plain_server, source, said):
    response = declare(plain_server.url, "s", source)
    assert response.status_code == 400 and said in response.text, response.text
    assert http.get(f"{plain_server.url}/streams/s").status_code == 404


def test_turtle_and_json_ld_items_and_a_broker_held_to_the_inflight_window(broker, rivulet, tmp_path):
    """Other item formats arrive as over HTTP; a broker with many messages
    waiting sends the source no more than its window (the source's queue
    stays within twice that, whatever is waiting at the broker)."""
    mosquitto = broker()
    server = rivulet("--data-dir", str(tmp_path / "data"))
    turtle = {"broker": mosquitto.url, "topic": "ttl", "format": "text/turtle", "timestamp": "property",
              "inflight": 5}
    jsonld = {"broker": mosquitto.url, "topic": "jsonld", "format": "application/ld+json",
              "timestamp": "property"}
    assert declare(server.url, "t", turtle).status_code == 201
    assert declare(server.url, "j", jsonld).status_code == 201
    wait_for(lambda: connected(server.url, "t") and connected(server.url, "j"), what="the sources")
    publisher = Publisher(mosquitto.url, "gateway")
    sent = 600
    for k in range(sent):
        publisher.publish("ttl", f'@prefix ex: <{EX}> .\nex:m{k} ex:p "{k}", "{k + 1}" .\n',
                          timestamp=str(1000 + k))
    for k in range(3):
        publisher.publish("jsonld", f'{{"@id": "{EX}j{k}", "{EX}p": "{k}"}}', timestamp=str(1000 + k))
    publisher.wait_acked(sent + 3)
    waiting = []

    def sampled() -> dict | None:
        state = source_state(server.url, "t")
        waiting.append(state["waiting"])
        return state if state["acknowledged"] >= sent else None

    state = wait_for(sampled, what=f"{sent} Turtle messages acknowledged")
    # sampled while the broker still held messages back, and never more than twice the window here
    assert len(waiting) >= 3 and max(waiting) <= 10, waiting
    assert state["items"] == sent and state["triples"] == 2 * sent
    assert wait_for(lambda: source_state(server.url, "j")["items"] == 3, what="the JSON-LD items")
    assert http.get(f"{server.url}/streams/j").json()["triples"] == 3
    publisher.close()
