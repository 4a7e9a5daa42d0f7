"""``/queries/{name}/sink``: publish a registered query's windows to a broker.

``PUT`` attaches (or replaces) the sink from a JSON body (see
:func:`~endpoint.brokers.config.sink_config`; 201 when new, 200 when
replaced), ``GET`` shows it and where it stands, ``DELETE`` detaches it. A
query unregistered loses its sink with it.
"""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from endpoint.asgi_requests import require_write
from endpoint.brokers.connectors import Connectors
from endpoint.problems import ProtocolError
from endpoint.settings import Settings
from endpoint.workers import Workers


class SinkRoutes:
    """The handlers of ``/queries/{name}/sink``."""

    def __init__(self, connectors: Connectors, settings: Settings, workers: Workers) -> None:
        self.connectors = connectors
        self.settings = settings
        self.workers = workers

    def routes(self) -> list[Route]:
        return [
            Route("/queries/{name:path}/sink", self.put, methods=["PUT"]),
            Route("/queries/{name:path}/sink", self.get, methods=["GET"]),
            Route("/queries/{name:path}/sink", self.delete, methods=["DELETE"]),
        ]

    async def put(self, request: Request) -> Response:
        require_write(request, self.settings)
        try:
            spec = orjson.loads(await request.body())
        except orjson.JSONDecodeError as exc:
            raise ProtocolError(400, f"the sink is not JSON: {exc}") from exc
        state, created = await self.workers.call(self.connectors.set_sink, request.path_params["name"], spec)
        return JSONResponse(state, status_code=201 if created else 200)

    async def get(self, request: Request) -> Response:
        name = request.path_params["name"]
        state = self.connectors.sink(name)
        if state is None:
            raise ProtocolError(404, f"query {name!r} has no sink")
        return JSONResponse(state)

    async def delete(self, request: Request) -> Response:
        require_write(request, self.settings)
        name = request.path_params["name"]
        if not await self.workers.call(self.connectors.remove_sink, name):
            raise ProtocolError(404, f"query {name!r} has no sink")
        return Response(status_code=204)
