"""Fork-join steps over TCP: a query step sent straight to the shards' processes.

A step of a query (match a pattern for a column of bound keys, count a
pattern's constants, read a window's rows) is a method of the shard server
and its arguments. Through Ray, each costs an actor call (about 0.7 ms here,
1.8 ms for three shards at once); over a connection the coordinator keeps
open to each shard, one round trip (well under that). So read steps go this
way, and everything that changes a shard (commits, checkpoints) stays a Ray
call, with Ray's restarts and ordering.

:class:`TcpStepServer` runs in the shard's process beside its region server
and answers ``(method, args)`` requests with what ``handler(method, args)``
returns; :class:`TcpStepCaller` sends each shard its step, all before any
answer is read. Arguments and answers are written by
:mod:`~engine.cluster.transport.values` (no pickle); the framing, limits and
connection reuse are the region transport's (:mod:`engine.cluster.transport.tcp`).
An error on the shard comes back as :class:`StepFailed`, naming the
exception's class, so the caller can tell a retryable one from the others.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from engine.cluster.transport.base import RegionError
from engine.cluster.transport.listener import ThreadedListener
from engine.cluster.transport.tcp import TcpExchange, serve_requests
from engine.cluster.transport.values import decode, encode
from engine.cluster.transport.wire import (
    MAX_REQUEST_BYTES,
    REQUEST_HEADER,
    REQUEST_MAGIC,
    Buffer,
    RequestRefused,
)

#: the request kind of a step (gathers and region tables are 1 and 2)
KIND_STEP = 3


class StepFailed(RegionError):
    """The shard answered a step with an error: ``kind`` is the exception's
    class name on the shard, ``detail`` its message."""

    def __init__(self, shard: int | None, kind: str, detail: str) -> None:
        super().__init__(shard, f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class TcpStepServer:
    """Answers step requests with ``handler(method, args)`` (which refuses the
    methods it does not serve by raising :class:`RequestRefused`)."""

    def __init__(self, handler: Callable[[str, tuple], object], host: str = "127.0.0.1", port: int = 0,
                 *, max_request_bytes: int = MAX_REQUEST_BYTES) -> None:
        self._step = handler
        self.max_request_bytes = max_request_bytes
        self._listener = ThreadedListener(host, port, self._handle, "tcp-step-server")

    def start(self) -> tuple[str, int]:
        return self._listener.start()

    @property
    def address(self) -> tuple[str, int]:
        return self._listener.address

    def stop(self) -> None:
        self._listener.stop()

    def _handle(self, sock: socket.socket) -> None:
        serve_requests(sock, self.max_request_bytes, self._answer, "tcp-step-server")

    def _answer(self, kind: int, body: memoryview) -> list[Buffer]:
        """The step's answer; any error, the request's or the step's, is sent
        back named by its class (``"SnapshotGone: ..."``)."""
        try:
            if kind != KIND_STEP:
                raise RequestRefused(f"unknown request kind {kind}")
            request = decode(bytes(body))
            if not (isinstance(request, tuple) and len(request) == 2 and isinstance(request[0], str)
                    and isinstance(request[1], tuple)):
                raise RequestRefused("malformed step: not (method, arguments)")
            method, args = request
            return encode(self._step(method, args))
        except Exception as exc:
            raise RequestRefused(f"{type(exc).__name__}: {exc}") from exc


class TcpStepCaller(TcpExchange):
    """Sends steps to shards' :class:`TcpStepServer` s over pooled connections."""

    name = "tcp"

    def call(self, steps: dict[int, tuple[str, tuple]]) -> dict[int, object]:
        """Run ``method(*args)`` on each named shard, all at once; the answers
        by shard. A shard's error raises :class:`StepFailed`; an unreachable
        shard ``ConnectionError``."""
        request_id = self._request_id()
        payloads = {}
        for shard, step in steps.items():
            parts = encode(step)
            size = sum(memoryview(part).nbytes for part in parts)
            payloads[shard] = [REQUEST_HEADER.pack(REQUEST_MAGIC, KIND_STEP, request_id, size), *parts]
        try:
            return self.exchange(payloads, request_id, lambda _, body: decode(body))
        except StepFailed:
            raise
        except RegionError as exc:  # an error answer: the step's exception, by class name
            kind, _, detail = exc.reason.partition(": ")
            if not kind.isidentifier():  # refused before it was read (too large, not ours)
                kind, detail = RequestRefused.__name__, exc.reason
            raise StepFailed(exc.shard, kind, detail) from None
