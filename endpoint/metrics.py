"""``/metrics``: the application's numbers in the Prometheus exposition format.

Each application has its own registry (a process may run several, as the
tests do; the library's global registry would mix them): the HTTP traffic
(:mod:`endpoint.traffic`), the engine's state (:mod:`endpoint.engine_metrics`)
and the process's own figures (``process_resident_memory_bytes``, CPU, open
files). With ``--processes N`` each process has its own; a scrape reaches
whichever process the kernel hands the connection to.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, ProcessCollector, disable_created_metrics
from prometheus_client.exposition import choose_encoder
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from endpoint.engine_metrics import EngineCollector
from endpoint.traffic import Traffic
from endpoint.workers import Workers
from engine.api import Store
from engine.stream import StreamEngine

# a `_created` series beside every counter and histogram doubles the series
# for a start time that process_start_time_seconds already gives
disable_created_metrics()


class Metrics:
    """The registry of one application and the handler that exposes it."""

    def __init__(self, store: Store, streams: StreamEngine, workers: Workers) -> None:
        self.registry = CollectorRegistry()
        self.traffic = Traffic(self.registry)
        ProcessCollector(registry=self.registry)
        self.registry.register(EngineCollector(store, streams, workers))

    async def expose(self, request: Request) -> Response:
        """The current values, in the format the scraper asks for (Prometheus
        text by default, OpenMetrics when its Accept header says so)."""
        encode, content_type = choose_encoder(request.headers.get("accept", ""))
        return Response(encode(self.registry), headers={"Content-Type": content_type})

    def routes(self) -> list[Route]:
        return [Route("/metrics", self.expose, methods=["GET"])]
