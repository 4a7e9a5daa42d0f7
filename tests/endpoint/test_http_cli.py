"""``rivulet serve`` as a user starts it: a subprocess on a loopback port."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "endpoint" / "demo" / "rivers.trig"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def served():
    """Start ``rivulet serve`` with extra options; returns (base URL, first line printed)."""
    processes = []

    def start(*options: str) -> tuple[str, str]:
        port = free_port()
        command = [sys.executable, "-m", "endpoint.cli", "serve", "--data", str(DEMO), "--port", str(port)]
        process = subprocess.Popen(
            [*command, *options], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        processes.append(process)
        banner = process.stdout.readline()
        for line in process.stderr:  # uvicorn logs there; the banner went to stdout
            if "Uvicorn running" in line:
                break
        return f"http://127.0.0.1:{port}", banner

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)


def test_serve_prints_the_url_and_answers_queries(served):
    url, banner = served()
    assert f"{url}/sparql" in banner and "87 triples" in banner
    response = httpx.get(url + "/sparql", params={"query": "ASK { GRAPH ?g { ?s ?p ?o } }"})
    assert response.json()["boolean"] is True


def test_serve_options_reach_the_server(served):
    url, _ = served("--read-only", "--timeout", "5", "--service-alias",
                    "http://example.org/sparql=http://127.0.0.1:9/none")
    update = httpx.post(url + "/sparql", data={"update": "CLEAR ALL"})
    assert update.status_code == 403
    failed = httpx.get(url + "/sparql", params={
        "query": "SELECT * { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"})
    assert failed.status_code == 502 and "http://example.org/sparql" in failed.text


def test_serve_with_several_processes_answers_from_the_shared_store(served):
    url, banner = served("--read-only", "--processes", "2")
    assert "87 triples" in banner
    query = {"query": "SELECT (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } }"}
    accept = {"Accept": "application/sparql-results+json"}
    deadline = time.monotonic() + 60  # the worker processes start after the port is bound
    while True:
        try:
            httpx.get(url + "/sparql", params=query, headers=accept)
            break
        except httpx.ConnectError:
            assert time.monotonic() < deadline, "no worker process answered within 60 s"
            time.sleep(0.2)
    for _ in range(20):  # connections go to either process; every one must answer from the data
        with httpx.Client() as client:
            answer = client.get(url + "/sparql", params=query, headers=accept)
        assert answer.status_code == 200
        assert int(answer.json()["results"]["bindings"][0]["n"]["value"]) > 0


def test_several_processes_need_read_only():
    command = [sys.executable, "-m", "endpoint.cli", "serve", "--data", str(DEMO), "--processes", "2"]
    finished = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    assert finished.returncode != 0
    assert "--read-only" in finished.stderr


def test_a_malformed_data_file_stops_the_start_with_its_line(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix ex: <http://example.org/> .\nex:a ex:b ex:c .\nex:a ex:b \"open .\n")
    command = [sys.executable, "-m", "endpoint.cli", "serve", "--data", str(bad), "--port", str(free_port())]
    finished = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    assert finished.returncode != 0
    assert "could not load the data" in finished.stderr and "line 3" in finished.stderr


@pytest.mark.parametrize("processes", [1, 2])
def test_the_copy_loaded_from_data_is_removed_when_the_server_stops(tmp_path, processes):
    """``--data`` without ``--store`` loads into a temporary store directory;
    a stop by SIGTERM (a service manager's) removes it, though uvicorn ends
    the process by that signal, which skips ``atexit``."""
    from tests.endpoint.rivulet_process import RivuletProcess

    options = ["--processes", "2", "--read-only"] if processes == 2 else []
    server = RivuletProcess("--data", str(DEMO), *options, env={"TMPDIR": str(tmp_path)})
    try:
        assert list(tmp_path.glob("rivulet-store-*/store")), "the store was not loaded into TMPDIR"
        deadline = time.monotonic() + 30
        while True:  # the workers of --processes start after the supervisor listens
            try:
                if httpx.get(server.url + "/sparql", params={"query": "ASK {}"}).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        server.stop()
    assert not list(tmp_path.glob("rivulet-store-*")), "".join(server.stderr_lines[-20:])
