"""Real clients against real servers.

The ``serve`` fixture of tests/endpoint is re-exported (a uvicorn server in a
thread, with the server's own HTTP protocol). ``recorded`` starts one whose
requests are kept (tests/clients/recorder.py), so that a failing test shows
the exact request the client sent. ``rivulet`` starts the real command line,
``rivulet serve ...``, as a subprocess, for what only the CLI configures.
``server_warnings`` lists what the server logged at WARNING or above.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from endpoint.settings import Settings
from engine.api import Store
from tests.clients.recorder import Recorder
from tests.endpoint.conftest import (  # noqa: F401  (fixtures, re-exported for this directory)
    DEMO,
    Server,
    _quiet_rdflib,
    _stopping,
    serve,
)

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Recorded:
    """A running server and what it received."""

    url: str
    recorder: Recorder

    @property
    def sparql(self) -> str:
        return f"{self.url}/sparql"

    def show(self, path: str | None = None) -> str:
        return self.recorder.show(path)


@pytest.fixture
def recorded(request) -> Iterator[Callable[..., Recorded]]:
    """Factory: ``recorded(store=None, **settings) -> Recorded``; the demo
    dataset when no store is given. Stopped like ``serve``'s servers."""
    stopping = request.getfixturevalue("_stopping")
    servers: list[Server] = []

    def start(store: Store | None = None, **settings) -> Recorded:
        if store is None:
            store = Store()
            store.load(DEMO)
        server = Server(store, Settings(**settings))
        recorder = Recorder(server.server.config.app)
        server.server.config.app = recorder  # read when the server starts
        server.start()
        servers.append(server)
        return Recorded(server.url, recorder)

    yield start
    for server in servers:
        server.server.should_exit = True
    stopping.extend(servers)


@pytest.fixture
def server_warnings(caplog) -> Callable[[], list[str]]:
    """``server_warnings()``: the WARNING (and worse) lines the servers of
    this test logged so far (uvicorn's and Rivulet's loggers)."""
    caplog.set_level(logging.WARNING)

    def lines() -> list[str]:
        return [f"{r.name}: {r.getMessage()}" for r in caplog.records
                if r.levelno >= logging.WARNING and r.name.startswith(("uvicorn", "rivulet", "endpoint"))]

    return lines


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class CommandLineServer:
    """``rivulet serve`` in a subprocess; ``log()`` is what it wrote to stderr so far."""

    url: str
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def rivulet(tmp_path) -> Iterator[Callable[..., CommandLineServer]]:
    """Factory: ``rivulet(*options) -> CommandLineServer`` runs ``rivulet serve
    --port P *options`` and waits (at most 60 s) until it answers."""
    started: list[CommandLineServer] = []

    def start(*options: str) -> CommandLineServer:
        port = free_port()
        log_path = tmp_path / f"rivulet-{port}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "endpoint.cli", "serve", "--port", str(port), *options],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        server = CommandLineServer(f"http://127.0.0.1:{port}", process, log_path)
        started.append(server)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"rivulet serve exited with {process.returncode}:\n{server.log()}")
            try:
                httpx.get(f"{server.url}/streams", timeout=1)
                return server
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"rivulet serve did not answer within 60 s:\n{server.log()}")

    yield start
    for server in started:
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=10)
