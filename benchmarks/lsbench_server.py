"""A real uvicorn server holding the LSBench stored data, in a child process.

The HTTP benchmarks (``lsbench_latency``, ``ingest_throughput``) measure the
server as a client sees it: the client and the server must not share one
interpreter lock, so the server runs in its own process, started by
:func:`lsbench_server` and stopped when the ``with`` block ends. The child
generates the same stored data as the parent (same size, same seed) and loads
it before it listens; :func:`lsbench_server` returns once ``GET /streams``
answers.

    python -m benchmarks.lsbench_server --triples 1000000 --port 8000   # by hand
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from benchmarks.lsbench_data import DEFAULT_SEED, HISTORY_GRAPH, SOCIAL_GRAPH, LSBenchData, generate

REPO = Path(__file__).resolve().parent.parent
#: seconds the child may take to generate and load its data and start listening
STARTUP_TIMEOUT_S = 300


def load_store(data: LSBenchData):
    """The stored graphs in a fresh Store: social (read by FROM) and history."""
    from engine.api import Store  # late: the engine may be mid-change

    store = Store()
    store.add(data.social_triples(), graph=SOCIAL_GRAPH)
    store.add(data.history_triples(), graph=HISTORY_GRAPH)
    return store


def serve(triples: int, seed: int, port: int) -> None:
    """The child process: the same stored data, served by uvicorn on loopback."""
    import uvicorn

    from endpoint.app import create_app

    store = load_store(generate(triples, seed))
    uvicorn.run(create_app(store), host="127.0.0.1", port=port, log_level="warning")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(client: httpx.Client, server: subprocess.Popen) -> None:
    """Poll ``GET /streams`` until it answers; fail if the child exits or takes too long."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}")
        try:
            if client.get("/streams").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"the server did not come up in {STARTUP_TIMEOUT_S} s")


@contextmanager
def lsbench_server(triples: int, seed: int) -> Iterator[tuple[str, subprocess.Popen]]:
    """``(base URL, child process)`` of a server up and holding the data; stopped on exit."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "benchmarks.lsbench_server", "--port", str(port),
                               "--triples", str(triples), "--seed", str(seed)], cwd=REPO)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=60.0) as client:
            wait_until_up(client, server)
        yield base, server
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    serve(args.triples, args.seed, args.port)


if __name__ == "__main__":
    main()
