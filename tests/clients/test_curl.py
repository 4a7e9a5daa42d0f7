"""curl, as the README uses it: ``curl -N`` on a query's event stream while
readings are posted, an update with the token as HTTP Basic password
(``-u :TOKEN``), and an update from ``curl --http2``, which offers the server
an upgrade to HTTP/2 (``Upgrade: h2c``) as Java clients do, against the real
``rivulet serve``."""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import threading
import time

import httpx
import pytest

from tests.clients import streams

EX = streams.EX
ISAR = f"update=INSERT DATA {{ <{EX}Isar> <{EX}flowsInto> <{EX}Danube> }}"
ASK_ISAR = f"ASK {{ <{EX}Isar> <{EX}flowsInto> <{EX}Danube> }}"

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


def curl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "--silent", "--show-error", "--max-time", "20", *args],
                          capture_output=True, text=True, timeout=30)


def isar_known(url: str) -> bool:
    response = httpx.get(f"{url}/sparql", params={"query": ASK_ISAR},
                         headers={"Accept": "application/sparql-results+json"})
    return response.json()["boolean"]


class LineReader:
    """``curl -N URL`` in the background, its output lines in a queue."""

    def __init__(self, url: str) -> None:
        self.process = subprocess.Popen(["curl", "--silent", "-N", "--max-time", "60", url],
                                        stdout=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def events(self, count: int, timeout: float = 20.0) -> list[tuple[str, dict]]:
        """The next ``count`` events as ``(event type, data)``."""
        deadline = time.monotonic() + timeout
        events: list[tuple[str, dict]] = []
        kind = None
        while len(events) < count:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"curl read {len(events)} of {count} events in {timeout} s") from None
            if line.startswith("event:"):
                kind = line.removeprefix("event:").strip()
            elif line.startswith("data:"):
                events.append((kind, json.loads(line.removeprefix("data:"))))
        return events

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def test_curl_n_prints_each_window_as_readings_are_posted(recorded):
    server = recorded()
    streams.set_up(server.url)
    reader = LineReader(f"{server.url}/queries/high_water/events")
    try:
        streams.wait_for_subscribers(server.url, 1)
        for batch, peaks in zip(streams.WINDOW_BATCHES, streams.WINDOW_PEAKS):
            streams.post(server.url, batch)
            [(kind, data)] = reader.events(1)
            assert kind == "window"
            assert streams.peaks(data) == peaks
    finally:
        reader.stop()


def test_curl_posts_an_update_with_the_token_as_basic_password(recorded):
    server = recorded(update_token="s3cret")
    refused = curl(f"{server.sparql}", "--data-urlencode", ISAR, "-o", "/dev/null", "-w", "%{http_code}")
    assert refused.stdout == "401"
    accepted = curl(f"{server.sparql}", "-u", ":s3cret", "--data-urlencode", ISAR,
                    "-o", "/dev/null", "-w", "%{http_code}")
    assert accepted.stdout == "204", server.show()
    assert server.recorder.requests[-1].header("authorization").startswith("Basic ")
    assert isar_known(server.url)


def test_an_update_offering_h2c_is_answered_without_a_warning(rivulet):
    server = rivulet("--demo")
    before = len(server.log())
    result = curl("--http2", f"{server.url}/sparql", "--data-urlencode", ISAR, "-v", "-o", "/dev/null",
                  "-w", "%{http_code}")
    assert "Upgrade: h2c" in result.stderr  # curl did offer it
    assert result.stdout == "204", result.stderr
    assert isar_known(server.url)
    logged = server.log()[before:]
    assert "WARNING" not in logged and "upgrade" not in logged.lower(), logged
