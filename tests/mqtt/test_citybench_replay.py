"""CityBench's two-STEP queries over streams fed through Mosquitto give the
windows they give over HTTP.

The same replay (tests/harness/citybench.py: its observations in 5-second
slices, each stream's slice one timestamped N-Triples body) goes to one
server as ``POST /streams/{name}`` and to another as one MQTT message per
slice on the stream's topic; each slice is published once the previous
one is ingested, in the order the HTTP replay posts them, so both servers
see the streams interleaved alike. Every window must be equal (bounds and
rows; timings apart).
"""

from __future__ import annotations

import random

import pytest

from engine.rdf import format_term
from tests.harness import citybench
from tests.mqtt.helpers import Publisher, connected, http, register, source_state, wait_for, windows

BATCH = "application/x-timestamped-ntriples"


def slices() -> list[tuple[str, str]]:
    """``(stream IRI, body)`` per stream and 5-second slice, in replay order."""
    posts = citybench.observations(random.Random(5), 30_000)
    grouped: dict[tuple[int, str], list] = {}
    for stream, items in posts:
        for ts, triples in items:
            grouped.setdefault((ts // 5_000, stream), []).append((ts, triples))
    return [(stream, "".join(f"{ts} {' '.join(map(format_term, triple))} .\n" if triples else f"{ts}\n"
                             for ts, triples in items for triple in (triples or [None])))
            for (_, stream), items in sorted(grouped.items())]


def comparable(event: dict) -> dict:
    return {key: event[key] for key in ("sequence", "window", "windows", "rows", "results")}


def name_of(stream: str) -> str:
    return stream.rsplit("#", 1)[1]


def test_a_citybench_replay_through_mqtt_gives_the_windows_of_http(broker, rivulet, tmp_path):
    if not citybench.available():
        pytest.skip("../shared/datasets/citybench is absent: CityBench's queries not run")
    repository = tmp_path / "repository.nq"
    repository.write_text("".join(f"{' '.join(map(format_term, t))} <{citybench.REPOSITORY}> .\n"
                                  for t in citybench.sensor_repository()))
    mosquitto = broker()
    over_http = rivulet("--data", str(repository))
    over_mqtt = rivulet("--data", str(repository))
    for stream in citybench.STREAMS:
        assert http.put(f"{over_http.url}/streams/{name_of(stream)}", json={"iri": stream}).status_code == 201
        source = {"broker": mosquitto.url, "topic": f"citybench/{name_of(stream)}", "format": BATCH}
        assert http.put(f"{over_mqtt.url}/streams/{name_of(stream)}",
                        json={"iri": stream, "source": source}).status_code == 201
    for server in (over_http, over_mqtt):
        for name in citybench.TWO_STEP_QUERIES:
            register(server.url, citybench.registration(name))
    names = [name_of(stream) for stream in citybench.STREAMS]
    wait_for(lambda: all(connected(over_mqtt.url, name) for name in names), what="the CityBench sources")
    publisher = Publisher(mosquitto.url, "citybench-replay")
    published: dict[str, int] = {name_of(s): 0 for s in citybench.STREAMS}
    for stream, body in slices():
        response = http.post(f"{over_http.url}/streams/{name_of(stream)}", content=body,
                             headers={"Content-Type": BATCH})
        assert response.status_code == 202, response.text
        publisher.publish(f"citybench/{name_of(stream)}", body)
        published[name_of(stream)] += 1
        name = name_of(stream)
        wait_for(lambda: source_state(over_mqtt.url, name)["acknowledged"] == published[name],  # noqa: B023
                 what="the slice ingested")
    for name in citybench.TWO_STEP_QUERIES:
        expected = windows(over_http.url, name, 16, settle=0.5)
        got = windows(over_mqtt.url, name, len(expected), settle=0.5)
        assert len(expected) > 15, name
        assert [comparable(e) for e in got] == [comparable(e) for e in expected], name
    for stream in citybench.STREAMS:
        state = source_state(over_mqtt.url, name_of(stream))
        assert (state["bad_messages"], state["duplicates"]) == (0, 0)
    publisher.close()
