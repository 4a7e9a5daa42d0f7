"""The probes: ``/healthz`` (the process serves) and ``/readyz`` (send it traffic).

Both are answered from memory, without authentication (they reveal nothing)
and outside the traffic metrics. An application is created with its store
open and recovered (``rivulet serve`` opens the data directory before it
listens), so it is ready from the start; it stops being ready when its
lifespan shutdown begins. (uvicorn stops listening before that, so under
``rivulet serve`` a balancer sees refused connections first; the 503 is
for servers that keep serving while they shut the application down.)
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route


class Readiness:
    """Whether the application should be sent new requests."""

    def __init__(self) -> None:
        self.stopping = False

    def stop(self) -> None:
        """The server is shutting down: no new traffic."""
        self.stopping = True

    async def healthz(self, request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def readyz(self, request: Request) -> Response:
        if self.stopping:
            return PlainTextResponse("shutting down\n", status_code=503)
        return PlainTextResponse("ready\n")

    def routes(self) -> list[Route]:
        return [Route("/healthz", self.healthz, methods=["GET", "HEAD"]),
                Route("/readyz", self.readyz, methods=["GET", "HEAD"])]
