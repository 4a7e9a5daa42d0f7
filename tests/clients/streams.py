"""A stream and a continuous query on a test server, for the clients that
read its windows (curl, httpx-sse, a browser's EventSource): declared,
registered and fed over HTTP as the README shows."""

from __future__ import annotations

import time

import httpx

EX = "http://example.org/rivers/"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"
BATCH = "application/x-timestamped-ntriples"

#: the README's query: the highest reading per river over the last 10 s, every 5 s
HIGH_WATER = f"""PREFIX ex: <{EX}>
REGISTER RSTREAM high_water AS
SELECT ?river (MAX(?cm) AS ?peak)
FROM NAMED WINDOW ex:w ON <{EX}gauges> [RANGE PT10S STEP PT5S]
WHERE {{ WINDOW ex:w {{ ?gauge ex:levelCm ?cm }} ?gauge ex:on ?river }}
GROUP BY ?river ORDER BY ?river"""


def set_up(url: str, headers: dict[str, str] | None = None) -> None:
    """Declare the stream ``gauges`` and register ``high_water`` on the demo server at ``url``."""
    declared = httpx.put(f"{url}/streams/gauges", headers=headers, timeout=10,
                         json={"iri": f"{EX}gauges", "timing": [f"{EX}levelCm"]})
    assert declared.status_code == 201, declared.text
    registered = httpx.post(f"{url}/queries", content=HIGH_WATER, timeout=10,
                            headers={"Content-Type": "application/sparql-query", **(headers or {})})
    assert registered.status_code == 201, registered.text


def readings(*lines: tuple[int, str, int]) -> str:
    """A batch: ``(timestamp ms, gauge, cm)`` per reading; a gauge of None is a heartbeat."""
    return "\n".join(str(ms) if gauge is None else f'{ms} <{EX}{gauge}> <{EX}levelCm> "{cm}"^^<{XSD_INT}> .'
                     for ms, gauge, cm in lines)


def post(url: str, batch: str) -> None:
    response = httpx.post(f"{url}/streams/gauges", content=batch, headers={"Content-Type": BATCH}, timeout=10)
    assert response.status_code == 202, response.text


#: three windows: the first closes at 5000 (Koblenz 318), the second at 10000
#: (Koblenz 318, Passau 520), the third at 15000 (Passau 530)
WINDOW_BATCHES = [
    readings((1000, "gauge-koblenz", 312), (3000, "gauge-koblenz", 318), (5000, None, 0)),
    readings((6000, "gauge-passau", 520), (10000, None, 0)),
    readings((12000, "gauge-passau", 530), (15000, None, 0)),
]
#: each window's peaks, river -> cm
WINDOW_PEAKS = [
    {f"{EX}Rhine": 318},
    {f"{EX}Danube": 520, f"{EX}Rhine": 318},
    {f"{EX}Danube": 530},
]


def peaks(event: dict) -> dict[str, int]:
    """River -> peak of one window event's results."""
    return {b["river"]["value"]: int(b["peak"]["value"]) for b in event["results"]["results"]["bindings"]}


def wait_for_subscribers(url: str, count: int, timeout: float = 45.0) -> None:
    """Until ``high_water`` has ``count`` subscribers: a client is listening before items are posted."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if httpx.get(f"{url}/queries/high_water", timeout=10).json()["subscribers"] >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"high_water did not get {count} subscriber(s) within {timeout} s")
