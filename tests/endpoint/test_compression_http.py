"""gzip on a real server, with real clients (httpx, curl): large answers are
compressed when asked, chunk by chunk as they stream; tiny answers, clients
that do not ask and Server-Sent Events never are."""

from __future__ import annotations

import itertools
import random
import shutil
import subprocess
import zlib

import httpx
import pytest

from endpoint.compression import MINIMUM_SIZE, accepts_gzip
from engine.api import Store
from engine.rdf import IRI, Literal
from tests.endpoint.test_streams import BATCH, EX

SELECT_ALL = "SELECT * { ?s ?p ?o }"


def store_of(rows: int) -> Store:
    store = Store()
    store.add((IRI(f"http://example.org/subject/{i}"), IRI("http://example.org/value"), Literal(f"value {i}"))
              for i in range(rows))
    return store


@pytest.mark.parametrize("header, wanted", [
    ("gzip", True), ("GZIP", True), ("x-gzip", True), ("gzip, deflate, br", True), ("*", True),
    ("gzip;q=0", False), ("gzip; q=0.0", False), ("deflate", False), ("identity", False), ("", False),
    (None, False), ("*;q=0", False), ("gzip;q=0, *", False), ("*, gzip;q=0", False), ("br, *;q=0.1", True),
    ("gzip;q=0.001", True), ("gzip;q=abc", False), ("gzipx", False), ("gz", False), (" gzip ;q=1 ", True),
])
def test_accepts_gzip(header, wanted):
    assert accepts_gzip(header) is wanted


def test_accepts_gzip_does_not_depend_on_the_order_of_codings():
    rng = random.Random(29)
    items = ["gzip", "gzip;q=0", "deflate", "br;q=0.5", "*", "*;q=0", "identity", "x-gzip;q=0.2"]
    for _ in range(300):
        chosen = rng.sample(items, rng.randint(1, 4))
        answers = {accepts_gzip(", ".join(order)) for order in itertools.permutations(chosen)}
        assert len(answers) == 1, chosen


def test_a_large_streamed_answer_is_compressed_chunk_by_chunk(serve):
    url = serve(store_of(20_000)) + "/sparql"
    plain = httpx.get(url, params={"query": SELECT_ALL}, headers={"Accept-Encoding": "identity"}, timeout=30)
    assert "content-encoding" not in plain.headers and "Accept-Encoding" in plain.headers["vary"]
    with httpx.stream("GET", url, params={"query": SELECT_ALL}, headers={"Accept-Encoding": "gzip"},
                      timeout=30) as response:
        assert response.headers["content-encoding"] == "gzip"
        assert "content-length" not in response.headers
        assert response.headers["vary"] == "Accept, Accept-Encoding"
        raw = list(response.iter_raw())
    assert len(raw) > 1
    # each chunk is flushed: the first one decodes on its own, before the rest has arrived
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    first = decoder.decompress(raw[0])
    assert first.startswith(b'{"head"')
    whole = first + b"".join(decoder.decompress(chunk) for chunk in raw[1:]) + decoder.flush()
    assert decoder.eof and whole == plain.content
    assert sum(map(len, raw)) < len(plain.content) / 3


def test_small_answers_and_clients_that_do_not_ask_get_it_as_it_is(serve):
    url = serve(store_of(300)) + "/sparql"
    gzip = {"Accept-Encoding": "gzip"}
    ask = httpx.get(url, params={"query": "ASK { ?s ?p ?o }"}, headers=gzip, timeout=10)
    assert ask.status_code == 200 and "content-encoding" not in ask.headers
    assert len(ask.content) < MINIMUM_SIZE
    for refusing in ("gzip;q=0", "identity", "deflate"):
        answer = httpx.get(url, params={"query": SELECT_ALL}, headers={"Accept-Encoding": refusing},
                           timeout=10)
        assert "content-encoding" not in answer.headers and "Accept-Encoding" in answer.headers["vary"]
        assert len(answer.json()["results"]["bindings"]) == 300


def test_the_short_path_of_small_queries_compresses_too(serve):
    url = serve(store_of(200)) + "/sparql"
    query = "SELECT * { ?s ?p ?o } LIMIT 200"
    plain = httpx.get(url, params={"query": query}, headers={"Accept-Encoding": "identity"}, timeout=10)
    assert len(plain.content) > MINIMUM_SIZE
    for _ in range(4):  # repeated, the query is answered on the event loop (endpoint.workers)
        gzip = {"Accept-Encoding": "gzip"}
        for response in (httpx.get(url, params={"query": query}, headers=gzip, timeout=10),
                         httpx.post(url, data={"query": query}, headers=gzip, timeout=10)):
            assert response.headers["content-encoding"] == "gzip"
            assert int(response.headers["content-length"]) < len(plain.content)
            assert response.content == plain.content  # httpx decoded it


def test_server_sent_events_are_never_compressed(serve):
    url = serve()
    assert httpx.put(f"{url}/streams/s", json={"iri": f"{EX}s"}, timeout=10).status_code == 201
    registration = (f"REGISTER QUERY everything AS SELECT ?s ?p ?o FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                    "WHERE { ?s ?p ?o }")
    assert httpx.post(f"{url}/queries", content=registration, timeout=10,
                      headers={"Content-Type": "application/sparql-query"}).status_code == 201
    with httpx.stream("GET", f"{url}/queries/everything/events", timeout=30,
                      headers={"Accept": "text/event-stream", "Accept-Encoding": "gzip"}) as events:
        assert events.headers["content-type"].startswith("text/event-stream")
        assert "content-encoding" not in events.headers
        batch = "\n".join(f'1000 <{EX}item{i}> <{EX}says> "a long enough value {i}" .' for i in range(80))
        posted = httpx.post(f"{url}/streams/s", content=batch + "\n2000", headers={"Content-Type": BATCH},
                            timeout=10)
        assert posted.status_code == 202, posted.text
        received = b""
        for chunk in events.iter_raw():  # raw: had it been compressed, this would not be text
            received += chunk
            if received.count(f"{EX}item".encode()) >= 80:
                break
    assert b"event: window" in received and len(received) > MINIMUM_SIZE


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed (.ci/run installs it)")
def test_curl_compressed_dump(serve, tmp_path):
    url = serve(store_of(5000))
    plain = httpx.get(url + "/store", headers={"Accept-Encoding": "identity"}, timeout=30).content
    headers = tmp_path / "headers"
    out = tmp_path / "dump.nq"
    subprocess.run(["curl", "-sS", "--compressed", "-D", str(headers), "-o", str(out), url + "/store"],
                   check=True, timeout=60)
    assert "content-encoding: gzip" in headers.read_text().lower()
    assert out.read_bytes() == plain
