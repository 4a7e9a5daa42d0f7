"""httpx-sse, a Python client library for Server-Sent Events, reading a
continuous query's windows: it reads two, goes away, and resumes with
``Last-Event-ID``, getting the window closed while it was gone and no other."""

from __future__ import annotations

import json

import httpx
from httpx_sse import connect_sse

from tests.clients import streams


def read_windows(client: httpx.Client, url: str, count: int, last_event_id: str | None = None,
                 post: list[str] = ()) -> list:
    """Connect, post each batch of ``post`` once connected, and return the first ``count`` events."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    events = []
    with connect_sse(client, "GET", f"{url}/queries/high_water/events", headers=headers) as source:
        assert source.response.headers["content-type"].startswith("text/event-stream")
        streams.wait_for_subscribers(url, 1)
        for batch in post:
            streams.post(url, batch)
        for event in source.iter_sse():
            events.append(event)
            if len(events) == count:
                break
    return events


def test_windows_are_read_and_resumed_after_the_last_event_id(recorded):
    server = recorded()
    streams.set_up(server.url)
    first, second, third = streams.WINDOW_BATCHES
    with httpx.Client(timeout=httpx.Timeout(10.0, read=20.0)) as client:
        events = read_windows(client, server.url, 2, post=[first, second])
        assert [e.event for e in events] == ["window", "window"]
        assert [streams.peaks(e.json()) for e in events] == streams.WINDOW_PEAKS[:2]
        last_id = events[-1].id
        assert last_id

        streams.post(server.url, third)  # closes the third window while no one listens
        resumed = read_windows(client, server.url, 1, last_event_id=last_id)
    [window] = resumed
    assert json.loads(window.data)["sequence"] == 3
    assert streams.peaks(window.json()) == streams.WINDOW_PEAKS[2]
    assert int(window.id) > int(last_id)
