"""A coordinator started with another data directory on a Ray cluster whose
shards serve a store is refused at once, with both store IDs and what to do
(exit status 1, no traceback), whatever shard count it asks for; it writes
nothing (no shard made, none changed, no log of its own), and the first
store's coordinator keeps working."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import ray

from engine.cluster.ray_shards import NAMESPACE, actor_name
from tests.endpoint.rivulet_process import RivuletProcess

EX = "http://example.org/identity/"
SHARDS = 3
#: where a cluster's data directory keeps its store's ID
STORE_ID_FILE = "store-id"
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def serve(address: str, data_dir: Path, shards: int) -> RivuletProcess:
    return RivuletProcess("--cluster", address, "--shards", str(shards), "--data-dir", str(data_dir),
                          "--transport", "ray", "--sync", "none")


def insert(url: str, n: int) -> httpx.Response:
    return httpx.post(f"{url}/sparql", data={"update": f"INSERT DATA {{ <{EX}s> <{EX}p> {n} }}"}, timeout=60)


def count(url: str) -> int:
    answer = httpx.get(f"{url}/sparql", params={"query": COUNT}, timeout=60,
                       headers={"Accept": "application/sparql-results+json"})
    assert answer.status_code == 200, answer.text
    return int(answer.json()["results"]["bindings"][0]["n"]["value"])


def store_id(data_dir: Path) -> str:
    return (data_dir / STORE_ID_FILE).read_text().strip()


def versions() -> list[int]:
    """Each shard's version, asked of the actors themselves."""
    actors = [ray.get_actor(actor_name(k), namespace=NAMESPACE) for k in range(SHARDS)]
    return [info["version"] for info in ray.get([actor.info.remote() for actor in actors], timeout=60)]


def test_a_coordinator_of_another_store_is_refused_and_changes_nothing(ray_address, tmp_path):
    first_dir = tmp_path / "first"
    first = serve(ray_address, first_dir, SHARDS)
    try:
        assert insert(first.url, 1).status_code == 204
        before = versions()
        for n, shards in enumerate((SHARDS, SHARDS + 1)):
            other_dir = tmp_path / f"other-{n}"
            other = serve(ray_address, other_dir, shards)
            try:
                if any("Uvicorn running" in line for line in other.stderr_lines):
                    written = insert(other.url, 0).status_code
                    pytest.fail(f"a coordinator of another store was let in (a write to it: {written})")
                assert other.process.wait(timeout=60) == 1
            finally:
                log = "".join(other.stop())
            own = store_id(first_dir)
            assert "Traceback" not in log, log
            assert f"serve store {own} (data directory {first_dir.resolve()})" in log, log
            assert f"is store {store_id(other_dir)}" in log, log
            assert f"--data-dir {first_dir.resolve()}" in log and "Nothing was changed" in log, log
            # nothing of it on the Ray cluster or on disk beside its ID
            with pytest.raises(ValueError):
                ray.get_actor(actor_name(SHARDS), namespace=NAMESPACE)
            assert sorted(p.name for p in other_dir.iterdir()) == [STORE_ID_FILE]
            assert versions() == before
            assert insert(first.url, 2 + n).status_code == 204  # the first store's coordinator goes on
            before = versions()
            assert before == [before[0]] * SHARDS
        assert count(first.url) == 3
    finally:
        first.stop()
