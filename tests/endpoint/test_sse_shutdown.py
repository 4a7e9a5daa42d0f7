"""Stopping ``rivulet serve`` while clients listen to a query's events: each
event stream ends as a complete HTTP response, and the server logs no
``ASGI callable returned without completing response``."""

from __future__ import annotations

import threading
import time

import httpx

from tests.endpoint.rivulet_process import RivuletProcess

EX = "http://example.org/rivers/"
LISTENERS = 3


def _listen(url: str, outcome: list[str]) -> None:
    """Read the event stream to its end; record how it ended."""
    try:
        with httpx.stream("GET", url, timeout=httpx.Timeout(30.0, read=60.0)) as response:
            for _ in response.iter_bytes():
                pass
        outcome.append("complete")
    except httpx.HTTPError as exc:  # a cut chunked body: "incomplete chunked read"
        outcome.append(f"cut: {exc!r}")


def test_a_shutdown_with_listeners_ends_their_streams_cleanly(tmp_path):
    server = RivuletProcess("--data-dir", str(tmp_path / "data"))
    try:
        http = httpx.Client(base_url=server.url, timeout=10)
        assert http.put("/streams/gauges", json={"iri": f"{EX}gauges"}).status_code == 201
        registered = http.post("/queries", headers={"Content-Type": "application/sparql-query"}, content=(
            f"REGISTER RSTREAM levels AS SELECT ?g ?cm FROM NAMED WINDOW <{EX}w> ON <{EX}gauges> "
            f"[RANGE PT10S STEP PT5S] WHERE {{ WINDOW <{EX}w> {{ ?g <{EX}levelCm> ?cm }} }}"))
        assert registered.status_code == 201, registered.text
        outcomes: list[str] = []
        readers = [threading.Thread(target=_listen, args=(f"{server.url}/queries/levels/events", outcomes))
                   for _ in range(LISTENERS)]
        for reader in readers:
            reader.start()
        deadline = time.monotonic() + 20
        while http.get("/queries/levels").json()["subscribers"] < LISTENERS:
            assert time.monotonic() < deadline, "the listeners did not connect within 20 s"
            time.sleep(0.05)
    finally:
        log = "".join(server.stop())
    for reader in readers:
        reader.join(timeout=30)
    assert "ASGI callable returned without completing response" not in log, log
    assert " ERROR" not in log and "Traceback" not in log, log
    assert outcomes == ["complete"] * LISTENERS, outcomes
