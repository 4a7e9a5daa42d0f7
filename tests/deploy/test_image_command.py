"""The image's entry command, run here as its container would run it.

The argv is the Containerfile's ENTRYPOINT + CMD; only the data directory
(a temporary folder instead of the volume), the address (127.0.0.1 and a
free port instead of 0.0.0.0:8000) and the program (this environment's
``rivulet``) differ. The catalog and the update token come from the
environment, as compose and Kubernetes give them, and the catalog is a real
PostgreSQL server (tests/postgres_server.py). The server is stopped with
SIGTERM, as a container is, and started again on the same volume: what was
written must come back, and the catalog's rows must be in PostgreSQL.
The image's HEALTHCHECK command is run against it too.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from sqlalchemy.engine import make_url

from endpoint.serve import CATALOG_VARIABLE, TOKEN_VARIABLE
from tests.deploy import manifests
from tests.deploy.commands import container_argv
from tests.deploy.local_run import LocalServer, environment, free_port, localised
from tests.postgres_server import running_postgres, why_no_postgres

TOKEN = "deploy-test-token"
EX = "http://example.org/deploy/"
STREAM_IRI = f"{EX}stream"
REGISTRATION = (f"REGISTER QUERY counter AS SELECT (COUNT(*) AS ?n) "
                f"FROM STREAM <{STREAM_IRI}> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}")
UPDATE = f"INSERT DATA {{ <{EX}rhine> <{EX}flowsInto> <{EX}northSea> }}"
SELECT = f"SELECT ?o WHERE {{ <{EX}rhine> <{EX}flowsInto> ?o }}"
HEALTHCHECK_SECONDS = 30


@pytest.fixture(scope="module")
def catalog_url() -> Iterator[str]:
    reason = why_no_postgres()
    if reason:
        print(f"skipping the image's command with a PostgreSQL catalog: {reason}")
        pytest.skip(reason)
    with running_postgres("rivulet_deploy") as url:
        yield url


def _healthcheck(port: int) -> int:
    """The exit code of the image's HEALTHCHECK command pointed at ``port`` (python: this one)."""
    command = [sys.executable, *manifests.image().healthcheck[1:]]
    command = [word.replace("127.0.0.1:8000/", f"127.0.0.1:{port}/") for word in command]
    assert any(f":{port}/" in word for word in command), "the health check's URL was not found"
    return subprocess.run(command, capture_output=True, timeout=HEALTHCHECK_SECONDS, check=False).returncode


def _rows(url: str, sql: str) -> list[tuple]:
    parts = make_url(url)
    with psycopg.connect(host=parts.host, port=parts.port, user=parts.username, dbname=parts.database) as db:
        return db.execute(sql).fetchall()


def test_the_entry_command_keeps_writes_across_a_restart_with_a_postgresql_catalog(tmp_path, catalog_url):
    built = manifests.image()
    (volume,) = built.volumes
    port = free_port()
    argv = localised(container_argv(built.entrypoint, built.cmd),
                     {"--host": "127.0.0.1", "--port": str(port)}, {volume: str(tmp_path / "volume")})
    server = LocalServer(argv, environment({CATALOG_VARIABLE: catalog_url, TOKEN_VARIABLE: TOKEN}),
                         tmp_path, port)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        server.start()
        assert _healthcheck(port) == 0
        with httpx.Client(base_url=server.url, timeout=30) as http:
            assert http.post("/sparql", data={"update": UPDATE}).status_code == 401, "the token is required"
            assert http.post("/sparql", data={"update": UPDATE}, headers=auth).status_code == 204
            assert http.put("/streams/rivers", json={"iri": STREAM_IRI}, headers=auth).status_code == 201
            response = http.post("/queries", content=REGISTRATION, headers={
                **auth, "Content-Type": "application/sparql-query"})
            assert response.status_code == 201, response.text
        # uvicorn finishes its shutdown, then ends by the signal it caught (what engines expect)
        assert server.stop() in (0, -signal.SIGTERM), f"SIGTERM did not end the server:\n{server.log_tail()}"
        assert _healthcheck(port) != 0, "the health check passes with no server"

        server.start()
        with httpx.Client(base_url=server.url, timeout=30) as http:
            answer = http.get("/sparql", params={"query": SELECT},
                              headers={"Accept": "application/sparql-results+json"}).json()
            assert [row["o"]["value"] for row in answer["results"]["bindings"]] == [f"{EX}northSea"]
            assert [s["name"] for s in http.get("/streams").json()["streams"]] == ["rivers"]
            assert [q["name"] for q in http.get("/queries").json()["queries"]] == ["counter"]
    finally:
        server.stop()
    assert _rows(catalog_url, "SELECT name FROM streams") == [("rivers",)]
    assert _rows(catalog_url, "SELECT name FROM queries WHERE dropped_lsn IS NULL") == [("counter",)]
    assert not (tmp_path / "volume" / "catalog.sqlite").exists(), "the catalog went to SQLite"
    assert (tmp_path / "volume" / "wal").is_dir()


def test_the_entry_command_logs_json_lines(tmp_path):
    """--log-format json: every line a container's log collector reads is one JSON object."""
    built = manifests.image()
    (volume,) = built.volumes
    port = free_port()
    argv = localised(container_argv(built.entrypoint, built.cmd),
                     {"--host": "127.0.0.1", "--port": str(port)}, {volume: str(tmp_path / "volume")})
    server = LocalServer(argv, environment({}), tmp_path, port)
    try:
        server.start()
        httpx.get(f"{server.url}/sparql", params={"query": "ASK {}"}, timeout=30)
    finally:
        server.stop()
    lines = server.output_lines()
    assert lines, "the server logged nothing"
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            raise AssertionError(f"not a JSON line in the server's output: {line!r}") from None
        assert isinstance(record, dict), line
