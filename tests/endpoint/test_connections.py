"""Connections as ``rivulet serve`` handles them (endpoint/connection_deadlines.py,
endpoint/http_protocol.py), against a real server over raw sockets: answers
in the order of pipelined requests whatever upgrade offers they carry, idle
and slow connections closed, a 413 that reaches a client sending its whole
body first, and clients that leave or stop reading logged as one warning."""

from __future__ import annotations

import json
import random
import re
import select
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest

from tests.endpoint.raw_http import RawConnection, address, request_bytes
from tests.endpoint.rivulet_process import RivuletProcess
from tests.endpoint.sse_client import SSEReader

EX = "http://example.org/"
BATCH = "application/x-timestamped-ntriples"
FORM = b"application/x-www-form-urlencoded"
JSON = (b"Accept", b"application/sparql-results+json")
H2C_OFFER = [(b"Connection", b"Upgrade, HTTP2-Settings"), (b"Upgrade", b"h2c"),
             (b"HTTP2-Settings", b"AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA")]
#: the bounds the module's server runs with, in seconds
KEEP_ALIVE, REQUEST, SEND = 1, 2, 2


@pytest.fixture(scope="module")
def server() -> Iterator[RivuletProcess]:
    process = RivuletProcess("--max-body", "1", "--keep-alive-timeout", str(KEEP_ALIVE),
                             "--request-timeout", str(REQUEST), "--send-timeout", str(SEND))
    assert httpx.put(f"{process.url}/streams/s", json={"iri": f"{EX}s"}).status_code == 201
    yield process
    process.stop()


def log_since(server: RivuletProcess, start: int) -> str:
    return "".join(server.stderr_lines[start:])


def wait_for(condition, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def triples(url: str) -> int:
    query = "SELECT (COUNT(*) AS ?n) WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"
    answer = httpx.get(f"{url}/sparql", params={"query": query},
                       headers={"Accept": "application/sparql-results+json"})
    return int(answer.json()["results"]["bindings"][0]["n"]["value"])


# ------------------------------------------------------------ pipelining
def numbered(n: int, form: str, offer: bool) -> bytes:
    """A query whose answer is the number ``n``, sent as ``form``."""
    query = f"SELECT ({n} AS ?n) WHERE {{}}"
    headers = [JSON, *(H2C_OFFER if offer else [])]
    if form == "GET":
        return request_bytes("GET", "/sparql?query=" + quote(query), headers)
    if form == "form":
        return request_bytes("POST", "/sparql", [*headers, (b"Content-Type", FORM)],
                             ("query=" + quote(query)).encode())
    return request_bytes("POST", "/sparql", [*headers, (b"Content-Type", b"application/sparql-query")],
                         query.encode())


def test_pipelined_requests_with_upgrade_offers_are_answered_in_order(server):
    rng = random.Random(25)
    start = len(server.stderr_lines)
    for sequence in range(40):
        count = rng.randint(2, 6)
        kinds = [(rng.choice(("GET", "form", "query")), rng.random() < 0.3) for _ in range(count)]
        behind = rng.randrange(1, count)  # at least one offer behind another request
        kinds[behind] = (kinds[behind][0], True)
        numbers = [sequence * 10 + i for i in range(count)]
        data = b"".join(numbered(n, form, offer) for n, (form, offer) in zip(numbers, kinds, strict=True))
        cuts = sorted(rng.sample(range(1, len(data)), rng.randint(0, 3)))
        with RawConnection(server.url, timeout=10) as connection:
            for begin, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
                connection.send(data[begin:end])
                time.sleep(rng.choice((0, 0.01)))
            answers = []
            for _ in numbers:
                response = connection.response()
                assert response.status == 200, (sequence, kinds, response)
                answers.append(int(json.loads(response.body)["results"]["bindings"][0]["n"]["value"]))
        assert answers == numbers, (sequence, kinds)
    assert "WARNING" not in log_since(server, start)


# ------------------------------------------------------------- idle, slow
def test_idle_connections_are_closed_so_new_clients_are_served_within_256_descriptors():
    server = RivuletProcess("--keep-alive-timeout", "1", open_files=256)
    idle = []
    try:
        # more idle connections than the server has descriptors: nobody new is
        # served until the server closes some
        idle = [socket.create_connection(address(server.url), timeout=20) for _ in range(300)]
        served = None

        def health() -> bool:
            nonlocal served
            try:
                served = httpx.get(f"{server.url}/healthz", timeout=5).status_code
            except httpx.HTTPError:
                return False
            return True

        assert wait_for(health, 30) and served == 200
        assert idle[0].recv(1) == b""  # closed by the server, unasked
    finally:
        for sock in idle:
            sock.close()
        server.stop()


def _readable(sock: socket.socket) -> bool:
    """Has the server answered or closed (poll, not select: the test process
    may hold descriptors numbered above select's limit of 1024)?"""
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(poller.poll(0))


def send_until_answered(connection: RawConnection, data: bytes, pause: float, limit: float) -> int:
    """Send ``data`` a byte every ``pause`` seconds, for at most ``limit``
    seconds or until the server answers or closes; the bytes sent."""
    deadline = time.monotonic() + limit
    for sent in range(len(data)):
        if time.monotonic() > deadline or _readable(connection.sock):
            return sent
        connection.send(data[sent:sent + 1])
        time.sleep(pause)
    return len(data)


@pytest.mark.parametrize("offer", [False, True], ids=["httptools", "h2c-offer"])
def test_a_request_head_sent_a_byte_at_a_time_gets_a_408_and_is_closed(server, offer):
    head = request_bytes("GET", "/sparql?query=" + quote("ASK {}"), [JSON, (b"X-Padding", b"x" * 400)])
    with RawConnection(server.url) as connection:
        if offer:  # a first request hands the connection to h11, which the slow one then meets
            connection.send(numbered(1, "query", True))
            assert connection.response().status == 200
        sent = send_until_answered(connection, head, pause=0.02, limit=20)
        assert sent < len(head)
        response = connection.response()
        assert response.status == 408 and b"--request-timeout" in response.body
        assert connection.closed_by_server()


@pytest.mark.parametrize("offer", [False, True], ids=["httptools", "h2c-offer"])
def test_a_body_sent_a_byte_at_a_time_gets_a_408_and_changes_nothing(server, offer):
    start = len(server.stderr_lines)
    before = triples(server.url)
    update = f"INSERT DATA {{ <{EX}slow> <{EX}p> \"{'x' * 400}\" }}".encode()
    headers = [(b"Content-Type", b"application/sparql-update"),
               (b"Content-Length", str(len(update)).encode()), *(H2C_OFFER if offer else [])]
    with RawConnection(server.url) as connection:
        connection.send(request_bytes("POST", "/sparql", headers, length=False))
        assert send_until_answered(connection, update, pause=0.02, limit=20) < len(update)
        assert connection.response().status == 408
        assert connection.closed_by_server()
    assert wait_for(lambda: "did not arrive whole in time" in log_since(server, start))
    assert triples(server.url) == before
    assert "Traceback" not in log_since(server, start)


def test_a_steady_upload_longer_than_the_request_timeout_is_not_cut(server):
    lines = "".join(f"<{EX}up{i}> <{EX}p> \"{'y' * 60}\" .\n" for i in range(6000)).encode()  # ~610 KB
    target = "/store?graph=" + quote(f"{EX}upload")
    with RawConnection(server.url) as connection:
        connection.send(request_bytes("PUT", target, [(b"Content-Type", b"application/n-triples"),
                                                      (b"Content-Length", str(len(lines)).encode())],
                                      length=False))
        started = time.monotonic()
        for begin in range(0, len(lines), 20_000):  # ~200 KB/s: three seconds, above --request-timeout
            connection.send(lines[begin:begin + 20_000])
            time.sleep(0.1)
        assert time.monotonic() - started > REQUEST
        assert connection.response().status in (201, 204)
    assert triples(server.url) >= 6000


def test_an_event_stream_outlives_the_idle_and_request_timeouts(server):
    registration = (f"REGISTER QUERY patient AS SELECT * FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                    "WHERE { ?s ?p ?o }")
    assert httpx.post(f"{server.url}/queries", content=registration,
                      headers={"Content-Type": "application/sparql-query"}).status_code == 201
    reader = SSEReader(f"{server.url}/queries/patient/events")
    try:
        time.sleep(KEEP_ALIVE + REQUEST + 1)  # nothing written for longer than either bound
        batch = f"1000 <{EX}a> <{EX}p> \"1\" .\n2000"
        assert httpx.post(f"{server.url}/streams/s", content=batch,
                          headers={"Content-Type": BATCH}).status_code in (200, 202, 204)
        assert len(reader.wait_for(1, timeout=20)) == 1
    finally:
        reader.close()
        httpx.delete(f"{server.url}/queries/patient")


# ------------------------------------------------------------- 413, leaving
def test_a_413_reaches_clients_that_send_their_whole_body_first(server):
    body = b"# " + b"x" * (6 * 2**20) + b"\n"  # 6 MiB, over the 1 MiB limit
    refused = urllib.request.Request(f"{server.url}/sparql", data=body,
                                     headers={"Content-Type": "application/sparql-update"})
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(refused, timeout=30)
    assert answer.value.code == 413 and b"limit of 1,048,576 bytes" in answer.value.read()

    update = (b"Content-Type", b"application/sparql-update")
    declared = request_bytes("POST", "/sparql", [update, (b"Connection", b"close")], body)
    offered = request_bytes("POST", "/sparql", [update, *H2C_OFFER], body)  # answered by h11
    chunked = request_bytes("POST", "/sparql", [update, (b"Transfer-Encoding", b"chunked")], length=False)
    chunked += b"".join(b"%x\r\n%s\r\n" % (len(piece), piece)
                        for piece in (body[i:i + 65536] for i in range(0, len(body), 65536))) + b"0\r\n\r\n"
    for data in (declared, offered, chunked):  # the whole request written before anything is read
        with RawConnection(server.url) as connection:
            connection.send(data)
            response = connection.response()
            assert response.status == 413 and b"limit of 1,048,576 bytes" in response.body
            assert response.headers.get("connection") == "close"
            assert connection.closed_by_server()


def test_a_client_that_leaves_mid_body_is_one_warning_and_changes_nothing(server):
    start = len(server.stderr_lines)
    before = triples(server.url), httpx.get(f"{server.url}/streams/s").json()["watermark_ms"]
    requests = [
        ("POST", "/sparql", "application/sparql-update", f"INSERT DATA {{ <{EX}left> <{EX}p> <{EX}o> }}"),
        ("PUT", "/store?graph=" + quote(f"{EX}left"), "application/n-triples",
         f"<{EX}left> <{EX}p> <{EX}o> .\n"),
        ("POST", "/streams/s", BATCH, f"500000 <{EX}left> <{EX}p> <{EX}o> .\n"),
        ("POST", "/queries", "application/sparql-query",
         f"REGISTER QUERY left AS SELECT * FROM STREAM <{EX}s> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}"),
    ]
    rng = random.Random(12)
    sent = 0
    for method, target, content_type, text in requests:
        body = text.encode()
        for cut in sorted({0, 1, rng.randrange(1, len(body)), len(body) - 1}):
            with RawConnection(server.url) as connection:
                connection.send(request_bytes(method, target, [(b"Content-Type", content_type.encode()),
                                                               (b"Content-Length", str(len(body)).encode())],
                                              length=False) + body[:cut])
                time.sleep(0.05)
            sent += 1
    assert wait_for(lambda: log_since(server, start).count("nothing was done") == sent)
    time.sleep(0.2)
    log = log_since(server, start)
    assert log.count("\n") == sent and log.count("WARNING") == sent, log
    assert "the client left" in log and "Traceback" not in log and "ERROR" not in log
    assert (triples(server.url), httpx.get(f"{server.url}/streams/s").json()["watermark_ms"]) == before
    assert httpx.get(f"{server.url}/queries/left").status_code == 404


def test_a_subscriber_that_stops_reading_is_dropped_with_a_warning_and_counted(server):
    registration = (f"REGISTER QUERY stall AS SELECT * FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                    "WHERE { ?s ?p ?o }")
    assert httpx.post(f"{server.url}/queries", content=registration,
                      headers={"Content-Type": "application/sparql-query"}).status_code == 201
    start = len(server.stderr_lines)
    stalled = RawConnection(server.url, receive_buffer=4096)
    try:
        stalled.send(request_bytes("GET", "/queries/stall/events", [(b"Accept", b"text/event-stream")]))

        def subscribers() -> int:
            return httpx.get(f"{server.url}/queries/stall").json()["subscribers"]

        assert wait_for(lambda: subscribers() == 1)
        watermark = httpx.get(f"{server.url}/streams/s").json()["watermark_ms"] or 0
        second = watermark // 1000 + 1
        # windows of ~0.5 MB of events, far fewer than the subscriber's queue holds:
        # only the stalled writes can drop it
        for window in range(second, second + 30):
            if subscribers() == 0:
                break
            body = "\n".join(f"{window * 1000} <{EX}r{i}> <{EX}v> \"{'z' * 150}\" ." for i in range(2000))
            assert httpx.post(f"{server.url}/streams/s", content=f"{body}\n{(window + 1) * 1000}",
                              headers={"Content-Type": BATCH}, timeout=30).status_code in (200, 202, 204)
        assert wait_for(lambda: subscribers() == 0)
    finally:
        stalled.close()
    metrics = httpx.get(f"{server.url}/metrics").text
    drops = r'rivulet_continuous_query_subscriber_drops_total\{query="stall"\} 1\.0'
    assert re.search(drops, metrics), metrics
    log = log_since(server, start)
    assert "SSE subscriber of 'stall' dropped" in log and "--send-timeout" in log
    assert "ERROR" not in log and "Traceback" not in log


def _head_answer(server: RivuletProcess, head: bytes) -> int | None:
    """Send ``head`` (not ended), then end it; the status the server answered
    (None: it closed without a word)."""
    with RawConnection(server.url) as connection:
        try:
            connection.send(head)
            connection.send(b"\r\n\r\n")
            return connection.head()[0]
        except (ConnectionError, OSError):
            return None


@pytest.mark.parametrize("seed", range(3))
def test_a_request_head_over_64_kib_gets_a_431_and_one_under_it_is_served(server, seed):
    """Heads of generated sizes on both sides of the bound, in the request line
    or in headers: under it the query is answered, over it a 431."""
    rng = random.Random(seed)
    bound = 64 * 1024
    for size in (bound - 2000 - rng.randrange(3000), bound + 1000 + rng.randrange(3000)):
        in_url = rng.random() < 0.5
        base = request_bytes("GET", "/sparql?query=" + quote("ASK {}"), [JSON])[:-2]  # without the blank line
        padding = size - len(base)
        head = (base.replace(b"ASK", b"ASK" + b"%20" * (padding // 3), 1) if in_url
                else base + b"X-Padding: " + b"x" * padding + b"\r\n")[:-2]
        status = _head_answer(server, head)
        assert status == (200 if size < bound else 431), (size, in_url, status)


def test_an_endless_header_is_cut_at_the_bound_without_taking_memory(server):
    """A client streaming one header value as fast as it can: the server
    answers 431 and closes after about 64 KiB, its memory unmoved, and serves
    the next client."""
    before = _peak_rss_mb(server)
    with RawConnection(server.url) as connection:
        connection.send(b"GET /sparql?query=ASK%20%7B%7D HTTP/1.1\r\nHost: x\r\nX-Endless: ")
        sent, status = 0, None
        chunk = b"y" * 65536
        while sent < 256 * 2**20:  # at most 256 MiB
            try:
                connection.send(chunk)
            except OSError:
                break
            sent += len(chunk)
        try:
            status = connection.head()[0]
        except (ConnectionError, OSError):
            pass
    assert sent < 64 * 2**20, f"the server took {sent} bytes of one header"
    assert status in (431, None)  # a reset may beat the answer to a client still sending
    assert _peak_rss_mb(server) - before < 50
    assert httpx.get(f"{server.url}/sparql", params={"query": "ASK {}"},
                     headers={"Accept": "application/sparql-results+json"}).status_code == 200


def _peak_rss_mb(server: RivuletProcess) -> float:
    status = open(f"/proc/{server.process.pid}/status").read()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) / 1024
