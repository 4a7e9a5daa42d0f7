"""The compose bulk load and the read-only server of its store, run here.

The ``load`` service's own script (its ``sh -c`` command, after compose's
substitution) runs under this machine's ``sh`` with the service's
environment, the container's folders mapped to temporary ones and this
environment's ``rivulet`` first on PATH: a real Spark job in local mode on a
small N-Triples file. Run a second time it must leave the store alone (the
service is one-shot, and compose may start it again). Then the ``reader``
service's command serves the store: it answers with the triples loaded,
refuses writes, and changes none of the store's files.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from engine.api import Store
from tests.deploy import manifests
from tests.deploy.commands import container_argv
from tests.deploy.local_run import RIVULET, LocalServer, environment, free_port, localised

PEOPLE = Path(__file__).resolve().parents[1] / "loader" / "data" / "people.nt"
LOAD_SECONDS = 180
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def _mounts(service: dict, root: Path) -> dict[str, str]:
    """Each folder the service mounts, mapped to a new local folder under ``root``."""
    local = {}
    for mount in service["volumes"]:
        target = mount.split(":")[1]
        local[target] = str(root / target.strip("/").replace("/", "_"))
        Path(local[target]).mkdir(parents=True, exist_ok=True)
    return local


def _moved(script: str, mounts: dict[str, str]) -> str:
    """The script with each container folder (a whole path component) replaced by its local one."""
    for inside, outside in mounts.items():
        script = re.sub(rf"(?<![\w/]){re.escape(inside)}(?=[/\"'\s;]|$)", outside, script)
    return script


def _files(directory: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(directory)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(directory.rglob("*")) if p.is_file()}


def test_the_compose_load_writes_a_store_that_the_reader_serves(tmp_path):
    if shutil.which("java") is None:
        reason = "no java on PATH: Spark cannot run (the image installs openjdk-17-jre-headless)"
        print(reason)
        pytest.skip(reason)
    services = manifests.compose()["services"]
    load, reader = services["load"], services["reader"]
    mounts = _mounts(load, tmp_path)
    shutil.copy(PEOPLE, mounts["/import"])
    entry = container_argv(manifests.image().entrypoint, [], load["entrypoint"], load["command"])
    assert entry[:2] == ["sh", "-c"]
    script = _moved(entry[2], mounts)
    env = environment({**load["environment"], "PATH": f"{RIVULET.parent}{os.pathsep}{os.environ['PATH']}",
                       "PYSPARK_PYTHON": sys.executable})

    def run_load() -> subprocess.CompletedProcess:
        return subprocess.run(["sh", "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=LOAD_SECONDS, check=False)

    first = run_load()
    assert first.returncode == 0, f"{first.stdout}\n{first.stderr}"
    store = Path(mounts["/srv/stores"]) / load["environment"]["RIVULET_STORE"]
    assert (store / "manifest.json").is_file(), first.stdout
    written = _files(store)
    again = run_load()
    assert again.returncode == 0 and "not loaded again" in again.stdout, f"{again.stdout}\n{again.stderr}"
    assert _files(store) == written

    port = free_port()
    reader_mounts = {m.split(":")[1]: mounts[m.split(":")[1]] for m in reader["volumes"]}
    argv = localised(container_argv(manifests.image().entrypoint, [], None, reader["command"]),
                     {"--host": "127.0.0.1", "--port": str(port)}, reader_mounts)
    server = LocalServer(argv, environment({}), tmp_path, port)
    expected = Store()
    expected.load(PEOPLE)
    try:
        server.start()
        with httpx.Client(base_url=server.url, timeout=30) as http:
            answer = http.get("/sparql", params={"query": COUNT},
                              headers={"Accept": "application/sparql-results+json"}).json()
            assert int(answer["results"]["bindings"][0]["n"]["value"]) == len(expected) > 0
            update = http.post("/sparql", data={"update": "INSERT DATA { <http://e/a> <http://e/b> 1 }"})
            assert update.status_code == 403, "the reader is read-only"
    finally:
        server.stop()
    assert _files(store) == written, "serving the store wrote to it (it is mounted read-only)"
