"""``rivulet serve --processes N --data-dir DIR``: one writer, readers following its log.

Real ``rivulet serve`` processes on loopback. Each request opens a new
connection, so the kernel hands it to any of the processes: a reader's
answer names the log position it reflects (``Rivulet-Log-Position``), which
tells the tests that readers, not only the writer, answered.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.endpoint.conftest import DEMO
from tests.endpoint.rivulet_process import RivuletProcess

JSON = {"Accept": "application/sparql-results+json"}
#: bound on the requests a test sends while it waits for a reader to answer one
TRIES = 400


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A writer and two readers over a new data directory, checkpointing
    after every few KB of log (so the readers follow across rotations)."""
    directory = tmp_path_factory.mktemp("writer-readers") / "data"
    server = RivuletProcess("--data-dir", str(directory), "--data", str(DEMO), "--processes", "3",
                            "--checkpoint-mb", "0.02")
    yield server
    server.stop()


def once(url: str, method: str, path: str, **options) -> httpx.Response:
    """One request on a connection of its own (any process may take it)."""
    with httpx.Client(base_url=url, timeout=30) as client:
        return client.request(method, path, **options)


def ask(url: str, query: str, position: str | None = None) -> httpx.Response:
    headers = {**JSON, **({"Rivulet-Log-Position": position} if position else {})}
    answer = once(url, "GET", "/sparql", params={"query": query}, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer


def update(url: str, text: str) -> str:
    answer = once(url, "POST", "/sparql", data={"update": text})
    assert answer.status_code in (200, 204), answer.text
    return answer.headers["rivulet-log-position"]


def test_a_write_through_any_process_is_read_back_through_any_process(served):
    by_reader = 0
    for i in range(TRIES):
        position = update(served.url, f"INSERT DATA {{ <urn:ryw:{i}> <urn:ryw:p> {i} }}")
        answer = ask(served.url, f"ASK {{ <urn:ryw:{i}> <urn:ryw:p> {i} }}", position)
        assert answer.json()["boolean"] is True, (i, position, answer.headers)
        if "rivulet-log-position" in answer.headers:
            assert int(answer.headers["rivulet-log-position"]) >= int(position)
            by_reader += 1
            if by_reader >= 5:
                break
    assert by_reader >= 5, "no reader process answered"


def test_the_cookie_of_a_write_also_waits_for_it(served):
    with httpx.Client(base_url=served.url, timeout=30) as client:  # a client keeping cookies
        answer = client.post("/sparql", data={"update": "INSERT DATA { <urn:cookie> <urn:p> 1 }"})
        assert answer.status_code in (200, 204)
        assert client.cookies.get("rivulet_log_position") == answer.headers["rivulet-log-position"]
        cookie = {"Cookie": f"rivulet_log_position={answer.headers['rivulet-log-position']}"}
    for _ in range(TRIES):
        read = once(served.url, "GET", "/sparql", params={"query": "ASK { <urn:cookie> <urn:p> 1 }"},
                    headers={**JSON, **cookie})
        assert read.json()["boolean"] is True
        if "rivulet-log-position" in read.headers:
            return
    pytest.fail("no reader process answered")


def test_reads_during_writes_never_see_part_of_a_transaction(served):
    """A graph holds one batch at a time: each update deletes it and inserts
    the next (a random number of triples, all naming their batch) in one
    request. Every read must see exactly one whole batch."""
    rng = random.Random(28)
    sizes: dict[int, int] = {0: 0}
    done = threading.Event()
    seen, failures = [], []

    def write() -> None:
        try:
            for batch in range(1, 21):
                size = rng.randint(1, 40)
                sizes[batch] = size
                triples = " ".join(f"<urn:t:{batch}:{j}> <urn:batch> {batch} ." for j in range(size))
                update(served.url, "DELETE WHERE { GRAPH <urn:g> { ?s ?p ?o } } ; "
                                   f"INSERT DATA {{ GRAPH <urn:g> {{ {triples} }} }}")
        finally:
            done.set()

    def read() -> None:
        query = "SELECT ?b (COUNT(*) AS ?n) { GRAPH <urn:g> { ?s <urn:batch> ?b } } GROUP BY ?b"
        while not done.is_set():
            answer = ask(served.url, query)
            rows = answer.json()["results"]["bindings"]
            counts = {int(r["b"]["value"]): int(r["n"]["value"]) for r in rows}
            seen.append(("rivulet-log-position" in answer.headers, counts))
            if len(counts) > 1 or any(sizes.get(b) != n for b, n in counts.items()):
                failures.append(counts)

    threads = [threading.Thread(target=write)] + [threading.Thread(target=read) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures, failures[:3]
    assert any(by_reader and counts for by_reader, counts in seen), "no reader saw a batch"


def test_readers_answer_after_the_writer_checkpoints(served):
    before = update(served.url, "INSERT DATA { <urn:before> <urn:p> 1 }")
    checkpoint = once(served.url, "POST", "/admin/checkpoint")
    assert checkpoint.status_code == 200, checkpoint.text
    assert checkpoint.json()["lsn"] >= int(before)
    wal = sorted(os.listdir(served_directory(served) / "wal"))
    assert all(int(name.split(".")[0]) > int(before) for name in wal if name.endswith(".log")), wal
    for i in range(TRIES):
        position = update(served.url, f"INSERT DATA {{ <urn:after> <urn:p> {i} }}")
        answer = ask(served.url, f"ASK {{ <urn:before> <urn:p> 1 . <urn:after> <urn:p> {i} }}", position)
        assert answer.json()["boolean"] is True
        if "rivulet-log-position" in answer.headers:
            return
    pytest.fail("no reader process answered")


def served_directory(server: RivuletProcess) -> Path:
    arguments = server.process.args
    return Path(arguments[arguments.index("--data-dir") + 1])


def test_forwarded_writes_and_event_streams_reach_the_writer(served):
    """Streams and queries live in the writer: declarations on any connection
    name the address the client connected to, and subscribers on any
    connection get the windows' events."""
    for k in range(6):
        answer = once(served.url, "PUT", f"/streams/fw{k}", json={})
        assert answer.status_code == 201, answer.text
        assert answer.headers["location"] == f"{served.url}/streams/fw{k}"
    registered = once(served.url, "POST", "/queries", headers={"Content-Type": "application/sparql-query"},
                      content=f"REGISTER QUERY fwq AS SELECT ?s FROM STREAM <{served.url}/streams/fw0> "
                              "[RANGE 1s STEP 1s] WHERE { ?s ?p ?o }")
    assert registered.status_code == 201, registered.text
    events = [0] * 4

    def subscribe(k: int) -> None:
        with httpx.Client(base_url=served.url, timeout=30) as client, \
                client.stream("GET", "/queries/fwq/events") as stream:
            for line in stream.iter_lines():
                if line.startswith("data:"):
                    events[k] += 1
                    return

    subscribers = [threading.Thread(target=subscribe, args=(k,), daemon=True) for k in range(4)]
    for thread in subscribers:
        thread.start()
    time.sleep(1.0)  # the subscriptions are made (a late one would miss the window)
    now = int(time.time() * 1000)
    for i in range(4):
        item = f"{now + i * 1000} <urn:fw{i}> <urn:p> <urn:o> .\n"
        answer = once(served.url, "POST", "/streams/fw0", content=item,
                      headers={"Content-Type": "application/x-timestamped-ntriples"})
        assert answer.status_code == 202, answer.text
    for thread in subscribers:
        thread.join(timeout=30)
    assert events == [1, 1, 1, 1]


def test_killing_the_writer_loses_nothing_acknowledged(served):
    """Last in this module: it kills the module's server (kill -9 of the
    writer while writes go on) and restarts one on its data directory."""
    acknowledged: list[int] = []
    stop = threading.Event()

    def write() -> None:
        for i in range(10_000):
            if stop.is_set():
                return
            try:
                update(served.url, f"INSERT DATA {{ <urn:kept:{i}> <urn:kept> {i} }}")
            except (httpx.HTTPError, AssertionError, KeyError):
                return  # the writer is gone: this one was never acknowledged
            acknowledged.append(i)

    writer = threading.Thread(target=write)
    writer.start()
    deadline = time.monotonic() + 30
    while len(acknowledged) < 20 and time.monotonic() < deadline and writer.is_alive():
        time.sleep(0.02)
    os.kill(served.process.pid, signal.SIGKILL)
    served.process.wait(timeout=10)
    stop.set()
    writer.join(timeout=30)
    assert len(acknowledged) >= 20
    # the readers stop once their writer is gone: the port is closed for good
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            once(served.url, "GET", "/sparql", params={"query": "ASK {}"})
        except httpx.TransportError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("a reader process kept serving after its writer was killed")
    again = RivuletProcess("--data-dir", str(served_directory(served)))
    try:
        answer = ask(again.url, "SELECT ?o { ?s <urn:kept> ?o }")
        found = {int(row["o"]["value"]) for row in answer.json()["results"]["bindings"]}
        assert set(acknowledged) <= found
        assert ask(again.url, "ASK { <urn:before> <urn:p> 1 . <urn:cookie> <urn:p> 1 }").json()["boolean"]
    finally:
        again.stop()
