"""``rivulet backup`` of a running server: the copy holds every write acknowledged before
the backup started, and what it holds is a prefix of the log (no write acknowledged after
one it lacks), whether or not a checkpoint is taken while it copies.

The server is a real ``rivulet serve --data-dir`` child process, checkpointing every
few hundred writes (``--checkpoint-mb 0.05``), loaded by client threads doing SPARQL
updates, Graph Store appends and replacements and stream batches; ``rivulet backup``
runs as its own process in the middle of it. The copy is moved elsewhere (restore is
a rename) and a second server started on it answers what it holds.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from engine.durability import DataDirectory
from engine.durability import backup as backup_module
from engine.durability.backup import backup
from tests.durability.test_checkpoint_differential import quads
from tests.durability.test_recovery import crash
from tests.endpoint.rivulet_process import REPO, RivuletProcess

EX = "http://example.org/"
STREAM = f"{EX}stream"
#: seconds of load after the server's first checkpoint before the backup starts, and after it ends
LOAD_BEFORE_S, LOAD_AFTER_S = 1.0, 1.0
#: seconds the load may take to fill the log up to a checkpoint
CHECKPOINT_WAIT_S = 60.0
#: upper bound on any loop of this test (writes per client)
MAX_WRITES = 5000
REQUEST_TIMEOUT_S = 30.0


@dataclass
class Write:
    """One write of one client: what it adds (a key the copy is searched for) and its times."""

    key: str
    sent: float
    acknowledged: float | None = None


@dataclass
class Client:
    """A thread writing one kind of write, one after the other (each sent once the last was answered)."""

    kind: str
    writes: list[Write] = field(default_factory=list)
    error: str | None = None

    def request(self, http: httpx.Client, n: int) -> tuple[str, httpx.Response]:
        if self.kind == "update":
            key = f"{EX}u/{n}"
            return key, http.post("/sparql", data={"update": f"INSERT DATA {{ <{key}> <{EX}p> {n} }}"})
        if self.kind == "append":
            key = f"{EX}a/{n}"
            return key, http.post("/store", params={"graph": f"{EX}appended"},
                                  content=f"<{key}> <{EX}p> \"{n}\" .\n",
                                  headers={"Content-Type": "application/n-triples"})
        if self.kind == "replace":
            key = f"{EX}r/{n}"
            return key, http.put("/store", params={"graph": f"{EX}replaced"},
                                 content=f"<{key}> <{EX}p> \"{n}\" .\n",
                                 headers={"Content-Type": "application/n-triples"})
        key = f"{EX}s/{n}"
        return key, http.post("/streams/s", content=f"{1_000 + n} <{key}> <{EX}p> \"{n}\" .\n",
                              headers={"Content-Type": "application/x-timestamped-ntriples"})

    def run(self, url: str, stop: threading.Event) -> None:
        try:
            with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as http:
                for n in range(MAX_WRITES):
                    if stop.is_set():
                        return
                    sent = time.monotonic()
                    key, answer = self.request(http, n)
                    if answer.status_code >= 300:
                        raise AssertionError(f"{self.kind} {n}: {answer.status_code} {answer.text}")
                    self.writes.append(Write(key, sent, time.monotonic()))
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.error = f"{self.kind}: {exc!r}"


def held(url: str) -> set[str]:
    """Every subject the server holds, in any graph."""
    query = "SELECT DISTINCT ?s { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"
    answer = httpx.get(f"{url}/sparql", params={"query": query}, headers={"Accept": "text/csv"},
                       timeout=REQUEST_TIMEOUT_S)
    assert answer.status_code == 200, answer.text
    return set(answer.text.split()[1:])


def check_prefix(clients: list[Client], present: set[str], backup_started: float) -> None:
    """Every write acknowledged before the backup started is present; a present write was
    never sent after a missing one was acknowledged (the copy is a prefix of the log)."""
    replaced = [w for c in clients if c.kind == "replace" for w in c.writes]
    held_replaced = [w for w in replaced if w.key in present]
    assert len(held_replaced) <= 1  # a PUT replaces the graph: only one of them is there
    for client in clients:
        for write in client.writes:
            if write.acknowledged < backup_started and client.kind != "replace":
                assert write.key in present, f"{client.kind} {write.key} acknowledged before the backup, lost"
    last_replace = [w for w in replaced if w.acknowledged < backup_started][-1:]
    if last_replace:  # the graph holds that PUT or a later one
        assert held_replaced and replaced.index(held_replaced[0]) >= replaced.index(last_replace[0])
    missing = [w for c in clients if c.kind != "replace" for w in c.writes if w.key not in present]
    # the PUTs after the one the graph holds (all of them if it holds none) are missing
    missing += replaced[replaced.index(held_replaced[0]) + 1 :] if held_replaced else replaced
    first_missing = min((w.acknowledged for w in missing), default=None)
    if first_missing is not None:
        later = [w.key for c in clients for w in c.writes if w.key in present and w.sent > first_missing]
        assert not later, f"the copy holds writes sent after a missing one was acknowledged: {later[:5]}"


def test_a_backup_of_a_server_under_load_holds_every_write_acknowledged_before_it(tmp_path):
    data_dir, copy, restored = tmp_path / "data", tmp_path / "copy", tmp_path / "restored"
    server = RivuletProcess("--data-dir", str(data_dir), "--checkpoint-mb", "0.05")
    clients = [Client(kind) for kind in ("update", "append", "replace", "stream")]
    stop = threading.Event()
    try:
        answer = httpx.put(f"{server.url}/streams/s", json={"iri": STREAM}, timeout=REQUEST_TIMEOUT_S)
        assert answer.status_code == 201, answer.text
        threads = [threading.Thread(target=c.run, args=(server.url, stop), daemon=True) for c in clients]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + CHECKPOINT_WAIT_S
        checkpointed = re.compile(r"checkpoint \d+: ")
        while not checkpointed.search("".join(server.stderr_lines)) and time.monotonic() < deadline:
            time.sleep(0.05)  # the copy should start from a checkpoint with a log after it
        time.sleep(LOAD_BEFORE_S)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "endpoint.cli", "backup", "--data-dir", str(data_dir),
                               str(copy)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "backup of" in done.stdout
        time.sleep(LOAD_AFTER_S)
        stop.set()
        for thread in threads:
            thread.join(timeout=REQUEST_TIMEOUT_S * 2)
    finally:
        stop.set()
        log = "".join(server.stop())
    assert [c.error for c in clients] == [None] * len(clients)
    assert all(any(w.acknowledged > started for w in c.writes) for c in clients)  # load went on meanwhile
    assert all(sum(w.acknowledged < started for w in c.writes) >= 5 for c in clients)  # and before
    assert re.search(r"checkpoint \d+: ", log)
    copy.rename(restored)  # a restore is a rename: the copy names nothing outside itself
    second = RivuletProcess("--data-dir", str(restored))
    try:
        present = held(second.url)
    finally:
        second.stop()
    check_prefix(clients, present, started)


def test_a_checkpoint_taken_while_a_backup_copies_removes_nothing_the_copy_needs(tmp_path, monkeypatch):
    """The backup read the catalog; before it copies the checkpoint that catalog names,
    the server takes another checkpoint (and writes more): the older checkpoint and its
    log stay until the backup ends, and the copy is the state of its catalog read or later."""
    data = DataDirectory.open(tmp_path / "data", checkpoint_mb=1000)
    data.store.update(f'INSERT DATA {{ <{EX}a> <{EX}p> "before the first checkpoint" }}')
    data.checkpoint()
    data.store.update(f'INSERT DATA {{ <{EX}b> <{EX}p> "logged after it" }}')
    expected = quads(data)
    first = sorted((tmp_path / "data" / "checkpoints").iterdir())
    resolve = backup_module.checkpoint_path

    def checkpoint_meanwhile(data_dir: Path, recorded: str) -> Path:
        """Called once the catalog is copied, before the checkpoint directory is."""
        data.store.update(f'INSERT DATA {{ <{EX}c> <{EX}p> "during the backup" }}')
        data.checkpoint()  # recorded; its removals wait for the backup
        data.store.update(f'INSERT DATA {{ <{EX}d> <{EX}p> "after that checkpoint" }}')
        source = resolve(data_dir, recorded)
        assert source in first and source.exists()
        return source

    monkeypatch.setattr(backup_module, "checkpoint_path", checkpoint_meanwhile)
    report = backup(tmp_path / "data", tmp_path / "copy")
    monkeypatch.undo()
    assert report.checkpoint_lsn == 1 and report.last_lsn >= 2
    after = quads(data)
    data.store.update(f'INSERT DATA {{ <{EX}e> <{EX}p> "next" }}')
    data.checkpoint()  # the next checkpoint removes what the backup held back
    assert len(list((tmp_path / "data" / "checkpoints").iterdir())) == 1
    crash(data)
    copy = DataDirectory.open(tmp_path / "copy")
    try:
        held_now = quads(copy)
    finally:
        copy.close()
    # everything acknowledged before the backup, and what came during it only as a prefix
    assert held_now in (expected, after, _with(expected, f"{EX}c", after))


def _with(expected: dict, subject: str, after: dict) -> dict:
    """``expected`` plus the triples of ``subject`` that ``after`` holds."""
    out = {graph: set(triples) for graph, triples in expected.items()}
    for graph, triples in after.items():
        out.setdefault(graph, set()).update(t for t in triples if t[0] == f"<{subject}>")
    return out


def test_a_backup_keeps_the_broker_sinks_of_the_directory(tmp_path):
    data = DataDirectory.open(tmp_path / "data")
    try:
        sinks = (b'{"alerts": {"sink": {"broker": "mqtt://127.0.0.1:1883", "topic": "out/q"}, '
                 b'"last_sequence": 7}}')
        (tmp_path / "data" / "sinks.json").write_bytes(sinks)
        backup(tmp_path / "data", tmp_path / "copy")
        assert (tmp_path / "copy" / "sinks.json").read_bytes() == sinks
    finally:
        data.close()
    (tmp_path / "data" / "sinks.json").unlink()  # a directory without sinks: none in its copy
    backup(tmp_path / "data", tmp_path / "copy2")
    assert not (tmp_path / "copy2" / "sinks.json").exists()


def test_a_backup_is_refused_into_a_directory_that_holds_something(tmp_path):
    data = DataDirectory.open(tmp_path / "data")
    try:
        (tmp_path / "taken").mkdir()
        (tmp_path / "taken" / "file").write_text("mine")
        with pytest.raises(FileExistsError, match="not empty"):
            backup(tmp_path / "data", tmp_path / "taken")
        with pytest.raises(FileNotFoundError, match="not a data directory"):
            backup(tmp_path / "nothing", tmp_path / "copy")
        assert (tmp_path / "taken" / "file").read_text() == "mine" and not (tmp_path / "copy").exists()
    finally:
        data.close()
