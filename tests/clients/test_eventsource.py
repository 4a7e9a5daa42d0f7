"""A browser's ``EventSource`` on a page of another web server (so the
endpoint runs with ``--cors`` for its origin) subscribing to a continuous
query's events, in headless Chromium, while readings are posted: the page
gets each window as it closes, with its event id."""

from __future__ import annotations

import json

from tests.clients import streams
from tests.clients.browser import in_browser, static_site

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>windows</title></head>
<body><ol id="windows"></ol>
<script>
  const events = new URLSearchParams(location.search).get("events");
  window.received = [];
  const source = new EventSource(events);
  window.source = source;
  window.failures = [];  // what the page saw go wrong, for the message of a failed test
  source.onerror = () => window.failures.push(`error at ${Date.now()}, readyState ${source.readyState}`);
  source.addEventListener("window", (event) => {
    window.received.push({ id: event.lastEventId, data: event.data });
    const item = document.createElement("li");
    item.textContent = event.data;
    document.getElementById("windows").append(item);
  });
</script></body></html>"""


def test_an_event_source_gets_each_window_as_it_closes(recorded):
    with static_site({"index.html": PAGE}) as site:
        server = recorded(cors_origins=(site,))
        streams.set_up(server.url)

        def scenario(page):
            page.goto(f"{site}/index.html?events={server.url}/queries/high_water/events")
            # wait in the page, not in a Python loop: the test's route handler
            # (loopback only) lets the EventSource's request go only while
            # Playwright is being called, so a loop of HTTP polls here held it back
            # (the flaky failure of earlier full runs: the request reached the
            # server once the poll gave up). Open (1) means the server answered,
            # which it does once the subscriber is registered.
            try:
                page.wait_for_function("window.source && window.source.readyState === 1", timeout=45_000)
            except Exception as exc:
                state = page.evaluate("({ready: window.source && window.source.readyState, "
                                      "failures: window.failures})")
                raise AssertionError(f"the page's EventSource did not open ({exc}): {state}; the server "
                                     f"saw: {server.show()}") from None
            streams.wait_for_subscribers(server.url, 1)
            for count, batch in enumerate(streams.WINDOW_BATCHES, start=1):
                streams.post(server.url, batch)
                page.wait_for_function(f"window.received.length >= {count}", timeout=20_000)
            return page.evaluate("window.received"), page.locator("#windows li").count()

        received, shown = in_browser(scenario)
    events = [json.loads(event["data"]) for event in received]
    assert [streams.peaks(event) for event in events] == streams.WINDOW_PEAKS, server.show()
    assert [event["sequence"] for event in events] == [1, 2, 3]
    ids = [int(event["id"]) for event in received]  # what the browser would resume from
    assert all(earlier < later for earlier, later in zip(ids, ids[1:])), ids
    assert shown == 3
