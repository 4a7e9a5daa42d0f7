"""Issue 25's two log cases through the real server (``rivulet serve
--data-dir`` as a child process, killed with SIGKILL) and ``rivulet recover``.

Case 1: the first record of a segment torn by a kill (a big graph PUT half
written), then writes acknowledged: they must survive every later restart.
The torn record is written into the segment by the test (the bytes a kill
in the middle of that write leaves), so the case does not depend on when a
kill lands. Case 2: one byte changed in the middle of the log: the server
refuses to start, with the segment, byte and LSNs lost and no traceback;
``rivulet recover --truncate-at`` then lets it start with exactly the
writes before the damage.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import httpx
import orjson

from engine.durability.wal import frame
from tests.endpoint.rivulet_process import REPO, RivuletProcess, free_port

EX = "http://example.org/"
RESULTS_JSON = "application/sparql-results+json"


def start(data_dir: Path) -> RivuletProcess:
    return RivuletProcess("--data-dir", str(data_dir))


def kill(server: RivuletProcess) -> None:
    server.process.kill()  # SIGKILL
    server.process.wait(timeout=30)


def insert(server: RivuletProcess, value: str) -> None:
    update = f'INSERT DATA {{ <{EX}a> <{EX}p> "{value}" }}'
    answer = httpx.post(f"{server.url}/sparql", data={"update": update}, timeout=60)
    assert answer.status_code == 204, answer.text


def values(server: RivuletProcess) -> set[str]:
    answer = httpx.get(f"{server.url}/sparql", params={"query": f"SELECT ?o {{ <{EX}a> <{EX}p> ?o }}"},
                       headers={"Accept": RESULTS_JSON}, timeout=60)
    assert answer.status_code == 200, answer.text
    return {row["o"]["value"] for row in answer.json()["results"]["bindings"]}


def rivulet(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "endpoint.cli", *args], capture_output=True, text=True,
                          timeout=180, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_writes_after_a_torn_first_record_survive_restarts_of_the_server(tmp_path):
    server = start(tmp_path)
    insert(server, "before")
    kill(server)
    # a restart would open a new segment for LSN 2 on (test_log_faults shows it): the record
    # of a big PUT is torn at its start
    segment = tmp_path / "wal" / f"{2:020d}.log"
    # a big PUT's record, half written
    lines = "".join(f'<{EX}big> <{EX}p> "{n}" .\n' for n in range(100_000))
    changes = [["clear", f"<{EX}big>", None], ["add", f"<{EX}big>", lines]]
    record = frame(2, orjson.dumps({"k": "tx", "c": changes}))
    segment.write_bytes(record[: len(record) // 2])
    server = start(tmp_path)
    try:
        assert values(server) == {"before"}
        for n in range(3):
            insert(server, f"after-{n}")
        assert values(server) == {"before", "after-0", "after-1", "after-2"}
    finally:
        log = "".join(server.stop())  # a clean restart
    assert f"{segment.name}: cut a torn record at byte 0" in log
    for _ in range(2):
        server = start(tmp_path)
        try:
            assert values(server) == {"before", "after-0", "after-1", "after-2"}
        finally:
            server.stop()


def _records(segment: Path) -> list[tuple[int, int, int]]:
    """(LSN, offset, payload length) of each record, read with the format alone."""
    data, at, out = segment.read_bytes(), 0, []
    header = struct.Struct("<IIQ")
    while at + header.size <= len(data):
        length, checksum, lsn = header.unpack_from(data, at)
        payload = data[at + header.size: at + header.size + length]
        assert zlib.crc32(payload, zlib.crc32(lsn.to_bytes(8, "little"))) == checksum
        out.append((lsn, at, length))
        at += header.size + length
    return out


def test_a_damaged_log_stops_the_server_until_recover_cuts_it(tmp_path):
    server = start(tmp_path)
    try:
        declared = httpx.put(f"{server.url}/streams/s", json={"iri": f"{EX}stream/s"}, timeout=60)
        assert declared.status_code == 201, declared.text
        for n in range(30):
            insert(server, str(n))
        answer = httpx.post(f"{server.url}/streams/s", content=f'1000 <{EX}x> <{EX}v> "1" .\n',
                            headers={"Content-Type": "application/x-timestamped-ntriples"}, timeout=60)
        assert answer.status_code in (200, 202), answer.text
    finally:
        server.stop()
    segment = sorted((tmp_path / "wal").glob("*.log"))[-1]
    records = _records(segment)
    assert len(records) == 32  # the declaration, 30 inserts, the batch
    lsn, offset, length = records[12]  # the insert of "11"
    damaged = bytearray(segment.read_bytes())
    damaged[offset + 16 + length // 2] ^= 0x01
    segment.write_bytes(bytes(damaged))

    refused = rivulet("serve", "--port", str(free_port()), "--data-dir", str(tmp_path))
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr
    assert f"{segment.name} at byte {offset}" in refused.stderr
    assert f"LSNs {lsn} to 32 would be lost" in refused.stderr
    assert f"rivulet recover --data-dir {tmp_path} --truncate-at {lsn}" in refused.stderr

    check = rivulet("recover", "--data-dir", str(tmp_path))
    assert check.returncode == 1 and "state: DAMAGED" in check.stdout
    dry = rivulet("recover", "--data-dir", str(tmp_path), "--truncate-at", str(lsn))
    assert dry.returncode == 0, dry.stderr
    assert f"would drop {32 - lsn} whole records (LSNs {lsn + 1} to 32)" in dry.stdout
    assert "transactions: 18, stream batches: 1" in dry.stdout and "add --yes" in dry.stdout
    assert segment.read_bytes() == bytes(damaged)  # a dry run changes nothing
    done = rivulet("recover", "--data-dir", str(tmp_path), "--truncate-at", str(lsn), "--yes")
    assert done.returncode == 0, done.stderr
    assert f"dropped {32 - lsn} whole records" in done.stdout

    server = start(tmp_path)
    try:
        assert values(server) == {str(n) for n in range(11)}  # the inserts logged before the damage
        streams = httpx.get(f"{server.url}/streams", timeout=60).json()
        assert "s" in str(streams)
        insert(server, "new")
    finally:
        server.stop()
    server = start(tmp_path)
    try:
        assert values(server) == {str(n) for n in range(11)} | {"new"}
    finally:
        server.stop()
