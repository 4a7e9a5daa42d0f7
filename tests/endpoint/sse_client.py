"""A small SSE reader for the tests: a real HTTP client (httpx) in a thread,
parsing the event stream as a browser's EventSource does."""

from __future__ import annotations

import json
import threading
import time

import httpx


class SSEReader:
    """Reads ``url`` in the background; ``events`` holds ``(id, event, data)``,
    ``comments`` the comment lines (heartbeats)."""

    def __init__(self, url: str, last_event_id: str | None = None) -> None:
        self.url = url
        self.headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            self.headers["Last-Event-ID"] = last_event_id
        self.events: list[tuple[str | None, str | None, dict]] = []
        #: each event's data as sent (the text of its data lines)
        self.raw: list[str] = []
        self.comments: list[str] = []
        self.status: int | None = None
        self.connected = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self.connected.wait(10):
            raise RuntimeError(f"no SSE connection to {url}")

    def _run(self) -> None:
        try:
            self._read()
        except httpx.HTTPError:
            pass  # the server went away (end of test) or close() cut the connection
        finally:
            self.connected.set()

    def _read(self) -> None:
        with httpx.Client(timeout=httpx.Timeout(30.0, read=60.0)) as client:
            with client.stream("GET", self.url, headers=self.headers) as response:
                self.status = response.status_code
                self.connected.set()
                event_id = event = None
                data: list[str] = []
                for line in response.iter_lines():
                    if self._stop.is_set():
                        return
                    if line.startswith(":"):
                        self.comments.append(line)
                    elif line.startswith("id:"):
                        event_id = line[3:].strip()
                    elif line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].lstrip())
                    elif line == "" and data:
                        self.raw.append("\n".join(data))
                        self.events.append((event_id, event, json.loads(self.raw[-1])))
                        event_id = event = None
                        data = []

    def wait_for(self, count: int, timeout: float = 20.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        while len(self.events) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return [data for _, _, data in self.events]

    def close(self) -> None:
        """Stop reading; the daemon thread ends when the connection does (at the
        latest when the test's server stops)."""
        self._stop.set()
