"""A log that never lies: a torn tail is cut before anything is appended,
damage before the tail refuses the start with what would be lost, and
``rivulet recover --truncate-at`` keeps exactly the records before it.

In process (a "crash" drops a DataDirectory without closing it and
releases its lock, as a killed process would: everything it acknowledged
was written with os.write); the real server's side is in
test_log_damage_server.py, the exhaustive run in crash_harness.py.
"""

from __future__ import annotations

import random
import struct
import zlib
from pathlib import Path

import orjson
import pytest

from engine.catalog import Catalog
from engine.durability import DataDirectory
from engine.durability.wal import frame
from engine.rdf import IRI
from engine.stream import StreamDefinition

EX = "http://example.org/"


def crash(data: DataDirectory) -> None:
    data.lock.release()


def values(data: DataDirectory) -> set[str]:
    return {row[0].lexical for row in data.store.query(f"SELECT ?o {{ <{EX}a> <{EX}p> ?o }}").rows()}


def insert(data: DataDirectory, value: int) -> None:
    data.store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> {value} }}")


def torn_record(lsn: int, keep: float = 0.5) -> bytes:
    """The first part of a big transaction's record, as a kill while writing it leaves it."""
    lines = "".join(f'<{EX}big> <{EX}p> "{n}" .\n' for n in range(5000))
    whole = frame(lsn, orjson.dumps({"k": "tx", "c": [["add", None, lines]]}))
    return whole[: int(len(whole) * keep)]


def frames(segment: Path) -> list[tuple[int, int, int]]:
    """(LSN, offset, payload length) of each whole record of a segment, read
    here with the format alone (the cases must run on code without the scanner)."""
    data, at, out = segment.read_bytes(), 0, []
    header = struct.Struct("<IIQ")
    while at + header.size <= len(data):
        length, checksum, lsn = header.unpack_from(data, at)
        payload = data[at + header.size: at + header.size + length]
        if len(payload) < length or zlib.crc32(payload, zlib.crc32(lsn.to_bytes(8, "little"))) != checksum:
            break
        out.append((lsn, at, length))
        at += header.size + length
    return out


# ---------------------------------------------------------------- case 1
def test_writes_after_a_torn_first_record_of_a_segment_survive_every_restart(tmp_path):
    """Issue 25, case 1: the torn first record of a segment was left in place
    and new records appended behind it, where every later recovery stopped."""
    data = DataDirectory.open(tmp_path)
    insert(data, 1)
    crash(data)
    data = DataDirectory.open(tmp_path)  # a new segment for LSN 2 on
    segment = tmp_path / "wal" / f"{2:020d}.log"
    assert segment.exists() and segment.stat().st_size == 0
    crash(data)
    segment.write_bytes(torn_record(2))  # a big PUT killed half way through its record
    data = DataDirectory.open(tmp_path)
    assert values(data) == {"1"}
    for value in (2, 3, 4):
        insert(data, value)  # acknowledged
    crash(data)
    for _ in range(2):
        data = DataDirectory.open(tmp_path)
        assert values(data) == {"1", "2", "3", "4"}
        data.close()


@pytest.mark.parametrize("keep", [0.0001, 0.3, 0.999])
def test_a_torn_tail_after_whole_records_is_cut_and_the_log_goes_on(tmp_path, keep):
    data = DataDirectory.open(tmp_path)
    insert(data, 1)
    insert(data, 2)
    segment = data.wal.segments()[-1]
    whole = segment.stat().st_size
    crash(data)
    with segment.open("ab") as out:
        out.write(torn_record(3, keep))
    data = DataDirectory.open(tmp_path)
    assert segment.stat().st_size == whole
    insert(data, 3)
    crash(data)
    data = DataDirectory.open(tmp_path)
    assert values(data) == {"1", "2", "3"}
    data.close()


# ---------------------------------------------------------------- case 2
def _damaged_directory(path: Path) -> tuple[int, int, str]:
    """Writes of every kind, then one byte changed in the middle of the log;
    returns (LSN of the damaged record, its offset, the segment's name)."""
    data = DataDirectory.open(path)
    data.engine.declare_stream(StreamDefinition("s", IRI(f"{EX}stream/s")))
    for value in range(1, 21):
        insert(data, value)
    data.engine.ingest("s", [(1000, [(IRI(f"{EX}x"), IRI(f"{EX}v"), IRI(f"{EX}y"))])])
    data.engine.register(f"REGISTER QUERY q AS SELECT ?x FROM STREAM <{EX}stream/s> [RANGE 2s STEP 1s] "
                         "WHERE { ?x ?p ?o }")
    for value in range(21, 41):
        insert(data, value)
    data.close()
    segment = sorted((path / "wal").glob("*.log"))[-1]
    lsn, offset, length = frames(segment)[10]  # an insert, before the batch and the registration
    damaged = bytearray(segment.read_bytes())
    damaged[offset + 16 + length // 2] ^= 0x20
    segment.write_bytes(bytes(damaged))
    return lsn, offset, segment.name


def test_one_corrupt_byte_in_the_middle_of_the_log_refuses_the_start(tmp_path):
    """Issue 25, case 2: the rest of the segment was dropped silently."""
    lsn, offset, segment = _damaged_directory(tmp_path)
    with pytest.raises(Exception) as refused:
        DataDirectory.open(tmp_path)
    assert type(refused.value).__name__ == "LogDamaged"
    message = str(refused.value)
    assert f"{segment} at byte {offset}" in message
    assert f"LSNs {lsn} to 43 would be lost" in message  # 2 + 40 inserts + a batch + a registration
    assert f"--truncate-at {lsn}" in message
    assert (tmp_path / "wal" / segment).stat().st_size > offset  # nothing was changed


def test_recover_keeps_exactly_the_records_before_the_damage(tmp_path):
    from engine.durability import log_repair

    lsn, _, _ = _damaged_directory(tmp_path)
    catalog = Catalog.for_directory(tmp_path)
    report = log_repair.inspect(tmp_path, catalog)
    assert report.scan.damage is not None and report.scan.damage.first_lost == lsn
    with pytest.raises(ValueError, match=f"at most|from 1 to {lsn}"):
        log_repair.plan_truncation(report, lsn + 1, catalog)
    plan = log_repair.plan_truncation(report, lsn, catalog)
    kinds = plan.kinds()
    # the damaged record itself is not whole: the rest are counted by kind
    assert kinds["tx"] == 43 - lsn - 2 and kinds["register"] == 1 and kinds["batch"] == 1
    assert plan.catalog == ([], ["q"], [], [])
    text = "\n".join(plan.lines(done=False))
    assert "query registrations: 1" in text and "stream batches: 1" in text and "add --yes" in text
    log_repair.truncate(plan, catalog)
    catalog.close()
    data = DataDirectory.open(tmp_path)
    # LSN 1 declared the stream, then inserts 1, 2, ... took LSNs 2, 3, ...
    assert values(data) == {str(v) for v in range(1, lsn - 1)}
    assert "q" not in data.engine.queries and "s" in data.engine.streams
    insert(data, 99)
    crash(data)
    data = DataDirectory.open(tmp_path)
    assert "99" in values(data) and len(values(data)) == lsn - 1
    data.close()
    dropped = list((tmp_path / "dropped-log" / f"from-lsn-{lsn}").iterdir())
    assert dropped and sum(p.stat().st_size for p in dropped) == plan.dropped_bytes


# --------------------------------------------------------- the scanner
def read_log(wal: Path, after: int = 0):
    from engine.durability.log_scan import scan_log

    return scan_log(wal, after)


def _log_of(tmp_path: Path, count: int) -> tuple[Path, bytes, list]:
    data = DataDirectory.open(tmp_path, sync=False)
    for value in range(count):
        insert(data, value)
    data.close()
    segment = sorted((tmp_path / "wal").glob("*.log"))[-1]
    return segment, segment.read_bytes(), read_log(tmp_path / "wal").records


def test_a_cut_at_every_byte_of_the_last_segment_is_a_torn_tail_after_the_whole_records(tmp_path):
    segment, data, records = _log_of(tmp_path, 6)
    ends = [r.offset for r in records] + [len(data)]
    for cut in range(len(data) + 1):
        segment.write_bytes(data[:cut])
        scan = read_log(tmp_path / "wal")
        assert scan.damage is None, cut
        whole = [r.lsn for r in records if r.offset + 16 + len(r.payload) <= cut]
        assert [r.lsn for r in scan.records] == whole
        assert (scan.torn is None) == (cut in ends)
        if scan.torn is not None:
            assert scan.torn.offset == records[len(whole)].offset
    zeros = data[: ends[3] + 20] + bytes(300)  # an OS crash: the rest of the pages never written
    segment.write_bytes(zeros)
    scan = read_log(tmp_path / "wal")
    assert scan.damage is None and scan.torn.offset == ends[3] and len(scan.records) == 3


def test_a_flipped_bit_anywhere_in_a_record_that_is_not_the_tail_is_damage(tmp_path):
    segment, data, records = _log_of(tmp_path, 5)
    rng = random.Random(25)
    for target in records:  # the last one too: it is whole, so it may have been acknowledged
        for byte in range(target.offset, target.offset + 16 + len(target.payload)):
            flipped = bytearray(data)
            flipped[byte] ^= 1 << rng.randrange(8)
            segment.write_bytes(bytes(flipped))
            scan = read_log(tmp_path / "wal")
            assert scan.torn is None and scan.damage is not None, (target.lsn, byte)
            assert (scan.damage.offset, scan.damage.first_lost) == (target.offset, target.lsn)
            assert scan.damage.last_lost == records[-1].lsn
            assert [r.lsn for r in scan.records] == [r.lsn for r in records if r.lsn < target.lsn]


def test_segments_that_do_not_follow_each_other_are_damage(tmp_path):
    data = DataDirectory.open(tmp_path)
    for value in range(3):
        insert(data, value)
    crash(data)
    data = DataDirectory.open(tmp_path)
    for value in range(3, 6):
        insert(data, value)
    crash(data)
    data = DataDirectory.open(tmp_path)
    for value in range(6, 9):
        insert(data, value)
    crash(data)
    wal = tmp_path / "wal"
    first, middle, last = sorted(wal.glob("*.log"))
    middle_bytes = middle.read_bytes()
    middle.unlink()  # a gap: replaying the last segment over it would skip LSNs 4 to 6
    gap = f"{last.name} at byte 0: the log holds no record 4 to 6.*LSNs 4 to 9"
    with pytest.raises(Exception, match=gap):
        DataDirectory.open(tmp_path)
    middle.write_bytes(middle_bytes)
    first.unlink()  # missing after the checkpoint (there is none: the log starts at LSN 1)
    with pytest.raises(Exception, match=f"{middle.name} at byte 0: the log holds no record 1 to 3"):
        DataDirectory.open(tmp_path)
    # a whole record whose LSN does not follow its predecessor
    records = read_log(wal, 3).records
    middle.write_bytes(middle_bytes[: records[1].offset] + frame(9, records[1].payload))
    scan = read_log(wal, 3)
    assert scan.damage.what == "a record with LSN 9 follows LSN 4" and scan.damage.first_lost == 5


def test_the_catalog_forgets_rows_of_records_the_log_does_not_hold(tmp_path):
    """An OS crash can lose a written record whose catalog row was committed:
    a declaration never acknowledged must not come back at a later checkpoint."""
    data = DataDirectory.open(tmp_path)
    insert(data, 1)
    data.engine.declare_stream(StreamDefinition("gone", IRI(f"{EX}stream/gone")))
    segment = data.wal.segments()[-1]
    last_offset = frames(segment)[-1][1]
    crash(data)
    with segment.open("r+b") as out:
        out.truncate(last_offset)  # the declaration's record lost, its row kept
    data = DataDirectory.open(tmp_path)
    assert "gone" not in data.engine.streams
    insert(data, 2)  # takes the lost record's LSN
    data.checkpoint()
    crash(data)
    data = DataDirectory.open(tmp_path)
    assert "gone" not in data.engine.streams and values(data) == {"1", "2"}
    data.close()


def test_damage_in_a_segment_the_checkpoint_holds_loses_nothing(tmp_path):
    """A crash may leave segments a checkpoint replaced; damage there is no reason to refuse."""
    data = DataDirectory.open(tmp_path)
    for value in range(5):
        insert(data, value)
    old = data.wal.segments()[0]
    kept = bytearray(old.read_bytes())
    data.checkpoint()
    insert(data, 5)
    crash(data)
    kept[len(kept) // 2] ^= 0x10
    old.write_bytes(bytes(kept))  # left behind by a crash before its removal, and damaged since
    data = DataDirectory.open(tmp_path)
    assert values(data) == {str(v) for v in range(6)}
    data.close()


def test_recover_refuses_a_truncation_point_it_cannot_honour(tmp_path, capsys):
    from endpoint.cli import main

    data = DataDirectory.open(tmp_path)
    for value in range(3):
        insert(data, value)
    data.checkpoint()
    insert(data, 3)
    data.close()
    assert main(["recover", "--data-dir", str(tmp_path)]) == 0
    assert "state: whole" in capsys.readouterr().out
    for lsn, why in ((3, "in the checkpoint"), (6, "give an LSN from 4 to 5")):
        with pytest.raises(SystemExit, match=why):
            main(["recover", "--data-dir", str(tmp_path), "--truncate-at", str(lsn)])
    with pytest.raises(SystemExit, match="--yes needs --truncate-at"):
        main(["recover", "--data-dir", str(tmp_path), "--yes"])
    data = DataDirectory.open(tmp_path)
    with pytest.raises(SystemExit, match="in use by another process"):
        main(["recover", "--data-dir", str(tmp_path)])
    data.close()
    assert main(["recover", "--data-dir", str(tmp_path), "--truncate-at", "4", "--yes"]) == 0
    data = DataDirectory.open(tmp_path)
    assert values(data) == {"0", "1", "2"}  # the insert after the checkpoint (LSN 4) dropped
    data.close()


# --------------------------------------------------- the cluster's logs
def test_the_coordinator_log_cuts_a_torn_first_record_too(tmp_path):
    import numpy as np

    from engine.cluster.coordinator_log import CoordinatorLog
    from engine.cluster.shard_ops import Op
    from engine.rdf import MemoryTermDictionary

    def ops(n: int) -> list[Op]:
        return [Op("add", 0, (np.array([n]), np.array([n]), np.array([n])))]

    log = CoordinatorLog(tmp_path, MemoryTermDictionary(), 1 << 40, sync=False)
    log.log(1, ops(1))
    log.close()
    log = CoordinatorLog(tmp_path, MemoryTermDictionary(), 1 << 40, sync=False)  # segment 2 on
    log.close()
    (tmp_path / f"{2:020d}.log").write_bytes(frame(2, b"x" * 4000)[:1000])
    log = CoordinatorLog(tmp_path, MemoryTermDictionary(), 1 << 40, sync=False)
    assert log.version == 1
    log.log(2, ops(2))
    log.log(3, ops(3))
    log.close()
    for _ in range(2):
        log = CoordinatorLog(tmp_path, MemoryTermDictionary(), 1 << 40, sync=False)
        assert log.version == 3 and [v for v, _ in log.commits_after(0)] == [1, 2, 3]
        log.close()


def test_a_shard_log_cuts_a_torn_first_record_too(tmp_path):
    from engine.cluster.shard_files import ShardFiles

    def reopen():
        return ShardFiles.recover(tmp_path, 0, 1, None, sync=False)

    files, state, _ = reopen()
    files.log_commit(1, [], {})
    files.close()
    files, state, _ = reopen()  # segment 2 on
    files.close()
    segment = next(tmp_path.rglob(f"{2:020d}.log"))
    segment.write_bytes(frame(2, b"x" * 4000)[:1000])
    files, state, _ = reopen()
    assert state.version == 1
    for version in (2, 3):
        files.log_commit(version, [], {})
        state.apply(version, [], {})
    files.close()
    for _ in range(2):
        files, state, report = reopen()
        assert state.version == 3 and report["replayed"] == 3
        files.close()


# --------------------------------------------------------- the harness
def test_crash_harness_loses_no_acknowledged_write_and_keeps_no_refused_one(tmp_path):
    """A bounded sample of the harness (``python -m tests.durability.crash_harness``
    runs 1000 restarts and more)."""
    from tests.durability import crash_harness

    figures = crash_harness.run_harness(restarts=120, seed=20261125, writes=45, deadline_s=120, work=tmp_path)
    assert figures.failures == []
    assert figures.acknowledged_lost == 0 and figures.refused_present == 0
    assert figures.restarts >= 60
    for kind in ("boundary", "torn", "flip", "checkpoint"):
        assert figures.cases[kind] > 0, figures.summary()


def test_recover_names_every_kind_of_record_the_log_writes():
    """A kind missing from the names would drop uncounted from the report."""
    import inspect
    import re

    from engine.durability import log_repair, records

    written = set(re.findall(r'"k": "(\w+)"', inspect.getsource(records)))
    assert {"tx", "batch", "deliveries"} <= written
    assert written == set(log_repair.KIND_NAMES)
