"""Real uvicorn servers on loopback for the HTTP tests.

``serve(store, **settings)`` starts one in a thread on a free 127.0.0.1
port and returns its base URL; every server a test started is told to stop
when the test ends. Starting one takes a few milliseconds, so each test gets
its own store and nothing leaks from one test to the next. uvicorn notices
the stop within 0.1 s; the threads are joined once, at the end of the session,
so that tests do not wait for it.
"""

from __future__ import annotations

import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import uvicorn

from endpoint.app import create_app
from endpoint.http_protocol import HttpProtocol
from endpoint.settings import Settings
from engine.api import Store

DEMO = Path(__file__).resolve().parents[2] / "endpoint" / "demo" / "rivers.trig"


class ServerProtocol(HttpProtocol):
    """The server's protocol as ``rivulet serve`` runs it without
    ``--access-log``. (pytest's log capture gives uvicorn's access logger
    handlers, and uvicorn then logs every request, which closes the quick
    lane of endpoint/quick_lane.py: every test would miss it.)"""

    def connection_made(self, transport) -> None:
        self.access_log = False
        super().connection_made(transport)


class WholePathProtocol(HttpProtocol):
    """The server's protocol with its quick lane closed: every request runs
    the ASGI application, as with ``--access-log``."""

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._answerer = None


class Server:
    """One uvicorn server running in a background thread."""

    def __init__(self, store: Store, settings: Settings, quick_lane: bool = True) -> None:
        self.store = store
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when
        # the listening socket says it is TCP; without it every response waits ~40 ms
        # for a delayed ACK (Nagle)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        # the server's own HTTP protocol (see endpoint/http_protocol.py), as `rivulet serve` runs it
        config = uvicorn.Config(create_app(store, settings), log_config=None, access_log=False,
                                lifespan="off", timeout_graceful_shutdown=1,
                                http=ServerProtocol if quick_lane else WholePathProtocol)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.002)

    def join(self) -> None:
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture(autouse=True)
def _quiet_rdflib() -> Iterator[None]:
    """rdflib's TriG, N-Quads and JSON-LD parsers warn about rdflib's own
    deprecated classes; that is not ours to fix, and it hides real warnings."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="rdflib")
        yield


@pytest.fixture(scope="session")
def _stopping() -> Iterator[list[Server]]:
    servers: list[Server] = []
    yield servers
    for server in servers:
        server.join()


@pytest.fixture
def serve(_stopping) -> Iterator[Callable[..., str]]:
    """Factory: ``serve(store=None, **settings) -> base URL``."""
    servers: list[Server] = []

    def start(store: Store | None = None, **settings) -> str:
        server = Server(store if store is not None else Store(), Settings(**settings))
        server.start()
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.server.should_exit = True
    _stopping.extend(servers)


@pytest.fixture
def demo_store() -> Store:
    store = Store()
    store.load(DEMO)
    return store


@pytest.fixture
def demo(serve, demo_store) -> str:
    """Base URL of a server holding the demo dataset."""
    return serve(demo_store)
