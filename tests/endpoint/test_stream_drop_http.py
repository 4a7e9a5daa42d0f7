"""Stream names and ``DELETE /streams/{name}`` over HTTP, against real
servers; a ``rivulet serve --data-dir`` process is killed with SIGKILL and
restarted (issue 26, items 4 and 6).

- ``REGISTER STREAM <http://x/out/NAME>`` beside a stream called NAME with
  another IRI: the registration is answered 201, NAME keeps its IRI, its
  timing predicates, its graph and its readers; the output stream gets a
  name of its own (which a kill and a restart keep). A PUT that would give
  NAME another IRI is a 409.
- Dropping: 409 while a query reads the stream (its SSE subscriber goes on)
  or writes into it; 204 once they are unregistered; then 404 for posts,
  reads and a second drop; the absorbed graph stays; the name declared
  again is a new stream; a kill -9, and a checkpoint then a kill, keep all
  of that.
- Memory: a server that declares, uses and drops streams, cycle after
  cycle, stays at the size it had after the first ones.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx
import pytest

from tests.endpoint.rivulet_process import RivuletProcess
from tests.endpoint.sse_client import SSEReader

EX = "http://example.org/"
BATCH = "application/x-timestamped-ntriples"
http = httpx.Client(timeout=60)


def started(data_dir: Path) -> RivuletProcess:
    return RivuletProcess("--data-dir", str(data_dir), "--sync", "none")


def killed(server: RivuletProcess) -> None:
    """SIGKILL, as a crash: nothing is flushed or closed."""
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait(timeout=30)


def put(url: str, name: str, **spec) -> httpx.Response:
    return http.put(f"{url}/streams/{name}", json=spec)


def register(url: str, text: str) -> httpx.Response:
    return http.post(f"{url}/queries", content=text, headers={"Content-Type": "application/sparql-query"})


def post(url: str, name: str, lines: list[str]) -> httpx.Response:
    body = "\n".join(lines) + "\n"
    return http.post(f"{url}/streams/{name}", content=body, headers={"Content-Type": BATCH})


def streams(url: str) -> dict[str, dict]:
    return {s["name"]: s for s in http.get(f"{url}/streams").json()["streams"]}


def select(url: str, text: str) -> list[dict]:
    response = http.get(f"{url}/sparql", params={"query": text},
                        headers={"Accept": "application/sparql-results+json"})
    assert response.status_code == 200, response.text
    return response.json()["results"]["bindings"]


def reader(name: str, iri: str) -> str:
    return (f"REGISTER QUERY {name} AS SELECT ?s FROM STREAM <{iri}> [RANGE 1s STEP 1s] "
            "WHERE { ?s ?p ?o }")


def subjects(events: list[dict]) -> set[str]:
    return {b["s"]["value"] for e in events for b in e["results"]["results"]["bindings"]}


def test_register_stream_into_an_iri_named_like_a_stream_takes_nothing_over(serve):
    url = serve()
    assert put(url, "NAME", iri=f"{EX}in/NAME", timing=[f"{EX}t"], graph=f"{EX}g").status_code == 201
    before = streams(url)["NAME"]
    assert register(url, reader("r", f"{EX}in/NAME")).status_code == 201
    chain = register(url, f"REGISTER STREAM <http://x/out/NAME> AS CONSTRUCT {{ ?s ?p ?o }} "
                          f"FROM STREAM <{EX}in/NAME> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}")
    assert chain.status_code == 201, chain.text
    assert register(url, reader("r_out", "http://x/out/NAME")).status_code == 201
    listed = streams(url)
    assert listed["NAME"] == before
    (out,) = [name for name, s in listed.items() if s["iri"] == "http://x/out/NAME"]
    assert out != "NAME"
    # a PUT cannot take NAME over either
    taken = put(url, "NAME", iri="http://x/out/NAME")
    assert taken.status_code == 409 and "already declared" in taken.text
    moved = put(url, "NAME", iri=f"{EX}elsewhere", timing=[f"{EX}t"], graph=f"{EX}g")
    assert moved.status_code == 409 and "IRI does not change" in moved.text
    assert streams(url)["NAME"] == before
    events = {name: SSEReader(f"{url}/queries/{name}/events", last_event_id="0") for name in ("r", "r_out")}
    posted = post(url, "NAME", [f'500 <{EX}a> <{EX}t> "1" .', "2000"])
    assert posted.status_code == 202, posted.text
    assert posted.json()["windows_fired"] == 2 + 2 + 1
    assert subjects(events["r"].wait_for(2)) == {f"{EX}a"}
    assert subjects(events["r_out"].wait_for(1)) == {f"{EX}a"}
    for sse in events.values():
        sse.close()
    # the timing reading stayed out of NAME's graph; the output went to its own stream's graph
    held = select(url, "SELECT ?g ?s { GRAPH ?g { ?s ?p ?o } }")
    assert [(b["g"]["value"], b["s"]["value"]) for b in held] == [("http://x/out/NAME", f"{EX}a")]


def test_a_stream_is_dropped_only_once_nothing_reads_or_writes_it_and_stays_dropped(tmp_path):
    server = started(tmp_path)
    try:
        url = server.url
        assert put(url, "s", iri=f"{EX}s", timing=[f"{EX}t"]).status_code == 201
        assert put(url, "other", iri=f"{EX}other").status_code == 201
        assert register(url, reader("q", f"{EX}s")).status_code == 201
        # its output IRI ends like the name of the stream it reads: it gets a name of its own (item 4)
        chain = register(url, f"REGISTER STREAM <http://x/out/other> AS CONSTRUCT {{ ?s <{EX}seen> true }} "
                              f"FROM STREAM <{EX}other> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}")
        assert chain.status_code == 201, chain.text
        (out,) = [name for name, s in streams(url).items() if s["iri"] == "http://x/out/other"]
        sse = SSEReader(f"{url}/queries/q/events")
        posted = post(url, "s", [f'100 <{EX}a> <{EX}t> "1" .', f'200 <{EX}a> <{EX}v> "kept" .'])
        assert posted.status_code == 202
        refused = http.delete(f"{url}/streams/s")
        assert refused.status_code == 409 and "'q'" in refused.text
        refused = http.delete(f"{url}/streams/{out}")
        assert refused.status_code == 409 and "unregister" in refused.text
        # refused drops changed nothing: the subscriber still gets its windows
        assert post(url, "s", ["1000"]).json()["windows_fired"] == 1
        assert subjects(sse.wait_for(1)) == {f"{EX}a"}
        assert http.delete(f"{url}/queries/q").status_code == 204
        assert http.delete(f"{url}/streams/s").status_code == 204
        assert post(url, "s", [f'5000 <{EX}a> <{EX}t> "2" .']).status_code == 404
        assert http.get(f"{url}/streams/s").status_code == 404
        assert http.delete(f"{url}/streams/s").status_code == 404
        assert register(url, reader("q2", f"{EX}s")).status_code == 404
        assert "s" not in streams(url)
        # what it absorbed stays
        assert len(select(url, f"SELECT * {{ GRAPH <{EX}s> {{ ?x <{EX}v> ?o }} }}")) == 1
        # declared again: a new stream, whose timestamps may start before the old one's watermark
        again = put(url, "s", iri=f"{EX}s", timing=[f"{EX}t"])
        assert again.status_code == 201
        assert (again.json()["watermark_ms"], again.json()["items"], again.json()["triples"]) == (None, 0, 0)
        assert post(url, "s", [f'50 <{EX}b> <{EX}v> "new" .']).status_code == 202
        killed(server)

        server = started(tmp_path)
        url = server.url
        listed = streams(url)
        assert set(listed) == {"s", "other", out}
        assert (listed["other"]["iri"], listed[out]["iri"]) == (f"{EX}other", "http://x/out/other")
        # the new stream's watermark; its counters start at 0 with the process (the replay is not counted)
        assert (listed["s"]["watermark_ms"], listed["s"]["triples"]) == (50, 0)
        assert len(select(url, f"SELECT * {{ GRAPH <{EX}s> {{ ?x <{EX}v> ?o }} }}")) == 2
        # drop it again, unregister the writer and drop its output too; a checkpoint, then a kill
        assert http.delete(f"{url}/streams/s").status_code == 204
        (writer,) = [q["name"] for q in http.get(f"{url}/queries").json()["queries"]]
        assert http.delete(f"{url}/queries/{writer}").status_code == 204
        assert http.delete(f"{url}/streams/{out}").status_code == 204
        assert http.post(f"{url}/admin/checkpoint").json()["taken"] is True
        assert put(url, "later", iri=f"{EX}later").status_code == 201
        killed(server)

        server = started(tmp_path)
        url = server.url
        assert set(streams(url)) == {"other", "later"}
        assert http.get(f"{url}/queries").json()["queries"] == []
        assert len(select(url, f"SELECT * {{ GRAPH <{EX}s> {{ ?x <{EX}v> ?o }} }}")) == 2
    finally:
        server.stop()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_declaring_using_and_dropping_streams_does_not_grow_the_server(tmp_path):
    """Each cycle: a stream with its own name, IRI and terms, a query over it,
    a batch of readings (timing data, so that no stored graph grows) closing
    its windows, the query unregistered, the stream dropped. After a warm-up
    the server's RSS stays where it was (a stream's state is a few KB; the
    bound leaves room for the allocator's noise)."""
    server = RivuletProcess()
    url = server.url

    def cycle(n: int) -> None:
        name = f"short-{n}"
        assert put(url, name, iri=f"{EX}short/{n}", timing=[f"{EX}t"]).status_code == 201
        assert register(url, reader(f"q{n}", f"{EX}short/{n}")).status_code == 201
        lines = [f'{k * 40} <{EX}sensor/{n}/{k % 17}> <{EX}t> "{n}-{k}" .' for k in range(100)] + ["5000"]
        assert post(url, name, lines).json()["windows_fired"] == 5
        assert http.delete(f"{url}/queries/q{n}").status_code == 204
        dropped = http.delete(f"{url}/streams/{name}")
        assert dropped.status_code == 204, dropped.text

    try:
        for n in range(60):
            cycle(n)
        before = rss_mb(server.process.pid)
        for n in range(60, 260):
            cycle(n)
        after = rss_mb(server.process.pid)
        assert streams(url) == {}
        assert after - before < 6, f"RSS {before:.1f} MB -> {after:.1f} MB over 200 cycles"
    finally:
        server.stop()


@pytest.mark.parametrize("method", ["DELETE"])
def test_a_drop_is_a_write(serve, method):
    url = serve(update_token="secret")
    assert http.put(f"{url}/streams/s", headers={"Authorization": "Bearer secret"}).status_code == 201
    assert http.request(method, f"{url}/streams/s").status_code == 401
    assert http.get(f"{url}/streams/s").status_code == 200
    read_only = serve(read_only=True)
    assert http.request(method, f"{read_only}/streams/s").status_code == 403
