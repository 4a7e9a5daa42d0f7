"""``rivulet cluster up`` as an operator runs it: a real Ray local cluster,
three shard processes and the endpoint, over HTTP; stopped and started
again on the same data directory, it answers with what it acknowledged,
new terms included (the coordinator's log gives them their IDs back), and
its streams and continuous queries are there, the query's window numbers
going on where they stopped."""

from __future__ import annotations

import httpx

from tests.endpoint.rivulet_process import RivuletProcess

EX = "http://example.org/"
SELECT = f"SELECT ?o WHERE {{ <{EX}river> <{EX}name> ?o }}"


REGISTRATION = (f"REGISTER QUERY levels AS SELECT (MAX(?cm) AS ?peak) FROM STREAM <{EX}gauges> "
                f"[RANGE 1s STEP 1s] WHERE {{ ?gauge <{EX}levelCm> ?cm }}")


def post_readings(url: str, readings: list[tuple[int, str | None]]) -> dict:
    """Post gauge readings (a reading of None is a heartbeat) as one batch; its summary."""
    lines = [f'{ts} <{EX}gauge> <{EX}levelCm> "{cm}"^^<http://www.w3.org/2001/XMLSchema#integer> .'
             if cm is not None else str(ts) for ts, cm in readings]
    answer = httpx.post(f"{url}/streams/gauges", content="\n".join(lines), timeout=60,
                        headers={"Content-Type": "application/x-timestamped-ntriples"})
    assert answer.status_code == 202, answer.text
    return answer.json()


def sample(metrics: str, name: str) -> float:
    """The value of the sample ``name`` (with its labels) in a /metrics page."""
    return next(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines() if line.startswith(name + " "))


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
        declared = httpx.put(f"{server.url}/streams/gauges", json={"iri": f"{EX}gauges"}, timeout=60)
        assert declared.status_code == 201, declared.text
        registered = httpx.post(f"{server.url}/queries", content=REGISTRATION, timeout=60,
                                headers={"Content-Type": "application/sparql-query"})
        assert registered.status_code == 201, registered.text
        fired = post_readings(server.url, [(1000, "12"), (1500, "14"), (2000, None)])
        assert fired["windows_fired"] == 1  # [1000, 2000)
    finally:
        log = server.stop()
    assert any("cluster of 3 shards" in line for line in log), "".join(log)

    again = RivuletProcess(*options, command=("cluster", "up"))
    try:
        assert names(again.url) == ["Rhein", "Rhine", "Rijn"]
        count = httpx.get(f"{again.url}/sparql", params={"query": "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"},
                          headers={"Accept": "application/sparql-results+json"}, timeout=60)
        assert count.json()["results"]["bindings"][0]["n"]["value"] == "4"
        query = httpx.get(f"{again.url}/queries/levels", timeout=60).json()
        assert query["windows_reported"] == 1
        fired = post_readings(again.url, [(2500, "16"), (3000, None)])
        assert fired["windows_fired"] == 1  # [2000, 3000), the second window
        assert httpx.get(f"{again.url}/queries/levels", timeout=60).json()["windows_reported"] == 2
        metrics = httpx.get(f"{again.url}/metrics", timeout=60).text
        assert "rivulet_cluster_shards 3.0" in metrics
        assert 'rivulet_cluster_transport{fork_join="tcp",in_place="tcp"} 1.0' in metrics
        # the queries' steps, and the batch after the restart
        assert sample(metrics, 'rivulet_cluster_shard_calls_total{kind="read",path="tcp"}') > 0
        assert sample(metrics, "rivulet_cluster_commits_total") >= 1
    finally:
        log = again.stop()
    assert any("the cluster has data already" in line for line in log), "".join(log)
