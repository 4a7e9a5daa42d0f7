"""A Ray cluster started by hand, as docs/operations.md tells an operator
("On several machines", "One machine, kept on loopback"): ``ray start --head``
on 127.0.0.1 with a token of its own, then ``rivulet serve --cluster
HOST:PORT`` from a shell whose environment has no ``RAY_AUTH_MODE`` (this
test session's Ray sets it for its own children, which would hide the
problem), then ``rivulet cluster down`` for the shard actors the stopped
coordinator left behind.

The head runs in a process group of its own (``ray start --block``), in a
temporary folder of its own, on ports of its own, and is ended by that
group's id: nothing of another Ray on the machine is touched.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from tests.endpoint.rivulet_process import REPO, RivuletProcess, free_port

EX = "http://example.org/"
START_SECONDS = 90


def _clean_environment(token_path: Path) -> dict[str, str]:
    """This process's variables without Ray's, and the head's token file."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    return {**env, "RAY_AUTH_TOKEN_PATH": str(token_path), "PYTHONPATH": str(REPO)}


class RayHead:
    """``ray start --head --block`` on loopback, stopped by its process group."""

    def __init__(self, environment: dict[str, str]) -> None:
        ray = Path(sys.executable).with_name("ray")
        if not ray.exists():
            pytest.skip("the ray command is not installed beside this Python")
        # short: Ray's socket paths live under it and must fit in 107 bytes
        self.temp = Path(tempfile.mkdtemp(prefix="rh", dir="/tmp"))
        self.address = f"127.0.0.1:{free_port()}"
        self.process = subprocess.Popen(
            [str(ray), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
             f"--port={self.address.rsplit(':', 1)[1]}",
             "--include-dashboard=false", "--num-cpus=2", "--disable-usage-stats", f"--temp-dir={self.temp}"],
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        self.output: list[str] = []
        deadline = time.monotonic() + START_SECONDS
        for line in self.process.stdout:
            self.output.append(line)
            if "Ray runtime started" in line:
                return
            if time.monotonic() > deadline:
                break
        self.stop()
        raise RuntimeError("ray start --head did not start:\n" + "".join(self.output))

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        shutil.rmtree(self.temp, ignore_errors=True)


def _rivulet(environment: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "endpoint.cli", *args], cwd=REPO, env=environment,
                          capture_output=True, text=True, timeout=180)


def test_a_coordinator_joins_a_token_cluster_by_address_and_cluster_down_removes_its_shards(tmp_path):
    token = tmp_path / "auth_token"
    token.write_text(secrets.token_hex(32))
    environment = _clean_environment(token)
    data = tmp_path / "rivers.ttl"
    data.write_text(f'<{EX}river> <{EX}name> "Rhine" .\n<{EX}river> <{EX}length> 1233 .\n'
                    f'<{EX}river> <{EX}name> "Rhine" .\n')  # a repeated statement: 2 triples
    head = RayHead(environment)
    try:
        started = time.monotonic()
        server = RivuletProcess("--cluster", head.address, "--shards", "2", "--data-dir", str(tmp_path / "c"),
                                "--data", str(data), "--host", "127.0.0.1", "--sync", "none",
                                "--log-format", "json", environment=environment)
        try:
            assert time.monotonic() - started < 60, "the coordinator waited on Ray's authentication"
            query = f"SELECT ?n {{ <{EX}river> <{EX}name> ?n }}"
            answer = httpx.get(f"{server.url}/sparql", params={"query": query},
                               headers={"Accept": "text/csv"}, timeout=60)
            assert answer.text.split() == ["n", "Rhine"]
        finally:
            log = "".join(server.stop())
        assert "InvalidAuthToken" not in log
        assert " inf us" not in log and "in-place reads: none" in log, log
        # the start log counts what the store holds, as the banner does (not the statements read)
        assert "loaded 2 triples (3 statements read) from" in log and "Rivulet: 2 triples;" in log, log

        removed = _rivulet(environment, "cluster", "down", "--cluster", head.address)
        assert removed.returncode == 0, removed.stderr
        assert removed.stdout.strip() == "removed 2 shard actor(s): rivulet-shard-0, rivulet-shard-1"
        again = _rivulet(environment, "cluster", "down", "--cluster", head.address)
        assert again.stdout.strip() == "no shard actors on this Ray cluster", again.stderr
    finally:
        head.stop()
