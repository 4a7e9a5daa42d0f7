"""Server settings, set by ``rivulet serve`` options or by code that embeds the app."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """How the HTTP service behaves; the defaults suit a local, open endpoint."""

    #: seconds a query may run before it is cancelled and answered 503
    query_timeout: float = 30.0
    #: engine calls (queries, updates, graph store writes) running at once;
    #: more wait for a free worker thread
    workers: int = 8
    #: refuse every update and graph store write (403)
    read_only: bool = False
    #: when set, writes need ``Authorization: Bearer <token>`` (else 401)
    update_token: str | None = None
    #: origins allowed by CORS; empty means no CORS headers at all
    cors_origins: tuple[str, ...] = ()
    #: seconds between heartbeat comments on Server-Sent Events streams
    sse_ping: float = 15.0
    #: largest request body accepted, in bytes (413 above it)
    max_body_bytes: int = 64 * 2**20
    #: most rows one step of a query or update may produce (503 above it)
    max_rows: int | None = 10_000_000
    #: hosts and networks (CIDR) SERVICE and LOAD may call although they are
    #: not public addresses (loopback, private, link-local are refused otherwise)
    outbound_allowed: tuple[str, ...] = ()
    #: whether SERVICE may call other endpoints at all
    service: bool = True
    #: the server's public base URL (behind a proxy); None: the address
    #: clients connect to. Never the request's Host header.
    base_url: str | None = None
    #: queries naming no dataset read the merge of every graph (the default
    #: graph and all named graphs) as their default graph; updates are unchanged
    union_default_graph: bool = False
