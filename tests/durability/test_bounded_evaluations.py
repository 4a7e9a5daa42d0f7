"""No single query, update or stream item can freeze ``rivulet serve``.

Each test runs the real server as a child process with small limits
(``--timeout 2``, a low ``--max-rows``) and sends it what used to hold it:
a window whose REGEX backtracks for ever, an update doing the same, a
window whose join is a cartesian product of millions of rows, a heartbeat
that closes half a million 1 ms windows, and a SIGTERM while a poison
update and a poison window run under a ten-minute time limit. Every time
limit here is a generous upper bound, never a speed requirement.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx

from tests.endpoint.rivulet_process import RivuletProcess
from tests.endpoint.sse_client import SSEReader

EX = "http://example.org/"
#: a literal ``^(a|aa)+$`` backtracks over for far longer than any test waits
POISON = "a" * 120 + "!"
REGEX_FILTER = 'FILTER(REGEX(STR(?o), "^(a|aa)+$"))'
#: seconds any request may take here: a few time limits, never minutes
ANSWER_WITHIN = 20.0
NTRIPLES = {"Content-Type": "application/n-triples"}
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def declare(http: httpx.Client, name: str) -> None:
    assert http.put(f"/streams/{name}", json={"iri": EX + name}).status_code == 201


def register(http: httpx.Client, text: str) -> None:
    answer = http.post("/queries", content=text, headers={"Content-Type": "application/sparql-query"})
    assert answer.status_code == 201, answer.text


def post_item(http: httpx.Client, stream: str, ts: int, body: str = "") -> httpx.Response:
    return http.post(f"/streams/{stream}", content=body, headers={**NTRIPLES, "X-Timestamp": str(ts)})


def timed(call, *args, **kwargs) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    answer = call(*args, **kwargs)
    return answer, time.monotonic() - started


class Background:
    """``call()`` in a thread; ``result()`` its answer (or exception) and how long it took."""

    def __init__(self, call) -> None:
        self._outcome: dict = {}
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call) -> None:
        started = time.monotonic()
        try:
            self._outcome["answer"] = call()
        except Exception as exc:  # shown by result()
            self._outcome["answer"] = exc
        self._outcome["seconds"] = time.monotonic() - started

    def result(self, timeout: float = ANSWER_WITHIN + 10) -> tuple[object, float]:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the request never ended"
        return self._outcome["answer"], self._outcome["seconds"]


def wait_for_events(reader: SSEReader, count: int) -> list[tuple]:
    reader.wait_for(count, ANSWER_WITHIN)
    return list(reader.events)


def test_a_poison_window_fails_at_its_time_limit_and_holds_nothing_up(tmp_path: Path):
    """Case 3: the window's REGEX runs into the time limit; the ingest that
    closed it answers, its subscribers get a window-error event, the query
    goes on, other streams and requests are served, and a server killed with
    the poison batch in its log recovers and listens."""
    options = ("--data-dir", str(tmp_path / "data"), "--sync", "none", "--timeout", "2")
    server = RivuletProcess(*options)
    try:
        with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as http:
            for name in ("s", "t"):
                declare(http, name)
            register(http, f"REGISTER QUERY q AS SELECT ?o FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                           f"WHERE {{ ?s ?p ?o {REGEX_FILTER} }}")
            register(http, f"REGISTER QUERY r AS SELECT ?o FROM STREAM <{EX}t> [RANGE 1s STEP 1s] "
                           "WHERE { ?s ?p ?o }")
            reader = SSEReader(f"{server.url}/queries/q/events")
            assert post_item(http, "s", 100, f'<{EX}x> <{EX}p> "{POISON}" .\n').status_code == 202
            closing = Background(lambda: post_item(http, "s", 1000))
            time.sleep(0.5)  # the window is being evaluated: everything else must still be served
            others = {
                "ingest into another stream": timed(post_item, http, "t", 500,
                                                    f"<{EX}y> <{EX}p> <{EX}z> .\n"),
                "unregistration": timed(http.delete, "/queries/r"),
                "declaration": timed(http.put, "/streams/u", json={"iri": EX + "u"}),
            }
            for what, (answer, seconds) in others.items():
                assert answer.status_code in (201, 202, 204), (what, answer.text)
                assert seconds < ANSWER_WITHIN, what
            answer, seconds = closing.result()
            assert isinstance(answer, httpx.Response) and answer.status_code == 202, answer
            assert answer.json()["windows_fired"] == 1 and answer.json()["windows_failed"] == 1
            events = wait_for_events(reader, 1)
            assert [(i, kind) for i, kind, _ in events] == [("1", "window-error")]
            error = events[0][2]
            assert error["window"] == {"start_ms": 0, "end_ms": 1000} and error["sequence"] == 1
            assert error["error"]["reason"] == "time_limit"
            assert "time limit of 2 s" in error["error"]["message"]
            described = http.get("/queries/q").json()
            assert described["windows_failed"] == 1 and described["last_error"]["reason"] == "time_limit"
            # the query goes on with its next window
            assert post_item(http, "s", 1500, f'<{EX}x> <{EX}p> "aaaa" .\n').status_code == 202
            assert post_item(http, "s", 2000).json()["windows_failed"] == 0
            events = wait_for_events(reader, 2)
            assert [(i, kind) for i, kind, _ in events] == [("1", "window-error"), ("2", "window")]
            bindings = events[1][2]["results"]["results"]["bindings"]
            assert bindings == [{"o": {"type": "literal", "value": "aaaa"}}]
            reader.close()
        server.process.kill()
        server.process.wait(30)
        # recovery evaluates the logged poison window again, within the same limit
        server = RivuletProcess(*options)
        with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as http:
            described = http.get("/queries/q").json()
            # failed again in the replay (its last error says so); counters start at 0 with the process
            assert described["windows_reported"] == 2 and described["windows_failed"] == 0
            last = described["last_error"]
            assert (last["sequence"], last["reason"]) == (1, "time_limit")
            assert http.get("/streams/s").json()["watermark_ms"] == 2000
            assert http.get("/queries/r").status_code == 404 and http.get("/streams/u").status_code == 200
            # a client resuming from the start gets both windows again, the error included
            resumed = SSEReader(f"{server.url}/queries/q/events", last_event_id="0")
            events = wait_for_events(resumed, 2)
            assert [(i, kind) for i, kind, _ in events] == [("1", "window-error"), ("2", "window")]
            resumed.close()
    finally:
        server.stop()


def test_a_poison_update_answers_503_changes_nothing_and_frees_the_store(tmp_path: Path):
    """Case 4: a REGEX in an update's WHERE runs into the time limit: 503,
    nothing changed or logged, and the writes waiting for the store go through."""
    data = tmp_path / "data"
    server = RivuletProcess("--timeout", "2", "--data-dir", str(data), "--sync", "none")
    try:
        with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as http:
            declare(http, "s")
            seeded = http.post("/sparql", data={"update": f'INSERT DATA {{ <{EX}a> <{EX}text> "{POISON}" }}'})
            assert seeded.status_code == 204
            poison = (f"INSERT {{ <{EX}a> <{EX}matches> ?m }} WHERE {{ <{EX}a> <{EX}text> ?o "
                      f'BIND(REGEX(?o, "^(a|aa)+$") AS ?m) }}')
            update = Background(lambda: http.post("/sparql", data={"update": poison}))
            time.sleep(0.5)  # the update holds the store's write lock
            waiting = {
                "update": timed(http.post, "/sparql",
                                data={"update": f"INSERT DATA {{ <{EX}b> <{EX}p> 1 }}"}),
                "graph store write": timed(http.put, f"/store?graph={EX}g",
                                           content=f'<{EX}c> <{EX}p> "2" .\n', headers=NTRIPLES),
                "stream ingest": timed(post_item, http, "s", 100, f'<{EX}d> <{EX}p> "3" .\n'),
            }
            answer, seconds = update.result()
            assert isinstance(answer, httpx.Response) and answer.status_code == 503, answer
            assert "update cancelled" in answer.text and "time limit of 2 s" in answer.text
            assert "nothing was changed" in answer.text
            for what, (done, took) in waiting.items():
                assert done.status_code in (201, 202, 204), (what, done.text)
                assert took < ANSWER_WITHIN, what
            ask = http.get("/sparql", params={"query": f"ASK {{ <{EX}a> <{EX}matches> ?m }}"},
                           headers={"Accept": "application/sparql-results+json"})
            assert ask.json()["boolean"] is False
            later = f'ASK {{ <{EX}b> ?p 1 . GRAPH <{EX}g> {{ <{EX}c> ?q "2" }} }}'
            both = http.get("/sparql", params={"query": later},
                            headers={"Accept": "application/sparql-results+json"})
            assert both.json()["boolean"] is True
            # the log spells the terms of every write it holds: the waiting writes, not the poison one
            logged = b"".join(segment.read_bytes() for segment in (data / "wal").glob("*.log"))
            assert f"{EX}b".encode() in logged and f"{EX}matches".encode() not in logged
        assert any("update cancelled after" in line for line in server.stop())
    finally:
        server.stop()


def test_a_window_over_max_rows_fails_at_once_without_taking_the_memory():
    """Case 5 (CityBench's Q1_5 shape): three patterns that only the later
    groups connect are joined first, a product of 200^3 = 8,000,000 rows;
    the window is reported as failed with the row count, its memory never taken."""
    server = RivuletProcess("--max-rows", "100000")
    try:
        with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as http:
            declare(http, "traffic")
            groups = " ".join(f"{{ ?ob{i} <{EX}observes> ?p{i} . ?ob{i} <{EX}value> ?v{i} }}"
                              for i in (1, 2, 3))
            register(http, f"REGISTER QUERY congestion AS SELECT ?ob1 ?ob2 ?ob3 FROM STREAM <{EX}traffic> "
                           f"[RANGE 2s STEP 1s] WHERE {{ ?p1 a <{EX}Congestion> . ?p2 a <{EX}Congestion> . "
                           f"?p3 a <{EX}Congestion> . {groups} }}")
            reader = SSEReader(f"{server.url}/queries/congestion/events")
            lines = []
            for i in range(200):
                lines += [f"100 <{EX}prop{i}> <{RDF_TYPE}> <{EX}Congestion> .",
                          f"100 <{EX}ob{i}> <{EX}observes> <{EX}prop{i}> .",
                          f'100 <{EX}ob{i}> <{EX}value> "{i}" .']
            batch = http.post("/streams/traffic", content="\n".join(lines) + "\n1000\n",
                              headers={"Content-Type": "application/x-timestamped-ntriples"})
            peak = _peak_rss_mb(server)
            assert batch.status_code == 202 and batch.json()["windows_failed"] == 1, batch.text
            events = wait_for_events(reader, 1)
            assert events[0][1] == "window-error"
            error = events[0][2]["error"]
            assert error["reason"] == "row_limit" and "the limit is 100,000" in error["message"], error
            assert _peak_rss_mb(server) - peak < 150  # 8 M rows of 3 columns would be 190 MB at least
            reader.close()
    finally:
        server.stop()


def _peak_rss_mb(server: RivuletProcess) -> float:
    """The server process's peak resident memory so far (Linux)."""
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    kilobytes = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    return kilobytes / 1024


def test_a_heartbeat_closing_too_many_windows_of_all_queries_is_refused_at_once(tmp_path: Path):
    """Case 6: five queries of 1 ms windows, a heartbeat 100 s ahead: 100,000
    windows each is 500,000 for the request, refused at once; the watermark
    stays and nothing is logged."""
    data = tmp_path / "data"
    server = RivuletProcess("--data-dir", str(data), "--sync", "none")
    try:
        with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as http:
            declare(http, "s")
            for k in range(5):
                register(http, f"REGISTER QUERY m{k} AS SELECT ?o FROM STREAM <{EX}s> [RANGE 1ms STEP 1ms] "
                               "WHERE { ?s ?p ?o }")
            assert post_item(http, "s", 0, f'<{EX}a> <{EX}p> "1" .\n').status_code == 202
            logged = _log_bytes(data)
            answer, seconds = timed(post_item, http, "s", 100_000)
            assert answer.status_code == 422 and seconds < ANSWER_WITHIN
            assert "500,000 windows" in answer.text and "at most 100,000" in answer.text, answer.text
            assert http.get("/streams/s").json()["watermark_ms"] == 0 and _log_bytes(data) == logged
            assert all(http.get(f"/queries/m{k}").json()["windows_reported"] == 0 for k in range(5))
            within = post_item(http, "s", 100)  # 5 x 100 windows
            assert within.status_code == 202 and within.json()["windows_fired"] == 500
    finally:
        server.stop()


def _log_bytes(data: Path) -> int:
    return sum(segment.stat().st_size for segment in (data / "wal").glob("*.log"))


def test_sigterm_stops_the_server_within_its_grace_period_whatever_runs(tmp_path: Path):
    """A poison update, a poison window and a poison query under a
    ten-minute time limit, then SIGTERM: the server stops within its grace
    period (and a margin), the update changed nothing, and a restart has
    every acknowledged write and evaluates the window the shutdown left."""
    data = str(tmp_path / "data")
    server = RivuletProcess("--data-dir", data, "--timeout", "600", "--grace-period", "2")
    restarted = None
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            declare(http, "s")
            register(http, f"REGISTER QUERY q AS SELECT ?o FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                           f"WHERE {{ ?s ?p ?o {REGEX_FILTER} }}")
            acknowledged = [f"<{EX}n{k}> <{EX}p> {k}" for k in range(5)]
            for triple in acknowledged:
                assert http.post("/sparql", data={"update": f"INSERT DATA {{ {triple} }}"}).status_code == 204
            assert post_item(http, "s", 100, f'<{EX}x> <{EX}p> "{POISON}" .\n').status_code == 202
            reader = SSEReader(f"{server.url}/queries/q/events")  # an open event stream ends too
            window = Background(lambda: post_item(http, "s", 1000))
            poison = f'INSERT {{ <{EX}u> <{EX}m> ?m }} WHERE {{ BIND(REGEX("{POISON}", "^(a|aa)+$") AS ?m) }}'
            update = Background(lambda: http.post("/sparql", data={"update": poison}))
            long_query = f'SELECT ?m WHERE {{ BIND(REGEX("{POISON}", "^(a|aa)+$") AS ?m) }}'
            query = Background(lambda: http.post("/sparql", data={"query": long_query}))
            time.sleep(1.0)  # all three are running
            server.process.send_signal(signal.SIGTERM)
            stopped = time.monotonic()
            server.process.wait(2 + 15)  # the grace period and a generous margin
            assert time.monotonic() - stopped < 2 + 15
            update_answer, _ = update.result()
            window_answer, _ = window.result()
            query_answer, _ = query.result()
            reader.close()
        log = "".join(server.stop())
        assert "data directory closed" in log, log[-2000:]
        assert isinstance(update_answer, httpx.Response), update_answer
        assert update_answer.status_code == 503 and "shutting down" in update_answer.text
        assert "nothing was changed" in update_answer.text
        assert isinstance(query_answer, httpx.Response), query_answer
        assert query_answer.status_code == 503 and "shutting down" in query_answer.text
        assert isinstance(window_answer, httpx.Response), window_answer
        # its batch is in (acknowledged): its window is left to the restart
        assert window_answer.status_code == 202 and window_answer.json()["windows_fired"] == 0
        restarted = RivuletProcess("--data-dir", data, "--timeout", "2")
        with httpx.Client(base_url=restarted.url, timeout=ANSWER_WITHIN) as http:
            for triple in acknowledged:
                ask = http.get("/sparql", params={"query": f"ASK {{ {triple} }}"},
                               headers={"Accept": "application/sparql-results+json"})
                assert ask.json()["boolean"] is True, triple
            ask = http.get("/sparql", params={"query": f"ASK {{ <{EX}u> ?p ?o }}"},
                           headers={"Accept": "application/sparql-results+json"})
            assert ask.json()["boolean"] is False
            assert http.get("/streams/s").json()["watermark_ms"] == 1000
            # recovery evaluated the window the shutdown left, within the new time limit
            described = http.get("/queries/q").json()
            assert described["windows_reported"] == 1 and described["last_error"]["reason"] == "time_limit"
    finally:
        server.stop()
        if restarted is not None:
            restarted.stop()
