"""Issue 26, items 1 and 5, over a real uvicorn server: a count window counts
the triples of an item's graph, however its body repeats them; CityBench's
queries with two STEPs register (no more 400) and their SSE events carry each
window's bounds and the oracle's rows."""

from __future__ import annotations

import random
from collections import Counter

import httpx
import pytest

from engine.api import Store
from engine.rdf import format_term
from tests.endpoint.sse_client import SSEReader
from tests.harness import citybench

pytest.importorskip("pyoxigraph")
from tests.stream.window_oracle import OracleQuery, OracleWindow, StreamRecord  # noqa: E402

EX = "http://example.org/"
BATCH = "application/x-timestamped-ntriples"
http = httpx.Client(timeout=30)
A, B, C, D, P = (f"<{EX}{name}>" for name in ("a", "b", "c", "d", "p"))


def post(url: str, name: str, body: str, media_type: str, timestamp: str | None = None) -> dict:
    headers = {"Content-Type": media_type, **({"X-Timestamp": timestamp} if timestamp else {})}
    response = http.post(f"{url}/streams/{name}", content=body.encode(), headers=headers)
    assert response.status_code == 202, response.text
    return response.json()


def register(url: str, text: str) -> None:
    response = http.post(f"{url}/queries", content=text, headers={"Content-Type": "application/sparql-query"})
    assert response.status_code == 201, response.text


def values(event: dict) -> Counter:
    names = event["results"]["head"]["vars"]
    return Counter(tuple(binding.get(name, {}).get("value") for name in names)
                   for binding in event["results"]["results"]["bindings"])


@pytest.mark.parametrize("body, media_type, timestamp", [
    (f"{A} {P} {B} .\n{A} {P} {B} .\n", "application/n-triples", "1000"),
    (f"{A} {P} {B} .\n{A} {P} {B} .\n", "text/turtle", "1000"),
    (f"1000 {A} {P} {B} .\n1000 {A} {P} {B} .\n", BATCH, None),
])
def test_a_count_window_counts_an_items_distinct_triples(serve, body, media_type, timestamp):
    url = serve()
    assert http.put(f"{url}/streams/s", json={"iri": f"{EX}s"}).status_code == 201
    register(url, f"REGISTER QUERY q AS SELECT ?s ?o FROM STREAM <{EX}s> [TRIPLES 2] WHERE {{ ?s ?p ?o }}")
    reader = SSEReader(f"{url}/queries/q/events")
    first = post(url, "s", body, media_type, timestamp)
    assert (first["items"], first["triples"], first["windows_fired"]) == (1, 1, 0)
    second = post(url, "s", f"{C} {P} {D} .\n", "application/n-triples", "2000")
    assert (second["triples"], second["windows_fired"]) == (1, 1)
    [event] = reader.wait_for(1)
    reader.close()
    assert values(event) == Counter({(EX + "a", EX + "b"): 1, (EX + "c", EX + "d"): 1})
    assert event["window"] == {"start_ms": 1000, "end_ms": 2001}
    assert event["windows"] == [{"stream": f"{EX}s", "name": None, "start_ms": 1000, "end_ms": 2001}]
    assert http.get(f"{url}/streams/s").json()["triples"] == 2


def test_citybench_queries_with_two_steps_over_http(serve):
    if not citybench.available():
        pytest.skip("../shared/datasets/citybench is absent: CityBench's queries not run")
    store = Store()
    store.add(citybench.sensor_repository(), graph=citybench.REPOSITORY)
    url = serve(store)
    for stream in citybench.STREAMS:
        assert http.put(f"{url}/streams/{stream.rsplit('#', 1)[1]}", json={"iri": stream}).status_code == 201
    readers, oracles = {}, {}
    for name in citybench.TWO_STEP_QUERIES:
        register(url, citybench.registration(name))
        readers[name] = SSEReader(f"{url}/queries/{name}/events")
        windows = [OracleWindow(stream, None, r, s) for stream, r, s in citybench.windows(name)]
        oracles[name] = OracleQuery(windows, "csparql", "RSTREAM", citybench.select_where(name),
                                    stored=lambda t: set(citybench.sensor_repository()))
    records = {stream: StreamRecord() for stream in citybench.STREAMS}
    posts = citybench.observations(random.Random(5), 30_000)
    # each stream's items of one 5-second slice in one batch body, slice after slice
    slices: dict[tuple[int, str], list] = {}
    for stream, items in posts:
        for ts, triples in items:
            slices.setdefault((ts // 5_000, stream), []).append((ts, triples))
    for number, ((_, stream), items) in enumerate(sorted(slices.items())):
        body = "".join(f"{ts} {' '.join(map(format_term, triple))} .\n" if triples else f"{ts}\n"
                       for ts, triples in items for triple in (triples or [None]))
        post(url, stream.rsplit("#", 1)[1], body, BATCH)
        records[stream].post(number, items)
        for oracle in oracles.values():
            data = [ts for ts, triples in items if triples]
            if data and any(w.stream == stream for w in oracle.windows):
                oracle.saw_item(data[0])
    for name, reader in readers.items():
        expected = oracles[name].expected(records)
        events = reader.wait_for(len(expected))
        reader.close()
        assert len(events) == len(expected) > 15, name
        for event, (instant, bounds, rows) in zip(events, expected, strict=True):
            assert event["window"] == {"start_ms": min(start for start, _ in bounds), "end_ms": instant}
            assert [(w["stream"], w["start_ms"], w["end_ms"]) for w in event["windows"]] == [
                (w.stream, *b) for w, b in zip(oracles[name].windows, bounds, strict=True)]
            assert values(event) == rows, (name, instant)
        assert any(len(set(start for start, _ in b)) > 1 for _, b, _ in expected)
