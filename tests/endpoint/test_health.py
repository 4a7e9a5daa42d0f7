"""The probes: /healthz while the process serves, /readyz while it should
get traffic; open to anyone (no token, read-only servers too), cheap, and
not counted as the service's traffic."""

from __future__ import annotations

import asyncio
import concurrent.futures

import httpx

from endpoint.app import create_app
from engine.api import Store

http = httpx.Client(timeout=30)


def test_probes_answer_without_a_token_on_a_read_only_server(serve):
    url = serve(read_only=True, update_token="secret")
    health = http.get(f"{url}/healthz")
    assert (health.status_code, health.text) == (200, "ok\n")
    ready = http.get(f"{url}/readyz")
    assert (ready.status_code, ready.text) == (200, "ready\n")
    assert http.head(f"{url}/healthz").status_code == 200
    assert http.post(f"{url}/healthz").status_code == 405  # a probe changes nothing
    # a write still needs the token: the probes opened nothing else
    assert http.post(f"{url}/sparql", data={"update": "CLEAR ALL"}).status_code in (401, 403)


def test_probes_are_not_counted_as_traffic(serve):
    url = serve()
    for _ in range(5):
        http.get(f"{url}/healthz")
        http.get(f"{url}/readyz")
    scraped = http.get(f"{url}/metrics").text
    assert "rivulet_requests_total{" not in scraped


def test_not_ready_once_the_shutdown_begins():
    app = create_app(Store())

    async def probe(path: str) -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://rivulet") as client:
            return await client.get(path)

    async def run() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        async with app.router.lifespan_context(app):  # what the server runs around serving
            serving = await probe("/readyz")
        return serving, await probe("/readyz"), await probe("/healthz")

    # in a thread of its own: the browser tests keep an event loop running in this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        serving, stopping, alive = pool.submit(asyncio.run, run()).result(timeout=60)
    assert (serving.status_code, serving.text) == (200, "ready\n")
    assert (stopping.status_code, stopping.text) == (503, "shutting down\n")
    assert alive.status_code == 200  # the process still answers
