"""``rivulet serve`` as a user starts it: a subprocess on a loopback port."""

import os
import socket
import subprocess
import sys
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
