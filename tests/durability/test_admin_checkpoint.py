"""``POST /admin/checkpoint`` on a real server: guarded like a write, and what it answers
is what the data directory then holds (a restart replays nothing)."""

from __future__ import annotations

import httpx

from tests.endpoint.rivulet_process import RivuletProcess

EX = "http://example.org/"
TOKEN = "s3cret-token"


def test_an_operator_takes_a_checkpoint_and_a_restart_replays_nothing(tmp_path):
    data_dir = tmp_path / "data"
    server = RivuletProcess("--data-dir", str(data_dir), "--update-token", TOKEN)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            insert = f'INSERT DATA {{ <{EX}a> <{EX}p> "one" . GRAPH <{EX}g> {{ <{EX}a> <{EX}p> 2 }} }}'
            assert http.post("/sparql", data={"update": insert}, headers=auth).status_code == 204
            refused = http.post("/admin/checkpoint")
            assert refused.status_code == 401 and "token" in refused.text
            wrong = http.post("/admin/checkpoint", headers={"Authorization": "Bearer wrong"})
            assert wrong.status_code == 401
            assert http.get("/admin/checkpoint").status_code == 405
            answer = http.post("/admin/checkpoint", headers=auth)
            assert answer.status_code == 200, answer.text
            report = answer.json()
            assert report["taken"] is True and report["triples"] == 2 and report["lsn"] >= 1
            assert report["seconds"] >= 0
            again = http.post("/admin/checkpoint", headers=auth).json()  # nothing logged since
            assert again["taken"] is False and again["lsn"] == report["lsn"]
        assert (data_dir / "checkpoints" / f"{report['lsn']:020d}" / "manifest.json").exists()
    finally:
        server.stop()
    restarted = RivuletProcess("--data-dir", str(data_dir), "--read-only")
    try:
        log = "".join(restarted.stderr_lines)
        assert f"checkpoint {report['lsn']}, 0 log records replayed" in log
        with httpx.Client(base_url=restarted.url, timeout=60) as http:
            refused = http.post("/admin/checkpoint")
            assert refused.status_code == 403 and "read-only" in refused.text
            rows = http.get("/sparql", params={"query": "SELECT (COUNT(*) AS ?n) { { ?s ?p ?o } UNION "
                                                        "{ GRAPH ?g { ?s ?p ?o } } }"},
                            headers={"Accept": "text/csv"})
            assert rows.text.split() == ["n", "2"]
    finally:
        restarted.stop()


def test_a_server_without_a_data_directory_has_nothing_to_checkpoint():
    server = RivuletProcess()
    try:
        answer = httpx.post(f"{server.url}/admin/checkpoint", timeout=60)
        assert answer.status_code == 409 and "--data-dir" in answer.text
    finally:
        server.stop()
