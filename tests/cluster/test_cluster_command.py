"""``rivulet cluster up`` as an operator runs it: a real Ray local cluster,
three shard processes and the endpoint, over HTTP; stopped and started
again on the same data directory, it answers with what it acknowledged,
new terms included (the coordinator's log gives them their IDs back)."""

from __future__ import annotations

import httpx

from tests.endpoint.rivulet_process import RivuletProcess

EX = "http://example.org/"
SELECT = f"SELECT ?o WHERE {{ <{EX}river> <{EX}name> ?o }}"


def names(url: str) -> list[str]:
    answer = httpx.get(f"{url}/sparql", params={"query": SELECT},
                       headers={"Accept": "application/sparql-results+json"}, timeout=60)
    assert answer.status_code == 200, answer.text
    return sorted(b["o"]["value"] for b in answer.json()["results"]["bindings"])


def test_cluster_up_serves_sharded_data_and_keeps_writes_across_restarts(tmp_path):
    data = tmp_path / "rivers.ttl"
    data.write_text(f'<{EX}river> <{EX}name> "Rhine" .\n<{EX}river> <{EX}length> 1233 .\n')
    options = ("--shards", "3", "--data-dir", str(tmp_path / "cluster"), "--data", str(data),
               "--sync", "none")
    server = RivuletProcess(*options, command=("cluster", "up"))
    try:
        assert names(server.url) == ["Rhine"]
        update = httpx.post(f"{server.url}/sparql", data={
            "update": f'INSERT DATA {{ <{EX}river> <{EX}name> "Rhein"@de, "Rijn"@nl }}'}, timeout=60)
        assert update.status_code == 204, update.text
        assert names(server.url) == ["Rhein", "Rhine", "Rijn"]
    finally:
        log = server.stop()
    assert any("cluster of 3 shards" in line for line in log), "".join(log)

    again = RivuletProcess(*options, command=("cluster", "up"))
    try:
        assert names(again.url) == ["Rhein", "Rhine", "Rijn"]
        count = httpx.get(f"{again.url}/sparql", params={"query": "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"},
                          headers={"Accept": "application/sparql-results+json"}, timeout=60)
        assert count.json()["results"]["bindings"][0]["n"]["value"] == "4"
    finally:
        log = again.stop()
    assert any("the cluster has data already" in line for line in log), "".join(log)
