"""Pending windows keep their as-of view through ``POST /admin/checkpoint``,
a SIGKILL and a restart of the real server (``rivulet serve --data-dir``),
and in a backup of that directory started on its own.

Streams A and B absorb into graph ``g``; queries read both, with ``FROM <g>``.
Before the checkpoint, A runs ahead: one POST of 16,384 triples spread over
2.8 s (issue 26, item 3), then ``x1`` and ``x2`` at 10000; B brings ``x0`` at
1000 and its own copy of ``x1`` at 1500 (item 2). No window has closed when
the checkpoint is taken (B's clock holds them back), so every row A brought
must keep its timestamp in it. After the restart B's heartbeat at 4000
closes the windows, which must read ``g`` as of their close: ``x1`` from
1500 on, ``x2`` never, the large batch row by row.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from tests.endpoint.rivulet_process import REPO, RivuletProcess
from tests.endpoint.sse_client import SSEReader

EX = "http://example.org/"
BATCH = "application/x-timestamped-ntriples"
ROWS = 16_384
http = httpx.Client(timeout=60)


def big_stamp(i: int) -> int:
    return 100 + i * 2800 // ROWS


def post(url: str, name: str, lines: list[str]) -> None:
    response = http.post(f"{url}/streams/{name}", content="\n".join(lines), headers={"Content-Type": BATCH})
    assert response.status_code == 202, response.text


def windows(url: str, name: str, count: int) -> list[tuple[int, list[tuple]]]:
    reader = SSEReader(f"{url}/queries/{name}/events", last_event_id="0")
    events = reader.wait_for(count)
    reader.close()
    return [(e["window"]["end_ms"], sorted(tuple(b[v]["value"] for v in sorted(b))
                                          for b in e["results"]["results"]["bindings"])) for e in events]


def expected(closes: list[int]) -> tuple[list, list]:
    pairs = [(close, sorted([(EX + f"x{i}", EX + f"y{i}") for i, ts in ((0, 1000), (1, 1500)) if ts < close]))
             for close in closes]
    counts = [(close, [(str(sum(big_stamp(i) < close for i in range(ROWS))),)]) for close in closes]
    return pairs, counts


def fill(url: str) -> None:
    for name in ("A", "B"):
        response = http.put(f"{url}/streams/{name}", json={"iri": EX + name, "graph": EX + "g"})
        assert response.status_code == 201, response.text
    both = (f"FROM NAMED WINDOW <{EX}wa> ON <{EX}A> [RANGE PT1S STEP PT1S] "
            f"FROM NAMED WINDOW <{EX}wb> ON <{EX}B> [RANGE PT1S STEP PT1S]")
    for text in (f"REGISTER RSTREAM pairs AS SELECT ?x ?y FROM <{EX}g> {both} WHERE {{ ?x <{EX}rel> ?y }}",
                 f"REGISTER RSTREAM big AS SELECT (COUNT(*) AS ?n) FROM <{EX}g> {both} "
                 f"WHERE {{ ?x <{EX}big> ?y }}"):
        response = http.post(f"{url}/queries", content=text,
                             headers={"Content-Type": "application/sparql-query"})
        assert response.status_code == 201, response.text
    post(url, "A", [f"{big_stamp(i)} <{EX}b{i}> <{EX}big> <{EX}y{i % 7}> ." for i in range(ROWS)])
    post(url, "A", [f"10000 <{EX}x{i}> <{EX}rel> <{EX}y{i}> ." for i in (1, 2)])
    post(url, "B", [f"1000 <{EX}x0> <{EX}rel> <{EX}y0> .", f"1500 <{EX}x1> <{EX}rel> <{EX}y1> ."])


def test_pending_windows_keep_their_as_of_view_through_a_checkpoint_a_kill_and_a_backup(tmp_path):
    data, copy = tmp_path / "data", tmp_path / "copy"
    server = RivuletProcess("--data-dir", str(data))
    try:
        fill(server.url)
        answer = http.post(f"{server.url}/admin/checkpoint")
        assert answer.status_code == 200 and answer.json()["taken"], answer.text
    finally:
        server.process.kill()  # SIGKILL: nothing after the checkpoint is flushed or closed
        server.process.wait(timeout=30)
    backup = subprocess.run(
        [sys.executable, "-m", "endpoint.cli", "backup", "--data-dir", str(data), str(copy)],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert backup.returncode == 0, backup.stderr
    for directory in (data, copy):
        answers = run_after_restart(directory)
        closes = [close for close, _ in answers[0]]
        assert closes and closes[-1] == 4000
        assert answers == expected(closes), directory.name
    assert list(copy.glob("checkpoints/*/stream_layers.npz"))  # the backup copied the kept rows


def run_after_restart(directory: Path) -> tuple[list, list]:
    server = RivuletProcess("--data-dir", str(directory))
    try:
        post(server.url, "B", ["4000"])
        return windows(server.url, "pairs", 4), windows(server.url, "big", 4)
    finally:
        server.stop()
