"""``rivulet serve --processes N``: keep-alive connections end up spread
evenly over the processes, whichever process the kernel gave each one to
(:mod:`endpoint.connection_balance`), and a connection handed from one
process to another is served as any other.

Which process serves a connection is read from ``/proc``: the server-side
socket of the client's port in ``/proc/net/tcp``, and the process of the
server's tree holding a descriptor of that socket."""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
import urllib.parse
from collections import Counter
from pathlib import Path

import pytest

from tests.endpoint.conftest import DEMO
from tests.endpoint.rivulet_process import RivuletProcess

PROCESSES = 3
QUERY = "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"

if not Path("/proc/net/tcp").exists():  # pragma: no cover - Linux only
    pytest.skip("needs /proc/net/tcp to tell which process holds a connection", allow_module_level=True)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    directory = tmp_path_factory.mktemp("balance") / "data"
    server = RivuletProcess("--data-dir", str(directory), "--data", str(DEMO), "--processes", str(PROCESSES))
    deadline = time.monotonic() + 60
    while sum("Application startup complete" in line for line in server.stderr_lines) < PROCESSES:
        assert time.monotonic() < deadline, "".join(server.stderr_lines)
        time.sleep(0.05)
    yield server
    server.stop()


def descendants(root: int) -> list[int]:
    """``root`` and every process under it (readers are the fork server's children)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            parents.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += parents.get(pid, [])
    return found


def holder(server_port: int, client_port: int, pids: list[int]) -> int | None:
    """The process holding the server's end of the connection from ``client_port``."""
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1].split(":")[1], fields[2].split(":")[1]
        if int(local, 16) == server_port and int(remote, 16) == client_port:
            inode = fields[9]
    if inode is None:
        return None
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]":
                    return pid
        except OSError:
            continue
    return None


def connect_and_ask(url: str) -> http.client.HTTPConnection:
    """A keep-alive connection that has been answered once (so it is served somewhere)."""
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    ask(connection)
    return connection


def ask(connection: http.client.HTTPConnection) -> int:
    connection.request("GET", "/sparql?" + urllib.parse.urlencode({"query": QUERY}),
                       headers={"Accept": "application/sparql-results+json"})
    answer = connection.getresponse()
    body = answer.read()
    assert answer.status == 200, body[:300]
    return int(json.loads(body)["results"]["bindings"][0]["n"]["value"])


def spread(served: RivuletProcess, connections: list[http.client.HTTPConnection]) -> Counter:
    port = int(served.url.rsplit(":", 1)[1])
    pids = descendants(served.process.pid)
    holders = [holder(port, c.sock.getsockname()[1], pids) for c in connections]
    assert None not in holders
    return Counter(holders)


def test_connections_opened_one_after_another_are_spread_evenly(served):
    connections = [connect_and_ask(served.url) for _ in range(2 * PROCESSES)]
    try:
        counts = spread(served, connections)
        assert sorted(counts.values()) == [2] * PROCESSES, counts
        # every connection, handed on or not, goes on answering
        assert len({ask(c) for c in connections for _ in range(3)}) == 1
    finally:
        for c in connections:
            c.close()


def test_connections_opened_at_once_are_spread(served):
    time.sleep(0.2)  # the previous test's connections counted out
    connections: list[http.client.HTTPConnection] = []
    start = threading.Barrier(4 * PROCESSES)

    def open_one() -> None:
        start.wait()
        connections.append(connect_and_ask(served.url))

    threads = [threading.Thread(target=open_one) for _ in range(4 * PROCESSES)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert len(connections) == 4 * PROCESSES
        counts = spread(served, connections)
        assert len(counts) == PROCESSES and max(counts.values()) - min(counts.values()) <= 2, counts
        assert len({ask(c) for c in connections}) == 1
    finally:
        for c in connections:
            c.close()
