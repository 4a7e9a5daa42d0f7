"""After a restart on the same data directory, the counters of streams and
queries start at 0 (docs/operations.md, Metrics): the batches and windows
that recovery replays are not counted again, while the windows' sequence
numbers and the streams' watermarks go on. A heartbeat is no item, in the
ingest summary as in the counters."""

from __future__ import annotations

import httpx

from tests.endpoint.rivulet_process import RivuletProcess

EX = "http://example.org/rivers/"
BATCH = "application/x-timestamped-ntriples"
QUERY = (f"REGISTER RSTREAM levels AS SELECT ?g ?cm FROM NAMED WINDOW <{EX}w> ON <{EX}gauges> "
         f"[RANGE PT10S STEP PT5S] WHERE {{ WINDOW <{EX}w> {{ ?g <{EX}levelCm> ?cm }} }}")


def _readings(*items: tuple[int, int]) -> str:
    return "\n".join(f'{ms} <{EX}gauge> <{EX}levelCm> "{cm}"^^<http://www.w3.org/2001/XMLSchema#integer> .'
                     for ms, cm in items)


def _sample(metrics: str, name: str) -> float:
    return next(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines() if line.startswith(name + " "))


def _counters(http: httpx.Client) -> tuple:
    stream = http.get("/streams/gauges").json()
    query = http.get("/queries/levels").json()
    metrics = http.get("/metrics").text
    return (stream["items"], stream["triples"], stream["watermark_ms"], query["windows_reported"],
            _sample(metrics, 'rivulet_stream_items_total{stream="gauges"}'),
            _sample(metrics, 'rivulet_stream_triples_total{stream="gauges"}'),
            _sample(metrics, 'rivulet_continuous_query_windows_total{query="levels"}'),
            _sample(metrics, 'rivulet_continuous_query_evaluation_seconds_count{query="levels"}'))


def test_counters_start_at_zero_after_a_restart_and_sequences_go_on(tmp_path):
    options = ("--data-dir", str(tmp_path / "data"), "--sync", "none")
    server = RivuletProcess(*options)
    try:
        http = httpx.Client(base_url=server.url, timeout=30)
        assert http.put("/streams/gauges", json={"iri": f"{EX}gauges"}).status_code == 201
        assert http.post("/queries", content=QUERY, headers={"Content-Type": "application/sparql-query"}
                         ).status_code == 201
        summary = http.post("/streams/gauges", headers={"Content-Type": BATCH}, content=_readings(
            (1700000001000, 312), (1700000003000, 318), (1700000004000, 520)) + "\n1700000005000").json()
        assert (summary["items"], summary["triples"], summary["windows_fired"]) == (3, 3, 1)
        heartbeat = http.post("/streams/gauges", headers={"Content-Type": BATCH},
                              content="1700000006000").json()
        assert (heartbeat["items"], heartbeat["triples"]) == (0, 0)
        assert _counters(http) == (3, 3, 1700000006000, 1, 3.0, 3.0, 1.0, 1.0)
    finally:
        server.stop()

    again = RivuletProcess(*options)
    try:
        http = httpx.Client(base_url=again.url, timeout=30)
        # recovery replayed the batches (their windows are there to resume) without counting them
        assert _counters(http) == (0, 0, 1700000006000, 1, 0.0, 0.0, 0.0, 0.0)
        summary = http.post("/streams/gauges", headers={"Content-Type": BATCH},
                            content=_readings((1700000007000, 330)) + "\n1700000010000").json()
        assert (summary["items"], summary["triples"], summary["windows_fired"]) == (1, 1, 1)
        assert _counters(http) == (1, 1, 1700000010000, 2, 1.0, 1.0, 1.0, 1.0)
    finally:
        again.stop()
