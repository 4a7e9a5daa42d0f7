"""Stopping ``rivulet serve`` on SIGTERM (or SIGINT) within its grace period, whatever runs.

uvicorn stops accepting connections at the signal and waits for the
requests in flight. The signal also begins the server's
:class:`~engine.store.Shutdown`: a query, update or window still being
evaluated ``grace`` seconds later stops at its next checkpoint (its request
is answered 503), which frees its worker thread and its locks. uvicorn
cancels whatever is left :data:`ANSWER_SECONDS` later, then ``on_stopped``
runs (it closes the data directory, :class:`CloseOnce`) before the process
ends; uvicorn then raises the signal again, so the exit status says which
signal stopped it.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from collections.abc import Callable
from types import FrameType

import uvicorn
from starlette.applications import Starlette

from endpoint.collector import settle_after_start_up
from endpoint.connection_balance import ConnectionBalance
from engine.store import Shutdown

log = logging.getLogger("rivulet.endpoint")

#: seconds after the grace period for the requests whose evaluation stopped to be answered
ANSWER_SECONDS = 2.0
#: uvicorn's exit status when the server could not start
STARTUP_FAILURE = 3
#: seconds the data directory waits for a write under way before it is closed
QUIET_SECONDS = 5.0


class GracefulServer(uvicorn.Server):
    """uvicorn's server, beginning the application's shutdown at the signal
    and calling ``on_stopped`` once it has stopped serving."""

    def __init__(self, config: uvicorn.Config, stopping: Shutdown, grace: float,
                 on_stopped: Callable[[], None], balance: ConnectionBalance | None = None) -> None:
        super().__init__(config)
        self.stopping = stopping
        self.grace = grace
        self._on_stopped = on_stopped
        #: ``--processes``: connections other processes hand to this one are served too
        self.balance = balance

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # a signal handler: Shutdown.begin only stores a number
        self.stopping.begin(self.grace)
        super().handle_exit(sig, frame)

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets)
        if sockets is not None and self.started:  # uvicorn says where it listens only when it binds
            self._log_started_message(sockets)
        if self.balance is not None and self.started:
            self.balance.receive(asyncio.get_running_loop(), self._serve_handed)

    async def _serve_handed(self, connection: socket.socket) -> None:
        """Serve a connection another process accepted, as uvicorn serves its own."""
        config = self.config

        def adopted() -> asyncio.Protocol:
            protocol = config.http_protocol_class(config=config, server_state=self.server_state,
                                                  app_state=self.lifespan.state)
            protocol.adopted = True
            return protocol

        await asyncio.get_running_loop().connect_accepted_socket(adopted, sock=connection)

    async def shutdown(self, sockets=None) -> None:
        if self.balance is not None:
            self.balance.close()  # the other processes hand nothing more to this one
        try:
            await super().shutdown(sockets)
        finally:
            self._on_stopped()


def serve_until_stopped(app: Starlette, grace: float, on_stopped: Callable[[], None],
                        sockets: list[socket.socket] | None = None,
                        balance: ConnectionBalance | None = None, **options) -> None:
    """Serve ``app`` (made by :func:`endpoint.app.create_app`) with uvicorn
    ``options`` until a signal stops it, within ``grace`` seconds for the
    evaluations then running; exit status 3 if it could not start.
    ``sockets``: listening sockets to accept on (instead of binding ``options``'
    host and port), shared by several server processes, which spread their
    connections by ``balance`` (:mod:`endpoint.connection_balance`)."""
    options.setdefault("timeout_graceful_shutdown", grace + ANSWER_SECONDS)
    server = GracefulServer(uvicorn.Config(app, **options), app.state.shutdown, grace, on_stopped, balance)
    settle_after_start_up()
    server.run(sockets=sockets)
    if not server.started:
        sys.exit(STARTUP_FAILURE)


class CloseOnce:
    """Closes the server's durable state once (``close``, of the data
    directory ``data`` or of the cluster around it; nothing if None), when it
    has stopped serving: at once if no write is under way, else once it has
    ended. A write still running after :data:`QUIET_SECONDS` (none should
    be: evaluations stop at the grace period) is left as a crash would leave
    it, and the directory is not closed under it: recovery checks the log's
    tail at the next start."""

    def __init__(self, data, close: Callable[[], None] | None) -> None:
        self.data = data
        self._close = close
        self._done = False

    def __call__(self) -> None:
        if self._done or self.data is None or self._close is None:
            return
        self._done = True
        for lock in (self.data.engine.lock(), self.data.store.quad_store.write_lock()):
            if not lock.acquire(timeout=QUIET_SECONDS):
                log.warning("a write was still running %g s after the server stopped serving; the data "
                            "directory is left for recovery to check at the next start", QUIET_SECONDS)
                return
            lock.release()
        self._close()
        log.info("data directory closed: every acknowledged write is on disk")
