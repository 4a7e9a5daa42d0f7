"""Streams, continuous queries and SSE over a real uvicorn server, as a client uses them."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.endpoint.sse_client import SSEReader
from tests.harness import csrbench

EX = "http://example.org/"
#: one client for the module: making an httpx client builds an SSL context (~30 ms)
http = httpx.Client(timeout=30)
BATCH = "application/x-timestamped-ntriples"


def declare(url: str, name: str, **spec) -> httpx.Response:
    return http.put(f"{url}/streams/{name}", json=spec)


def register(url: str, text: str) -> httpx.Response:
    return http.post(f"{url}/queries", content=text, headers={"Content-Type": "application/sparql-query"})


def post_batch(url: str, name: str, body: str) -> httpx.Response:
    return http.post(f"{url}/streams/{name}", content=body, headers={"Content-Type": BATCH})


def count_query(url: str, text: str) -> int:
    response = http.get(f"{url}/sparql", params={"query": text},
                         headers={"Accept": "application/sparql-results+json"})
    assert response.status_code == 200, response.text
    return len(response.json()["results"]["bindings"])


COUNT_REGISTRATION = f"""REGISTER QUERY counter AS
SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}"""


@pytest.fixture
def server(serve) -> str:
    url = serve()
    assert declare(url, "s", iri=f"{EX}s", timing=[f"{EX}temp"]).status_code == 201
    return url


def test_csrbench_over_http_gives_the_reference_windows(serve):
    if not csrbench.available():
        pytest.skip("../shared/conformance/csrbench is absent: CSRBench not run")
    url = serve()
    readers = {}
    for n in csrbench.QUERY_NUMBERS:
        iri = f"{csrbench.STREAM}{n}"
        assert declare(url, f"csr{n}", iri=iri).status_code == 201
        text = csrbench.registration(n).replace(f"<{csrbench.STREAM}>", f"<{iri}>")
        response = register(url, text)
        assert response.status_code == 201, response.text
        readers[n] = SSEReader(f"{url}/queries/csrbench_q{n}/events")
    for ts, path in csrbench.data_files():
        body = path.read_bytes()
        for n in csrbench.QUERY_NUMBERS:
            response = http.post(f"{url}/streams/csr{n}", content=body,
                                  headers={"Content-Type": "text/turtle", "X-Timestamp": str(ts)})
            assert response.status_code == 202, response.text
    for n in csrbench.QUERY_NUMBERS:
        spec = csrbench.expected(n)
        assert http.post(f"{url}/streams/csr{n}", headers={"X-Timestamp": str(spec["final_watermark_ms"])},
                          content=b"").status_code == 202
        events = readers[n].wait_for(len(spec["windows"]))
        readers[n].close()
        got = [{"close_ms": e["window"]["end_ms"], "bindings": e["results"]["results"]["bindings"]}
               for e in events]
        assert csrbench.normalise_windows(got) == csrbench.normalise_windows(spec["windows"]), f"Q{n}"
        assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))


def test_window_results_are_pushed_and_timeless_data_is_stored(server):
    assert register(server, COUNT_REGISTRATION).status_code == 201
    reader = SSEReader(f"{server}/queries/counter/events")
    body = "\n".join([
        f"1000 <{EX}a> <{EX}temp> \"20\" .",
        f"1000 <{EX}a> <{EX}name> \"A\" .",
        f"1500 <{EX}b> <{EX}name> \"B\" .",
        "2000",
    ])
    response = post_batch(server, "s", body)
    assert response.status_code == 202, response.text
    assert response.json()["watermark_ms"] == 2000
    events = reader.wait_for(1)
    reader.close()
    assert events[0]["window"] == {"start_ms": 1000, "end_ms": 2000}
    assert events[0]["results"]["results"]["bindings"][0]["n"]["value"] == "3"
    # the timeless triples are in the stream's stored graph; the timing one is not
    assert count_query(server, f"SELECT * WHERE {{ GRAPH <{EX}s> {{ ?s ?p ?o }} }}") == 2


def test_resume_after_last_event_id(server):
    register(server, COUNT_REGISTRATION)
    for second in range(1, 5):
        post_batch(server, "s", f"{second * 1000} <{EX}a> <{EX}name> \"{second}\" .")
    post_batch(server, "s", "5000")
    first = SSEReader(f"{server}/queries/counter/events", last_event_id="0")
    events = first.wait_for(4)
    first.close()
    assert [e["sequence"] for e in events] == [1, 2, 3, 4]
    resumed = SSEReader(f"{server}/queries/counter/events", last_event_id="2")
    post_batch(server, "s", "6000")
    events = resumed.wait_for(3)
    resumed.close()
    assert [e["sequence"] for e in events] == [3, 4, 5]


def test_a_stalled_subscriber_is_dropped_without_slowing_the_others(server, monkeypatch):
    import socket

    from endpoint import continuous_routes

    monkeypatch.setattr(continuous_routes, "SUBSCRIBER_QUEUE", 8)
    register(server, f"REGISTER QUERY everything AS SELECT * FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                     "WHERE { ?s ?p ?o }")
    host, port = server.removeprefix("http://").split(":")
    stalled = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect((host, int(port)))
    stalled.sendall(f"GET /queries/everything/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    reader = SSEReader(f"{server}/queries/everything/events")

    def subscribers() -> int:
        return http.get(f"{server}/queries/everything").json()["subscribers"]

    deadline = time.monotonic() + 10
    while subscribers() < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    started = time.monotonic()
    for second in range(1, 41):  # 40 windows of 2,000 rows (~12 MB of events per subscriber)
        body = "\n".join(f"{second * 1000} <{EX}r{i}> <{EX}v> \"{second}\" ." for i in range(2000))
        post_batch(server, "s", body)
    post_batch(server, "s", "41000")
    events = reader.wait_for(40, timeout=60)
    assert len(events) == 40 and all(e["rows"] == 2000 for e in events)
    assert time.monotonic() - started < 60
    # the stalled one is cut off while the reader, still connected, keeps its place
    deadline = time.monotonic() + 10
    while subscribers() > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert subscribers() == 1
    reader.close()
    stalled.close()


def test_bad_input_changes_nothing(server):
    # unparsable registration: 400 with the position
    response = register(server, "REGISTER QUERY q AS SELECT ?x\n"
                                "FROM STREAM <http://x> [RANGE 1s STEP 1s]\nWHERE { ?x }")
    assert response.status_code == 400
    assert "line 3" in response.text
    # unknown stream in a registration, and a POST to an unknown stream: 404
    response = register(server, "REGISTER QUERY q AS SELECT * FROM STREAM <http://nowhere> "
                                "[RANGE 1s STEP 1s] WHERE { ?s ?p ?o }")
    assert response.status_code == 404
    assert post_batch(server, "nowhere", "1000").status_code == 404
    # malformed RDF: 400 with the line, nothing of the POST ingested
    post_batch(server, "s", f"1000 <{EX}a> <{EX}name> \"ok\" .")
    response = post_batch(server, "s", f"2000 <{EX}a> <{EX}name> \"fine\" .\n2000 <{EX}a> <{EX}name> oops .")
    assert response.status_code == 400
    assert "line 2" in response.text
    stream = http.get(f"{server}/streams/s").json()
    assert stream["watermark_ms"] == 1000
    assert count_query(server, f"SELECT * WHERE {{ GRAPH <{EX}s> {{ ?s ?p \"fine\" }} }}") == 0
    # a late item: rejected with its timestamp
    response = post_batch(server, "s", f"500 <{EX}a> <{EX}name> \"late\" .")
    assert response.status_code == 409
    assert "500" in response.text
    # a name registered twice: 409
    assert register(server, COUNT_REGISTRATION).status_code == 201
    assert register(server, COUNT_REGISTRATION).status_code == 409


def test_registration_through_the_sparql_endpoint_and_the_rest_resource(server):
    response = http.post(f"{server}/sparql", content=COUNT_REGISTRATION,
                          headers={"Content-Type": "application/sparql-update"})
    assert response.status_code in (200, 201, 204), response.text
    listed = http.get(f"{server}/queries").json()["queries"]
    assert [q["name"] for q in listed] == ["counter"]
    described = http.get(f"{server}/queries/counter").json()
    assert described["windows"][0]["range_ms"] == 1000
    streams = http.get(f"{server}/streams").json()["streams"]
    assert streams[0]["name"] == "s" and "rate_triples_per_s" in streams[0]
    assert http.delete(f"{server}/queries/counter").status_code == 204
    assert http.get(f"{server}/queries/counter").status_code == 404


def test_single_items_in_rdf_syntaxes_and_heartbeats(server):
    register(server, COUNT_REGISTRATION)
    reader = SSEReader(f"{server}/queries/counter/events")
    turtle = f"@prefix ex: <{EX}> . ex:a ex:name \"A\" ; ex:temp 20 ."
    assert http.post(f"{server}/streams/s", content=turtle,
                      headers={"Content-Type": "text/turtle", "X-Timestamp": "1000"}).status_code == 202
    jsonld = {"@id": f"{EX}b", f"{EX}name": "B"}
    assert http.post(f"{server}/streams/s?timestamp=1200", json=jsonld,
                      headers={"Content-Type": "application/ld+json"}).status_code == 202
    assert http.post(f"{server}/streams/s", content=b"",
                      headers={"X-Timestamp": "1970-01-01T00:00:02Z"}).status_code == 202
    events = reader.wait_for(1)
    reader.close()
    assert events[0]["results"]["results"]["bindings"][0]["n"]["value"] == "3"


def test_replay_command_feeds_a_recorded_stream(server, tmp_path):
    import subprocess
    import sys

    recording = tmp_path / "sensors.tsnt"
    recording.write_text("\n".join(
        [f"{t} <{EX}s{t % 3}> <{EX}name> \"{t}\" ." for t in range(0, 3000, 250)] + ["3000"]
    ) + "\n")
    register(server, COUNT_REGISTRATION)
    reader = SSEReader(f"{server}/queries/counter/events")
    done = subprocess.run(
        [sys.executable, "-m", "endpoint.cli", "replay", str(recording), "--stream", "s",
         "--server", server, "--rate", "0", "--quiet"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "replayed 12 triples" in done.stdout
    events = reader.wait_for(3)
    reader.close()
    assert [e["results"]["results"]["bindings"][0]["n"]["value"] for e in events] == ["4", "4", "4"]
    assert http.get(f"{server}/streams/s").json()["watermark_ms"] == 3000
