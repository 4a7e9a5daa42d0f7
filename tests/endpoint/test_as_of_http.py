"""Issue 26, items 2 and 3 over a real server: windows read the stored graph
that streams absorb into as of their close, whichever stream brought a
triple first and however large the POST."""

from __future__ import annotations

import httpx

from tests.endpoint.sse_client import SSEReader

EX = "http://example.org/"
http = httpx.Client(timeout=60)
BATCH = "application/x-timestamped-ntriples"


def post(url: str, name: str, lines: list[str]) -> None:
    response = http.post(f"{url}/streams/{name}", content="\n".join(lines), headers={"Content-Type": BATCH})
    assert response.status_code == 202, response.text


def register(url: str, text: str) -> None:
    response = http.post(f"{url}/queries", content=text, headers={"Content-Type": "application/sparql-query"})
    assert response.status_code == 201, response.text


def values(event: dict, *names: str) -> list[tuple]:
    return sorted(tuple(b[n]["value"] for n in names) for b in event["results"]["results"]["bindings"])


def test_a_triple_two_streams_absorb_is_read_from_its_earliest_copy(serve):
    url = serve()
    for name in ("A", "B"):
        response = http.put(f"{url}/streams/{name}", json={"iri": EX + name, "graph": EX + "g"})
        assert response.status_code == 201, response.text
    register(url, f"REGISTER RSTREAM q AS SELECT ?x ?y FROM <{EX}g> "
                  f"FROM NAMED WINDOW <{EX}wa> ON <{EX}A> [RANGE PT1S STEP PT1S] "
                  f"FROM NAMED WINDOW <{EX}wb> ON <{EX}B> [RANGE PT1S STEP PT1S] WHERE {{ ?x <{EX}rel> ?y }}")
    reader = SSEReader(f"{url}/queries/q/events")
    post(url, "B", [f"1000 <{EX}x0> <{EX}rel> <{EX}y0> ."])
    post(url, "A", [f"10000 <{EX}x1> <{EX}rel> <{EX}y1> ."])
    post(url, "B", [f"1500 <{EX}x1> <{EX}rel> <{EX}y1> .", "2000"])
    events = reader.wait_for(1)
    reader.close()
    assert events[0]["window"] == {"start_ms": 1000, "end_ms": 2000}
    assert values(events[0], "x", "y") == [(EX + "x0", EX + "y0"), (EX + "x1", EX + "y1")]


def test_one_post_of_16384_triples_is_read_as_of_each_close(serve):
    url = serve()
    assert http.put(f"{url}/streams/s", json={"iri": EX + "s"}).status_code == 201
    register(url, f"REGISTER RSTREAM q AS SELECT (COUNT(*) AS ?n) FROM <{EX}s> "
                  f"FROM NAMED WINDOW <{EX}w> ON <{EX}s> [RANGE PT1S STEP PT1S] WHERE {{ ?x <{EX}rel> ?y }}")
    reader = SSEReader(f"{url}/queries/q/events")
    rows = 16_384
    lines = [f"{100 + i * 2800 // rows} <{EX}x{i}> <{EX}rel> <{EX}y{i}> ." for i in range(rows)]
    post(url, "s", [*lines, "4000"])
    events = reader.wait_for(4)
    reader.close()
    assert [(e["window"]["end_ms"], values(e, "n")[0][0]) for e in events] == [
        (1000, "5267"), (2000, "11118"), (3000, "16384"), (4000, "16384")]


def test_a_csparql_query_does_not_see_a_post_s_items_after_the_close(serve):
    url = serve()
    assert http.put(f"{url}/streams/s", json={"iri": EX + "s"}).status_code == 201
    register(url, f"REGISTER QUERY q AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                  f"FROM <{EX}s> WHERE {{ ?x <{EX}rel> ?y }}")
    reader = SSEReader(f"{url}/queries/q/events")
    post(url, "s", [f"{500 + i} <{EX}a{i}> <{EX}rel> <{EX}b> ." for i in range(10)]
         + [f"1500 <{EX}c{i}> <{EX}rel> <{EX}d> ." for i in range(20_000)] + ["2000"])
    events = reader.wait_for(2)
    reader.close()
    assert [(e["window"]["end_ms"], values(e, "n")[0][0]) for e in events] == [(1000, "10"), (2000, "20010")]
