"""``/streams``: declare RDF streams, list them, and post items to them.

``PUT /streams/{name}`` declares (or re-declares) a stream from a JSON body;
``POST /streams/{name}`` ingests one item (N-Triples, Turtle or JSON-LD, with
its timestamp in the ``X-Timestamp`` header or ``timestamp`` parameter,
arrival time when absent; an empty body is a heartbeat) or many items in
timestamped N-Triples. A malformed body is 400 and nothing of it is
ingested; a late item is 409 with its timestamp.
"""

from __future__ import annotations

import re

import orjson
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from endpoint.access import require_write
from endpoint.public_url import public_url
from endpoint.settings import Settings
from endpoint.workers import Workers
from engine.rdf import IRI, iri_problem
from engine.stream import StreamDefinition, StreamEngine

IDLE_POLICIES = ("none", "wallclock")
#: the type of an item sent without Content-Type
DEFAULT_ITEM_TYPE = "application/n-triples"


class StreamRoutes:
    """The handlers of ``/streams`` and ``/streams/{name}``; the engine's
    errors are answered by the application's handlers (:mod:`endpoint.errors`)."""

    def __init__(self, engine: StreamEngine, settings: Settings, workers: Workers) -> None:
        self.engine = engine
        self.settings = settings
        self.workers = workers

    def routes(self) -> list[Route]:
        return [
            Route("/streams", self.list_streams, methods=["GET"]),
            Route("/streams/{name}", self.declare, methods=["PUT"]),
            Route("/streams/{name}", self.describe, methods=["GET"]),
            Route("/streams/{name}", self.ingest, methods=["POST"]),
        ]

    async def list_streams(self, request: Request) -> Response:
        return JSONResponse({"streams": [s.to_json() for s in self.engine.streams.values()]})

    async def describe(self, request: Request) -> Response:
        return JSONResponse(self.engine.stream(request.path_params["name"]).to_json())

    async def declare(self, request: Request) -> Response:
        require_write(request, self.settings)
        name = request.path_params["name"]
        if not STREAM_NAME.fullmatch(name):
            raise HTTPException(400, f"a stream name is 1 to 200 of the characters A-Z a-z 0-9 . _ ~ -, "
                                     f"not {name[:60]!r}")
        url = public_url(request, self.settings)
        definition = _definition(name, await request.body(), url)
        state, created = await self.workers.call(self.engine.declare_stream, definition)
        return JSONResponse(state.to_json(), status_code=201 if created else 200,
                            headers={"Location": url})

    async def ingest(self, request: Request) -> Response:
        """One item, a heartbeat or a batch: the engine parses the body and ingests it."""
        require_write(request, self.settings)
        media_type = request.headers.get("content-type", DEFAULT_ITEM_TYPE).split(";")[0].strip().lower()
        timestamp = request.headers.get("x-timestamp") or request.query_params.get("timestamp")
        summary = await self.workers.call(
            self.engine.ingest_body, request.path_params["name"], await request.body(), media_type, timestamp
        )
        return JSONResponse(summary, status_code=202)


#: what a stream name may be: it becomes part of URLs, IRIs and headers
STREAM_NAME = re.compile(r"[A-Za-z0-9._~-]{1,200}")


def _check_iri(field: str, value: object) -> None:
    """400 unless ``value`` is an absolute IRI a query could name."""
    problem = iri_problem(value)
    if problem:
        raise HTTPException(400, f"{field}: {value!r} is not an IRI: {problem}")


def _definition(name: str, body: bytes, url: str) -> StreamDefinition:
    """A stream definition from the PUT body (JSON; every field optional)."""
    try:
        spec = orjson.loads(body) if body.strip() else {}
    except orjson.JSONDecodeError as exc:
        raise HTTPException(400, f"the stream definition is not JSON: {exc}") from exc
    if not isinstance(spec, dict):
        raise HTTPException(400, "the stream definition must be a JSON object")
    unknown = set(spec) - {"iri", "timing", "timeless", "graph", "idle", "idle_lag_ms"}
    if unknown:
        raise HTTPException(400, f"unknown fields in the stream definition: {sorted(unknown)}")
    idle = spec.get("idle", "none")
    if idle not in IDLE_POLICIES:
        raise HTTPException(400, f"idle must be one of {IDLE_POLICIES}, not {idle!r}")
    lag = spec.get("idle_lag_ms", 1000)
    if not isinstance(lag, int) or isinstance(lag, bool) or lag < 0:
        raise HTTPException(400, "idle_lag_ms must be a non-negative integer")
    for key in ("iri", "graph"):
        if spec.get(key) is not None:
            _check_iri(key, spec[key])
    for key in ("timing", "timeless"):
        value = spec.get(key)
        if value is not None:
            if not isinstance(value, list):
                raise HTTPException(400, f"{key} must be a list of predicate IRIs")
            for predicate in value:
                _check_iri(key, predicate)
    return StreamDefinition(
        name=name,
        iri=IRI(spec.get("iri") or url),
        timing=frozenset(spec.get("timing") or ()),
        timeless=None if spec.get("timeless") is None else frozenset(spec["timeless"]),
        graph=IRI(spec["graph"]) if spec.get("graph") else None,
        idle=idle,
        idle_lag_ms=lag,
    )
