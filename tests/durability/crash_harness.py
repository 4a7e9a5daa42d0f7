"""A crash-consistency harness for the data directory, in the spirit of
SQLite's crash tests and ALICE: a seeded workload of every kind of write,
then faults injected at every place a crash or a damaged disk can leave the
directory, then restarts checked against an oracle.

**The workload** (:func:`make_workload`): updates that add and delete
triples (default and named graphs), CREATE and DROP GRAPH, graph
replacements (what a Graph Store PUT does), stream declarations (and
identical re-declarations), stream batches whose timeless triples the
stream's stored graph absorbs, stream drops (and declarations of the name
again, as a new stream), registrations and unregistrations of continuous
queries, checkpoints and clean restarts. Some writes are refused on purpose
(a CREATE of an existing graph, a DROP of a missing one, a late batch, a
registration over an unknown stream, a drop of a stream a query reads, a
malformed update).

**The oracle**: the same writes applied to a plain in-memory store and
stream engine; its state after each write (every quad, the named graphs,
each stream's definition, watermark and triple count, each query's text) is
what a restart must show. A refused write must be refused by the oracle
too, and change nothing.

**The run** (:func:`record_run`): the workload against a real
:class:`DataDirectory` (``sync`` on), recording for each write whether it
was acknowledged and the log's last LSN after it, and copying the
directory after each write: no write is in flight then and checkpoints run
in the foreground, so each copy is exactly what a kill at that moment
leaves (a killed process loses nothing it wrote with ``os.write``).

**The faults**, each on a copy, each followed by a restart (``DataDirectory.open``
in this process, timed) and a check:

- ``boundary``: the log cut at a record boundary (each copy as it is): the
  restart holds exactly the writes acknowledged before the cut;
- ``torn``: a prefix of the next write's record appended (a kill while
  writing it), and ``torn-zeros``: the rest of it zeros (an OS crash with
  pages not written): the torn record is cut, the restart holds the
  acknowledged prefix. After these (and after the kills below) a child
  process opens the directory, makes three writes, reports them
  acknowledged and is SIGKILLed; two more restarts must hold them (issue
  25, case 1: new records appended behind a torn one were lost);
- ``flip``: one bit flipped in a record that is not the tail (or in the
  tail record, ``flip-tail``): the restart must refuse (``LogDamaged``)
  naming the segment, the record's offset and its LSN as the first lost;
  then ``rivulet recover --truncate-at LSN --yes`` (its functions; through
  the real CLI every 10th case) must give exactly the writes before it;
- ``gap``: a segment after the checkpoint removed: refused, then recovered
  the same way;
- ``checkpoint``: a child process opens the copy and is SIGKILLed at one
  step of a checkpoint (before or after the store directory is written,
  after the carried batches, before or after the catalog row, after the
  first old segment is removed, after the removal): the restart holds
  exactly the acknowledged writes;
- ``recovery``: a child is SIGKILLed during recovery (after cutting a torn
  tail, in the middle of replaying the log): the next restart holds the
  same;
- ``compaction``: a cluster coordinator's log (commits logged over two
  segments, a torn commit at the end half the time) is compacted by a child
  SIGKILLed after the new segment, before or after ``compacted.json`` or
  after an old segment is removed: the reopened log holds every commit
  logged, with the spelling of every term it introduced.

Each fault point a child must reach is checked: a child that is not
killed there fails the case (a refactoring that moves a step is seen).

Figures: cases by kind, restarts, recovery seconds (median, max),
acknowledged writes lost and refused writes present (both must be 0).
The suite runs a bounded sample (tests/durability/test_log_faults.py); a
longer run by hand::

    python -m tests.durability.crash_harness --restarts 1000 --seed 1
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine.api import Store
from engine.durability import DataDirectory, LogDamaged, log_repair
from engine.durability.log_scan import scan_log
from engine.rdf import IRI, Literal
from engine.stream import StreamDefinition, StreamEngine

EX = "http://example.org/crash/"
REPO = Path(__file__).resolve().parents[2]
KILL_CODES = (-signal.SIGKILL,)


# ------------------------------------------------------------------ workload
@dataclass(frozen=True)
class Write:
    """One write of the workload: ``kind`` and its arguments (JSON-able)."""

    kind: str
    args: tuple


def apply(write: Write, store: Store, engine: StreamEngine) -> None:
    """Make ``write`` against ``store`` and ``engine`` (raises if refused)."""
    kind, args = write.kind, write.args
    if kind == "update":
        store.update(args[0])
    elif kind == "replace":
        store.replace_graph(args[0], [(IRI(s), IRI(p), Literal(o)) for s, p, o in args[1]])
    elif kind == "declare":
        engine.declare_stream(StreamDefinition(args[0], IRI(args[1]), timing=frozenset(args[2])))
    elif kind == "batch":
        engine.ingest(args[0], [(ts, [(IRI(s), IRI(p), Literal(o)) for s, p, o in triples])
                                for ts, triples in args[1]])
    elif kind == "drop":
        engine.drop_stream(args[0])
    elif kind == "register":
        engine.register(args[0])
    elif kind == "unregister":
        engine.unregister(args[0])
    elif kind not in ("checkpoint", "restart"):
        raise ValueError(kind)


State = tuple


def state_of(store: Store, engine: StreamEngine) -> State:
    """What a restart must give back: quads, named graphs, streams, queries."""
    rows = store.query("SELECT * { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }").rows()
    quads = frozenset(tuple(map(str, row)) for row in rows)
    graphs = frozenset(str(g) for g in store.named_graphs())
    streams = tuple(sorted((name, json.dumps(state.definition.to_json(), sort_keys=True), state.watermark,
                            state.log.total) for name, state in engine.streams.items()))
    queries = tuple(sorted((name, q.spec.text) for name, q in engine.queries.items()))
    return quads, graphs, streams, queries


def make_workload(seed: int, count: int) -> tuple[list[Write], list[bool], list[State]]:
    """``count`` writes, whether the oracle accepts each, and its state after each."""
    rng = random.Random(seed)
    store = Store()
    engine = StreamEngine(store)
    writes: list[Write] = []
    accepted: list[bool] = []
    states: list[State] = []
    graphs: set[str] = set()
    triples: set[tuple[str | None, str, str]] = set()  # (graph, subject, value) added by updates
    streams: dict[str, int] = {}  # name -> next timestamp
    queries: list[str] = []
    serial = 0
    for _ in range(count):
        serial += 1
        roll = rng.random()
        graph = rng.choice([None, f"{EX}g{rng.randint(0, 3)}"])
        if roll < 0.22:
            rows = [(graph, f"{EX}s{rng.randint(0, 20)}", f"v{serial}-{n}") for n in range(rng.randint(1, 4))]
            body = " ".join(f'<{s}> <{EX}p> "{v}" .' for _, s, v in rows)
            text = f"INSERT DATA {{ {body if graph is None else f'GRAPH <{graph}> {{ {body} }}'} }}"
            write = Write("update", (text,))
        elif roll < 0.32 and triples:
            g, s, v = rng.choice(sorted(triples, key=str))
            body = f'<{s}> <{EX}p> "{v}" .'
            body = body if g is None else f"GRAPH <{g}> {{ {body} }}"
            write = Write("update", (f"DELETE DATA {{ {body} }}",))
        elif roll < 0.38:
            name = f"{EX}g{rng.randint(0, 5)}"
            write = Write("update", (f"CREATE GRAPH <{name}>",))  # refused if it exists
        elif roll < 0.43:
            name = f"{EX}g{rng.randint(0, 5)}"
            write = Write("update", (f"DROP GRAPH <{name}>",))  # refused if it does not exist
        elif roll < 0.50:
            name = f"{EX}g{rng.randint(0, 5)}"
            write = Write("replace", (name, [(f"{EX}r{n}", f"{EX}q", f"put{serial}-{n}")
                                              for n in range(rng.randint(0, 5))]))
        elif roll < 0.53:
            write = Write("update", ("INSERT DATA { <oops",))  # malformed: refused
        elif roll < 0.565:
            name = f"s{rng.randint(0, 2)}"
            timing = [f"{EX}t"] if name == "s1" else []
            write = Write("declare", (name, f"{EX}stream/{name}", timing))
        elif roll < 0.59 and streams:
            # refused while a query reads the stream (most of the time), or accepted
            write = Write("drop", (rng.choice(sorted(streams)),))
        elif roll < 0.75 and streams:
            name = rng.choice(sorted(streams))
            ts = streams[name] - (rng.randint(1, 500) if rng.random() < 0.08 else 0)  # late: refused
            items = []
            for n in range(rng.randint(1, 3)):
                ts += rng.randint(0, 400)
                items.append((ts, [(f"{EX}x{rng.randint(0, 9)}", f"{EX}t" if n % 2 else f"{EX}v",
                                    f"b{serial}-{n}")]))
            write = Write("batch", (name, items))
        elif roll < 0.82:
            stream = rng.choice(sorted(streams) + ["nosuch"]) if streams else "nosuch"
            name = f"q{serial}"
            write = Write("register", (f"REGISTER QUERY {name} AS SELECT ?x (COUNT(*) AS ?n) "
                                       f"FROM STREAM <{EX}stream/{stream}> [RANGE 2s STEP 1s] "
                                       f"WHERE {{ ?x ?p ?o }} GROUP BY ?x",))
        elif roll < 0.87:
            name = rng.choice(queries) if queries and rng.random() < 0.85 else "q-none"
            write = Write("unregister", (name,))
        elif roll < 0.94:
            write = Write("checkpoint", ())
        else:
            write = Write("restart", ())
        try:
            apply(write, store, engine)
            ok = True
        except Exception:
            ok = False
        if ok:
            _follow(write, graphs, triples, streams, queries)
        writes.append(write)
        accepted.append(ok)
        states.append(state_of(store, engine))
    return writes, accepted, states


def _follow(write: Write, graphs: set, triples: set, streams: dict, queries: list) -> None:
    """Keep the generator's view (which deletes, batches and unregistrations make sense)."""
    kind, args = write.kind, write.args
    if kind == "update" and args[0].startswith("INSERT DATA"):
        text = args[0]
        graph = text.split("GRAPH <", 1)[1].split(">", 1)[0] if "GRAPH <" in text else None
        for part in text.split(f"<{EX}s")[1:]:
            subject = f"{EX}s" + part.split(">", 1)[0]
            value = part.split('"', 2)[1]
            triples.add((graph, subject, value))
    elif kind == "update" and args[0].startswith("DELETE DATA"):
        text = args[0]
        graph = text.split("GRAPH <", 1)[1].split(">", 1)[0] if "GRAPH <" in text else None
        subject = f"{EX}s" + text.split(f"<{EX}s", 1)[1].split(">", 1)[0]
        triples.discard((graph, subject, text.split('"', 2)[1]))
    elif kind == "update" and args[0].startswith("DROP GRAPH"):
        name = args[0].split("<", 1)[1].split(">", 1)[0]
        for triple in [t for t in triples if t[0] == name]:
            triples.discard(triple)
    elif kind == "declare":
        streams.setdefault(args[0], 1_000)
    elif kind == "drop":
        del streams[args[0]]  # declared again, it is a new stream: its timestamps start over
    elif kind == "batch":
        streams[args[0]] = args[1][-1][0]
    elif kind == "register":
        queries.append(args[0].split()[2])
    elif kind == "unregister":
        queries.remove(args[0])


# ----------------------------------------------------------------------- run
@dataclass
class Run:
    """A workload made against a real data directory, and a copy after each write."""

    writes: list[Write]
    accepted: list[bool]
    states: list[State]
    #: the log's last LSN after each write
    lsns: list[int]
    images: list[Path]
    #: the oracle's state before any write
    empty: State = ()


def open_directory(path: Path) -> DataDirectory:
    return DataDirectory.open(path, checkpoint_mb=1000)


def record_run(seed: int, count: int, work: Path) -> Run:
    writes, accepted, states = make_workload(seed, count)
    live = work / "live"
    data = open_directory(live)
    lsns, images = [], []
    try:
        for index, write in enumerate(writes):
            if write.kind == "checkpoint":
                data.checkpoint()
            elif write.kind == "restart":
                data.close()
                data = open_directory(live)
            else:
                try:
                    apply(write, data.store, data.engine)
                    ok = True
                except Exception:
                    ok = False
                if ok != accepted[index]:
                    outcome = "acknowledged" if ok else "refused"
                    raise AssertionError(f"write {index} ({write.kind}) was {outcome} by the data directory "
                                         "but not by the oracle")
            lsns.append(data.wal.last_lsn)
            image = work / f"image-{index:04d}"
            shutil.copytree(live, image, ignore=shutil.ignore_patterns("LOCK"))
            images.append(image)
    finally:
        data.close()
    return Run(writes, accepted, states, lsns, images, state_of(Store(), StreamEngine(Store())))


# -------------------------------------------------------------- the checks
@dataclass
class Figures:
    cases: Counter = field(default_factory=Counter)
    restarts: int = 0
    recovery_seconds: list[float] = field(default_factory=list)
    acknowledged_lost: int = 0
    refused_present: int = 0
    #: truncations whose plan warned that the catalog may hold a newer definition (see log_repair)
    recover_warnings: int = 0
    failures: list[str] = field(default_factory=list)

    def summary(self) -> str:
        seconds = self.recovery_seconds or [0.0]
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self.cases.items()))
        return (f"cases {sum(self.cases.values())} ({kinds}); restarts {self.restarts}; recovery median "
                f"{statistics.median(seconds) * 1000:.0f} ms, max {max(seconds) * 1000:.0f} ms; acknowledged "
                f"writes lost {self.acknowledged_lost}; refused writes present {self.refused_present}; "
                f"recover warnings {self.recover_warnings}; failures {len(self.failures)}")


def restart(path: Path, figures: Figures) -> DataDirectory:
    started = time.monotonic()
    data = open_directory(path)
    figures.recovery_seconds.append(time.monotonic() - started)
    figures.restarts += 1
    return data


def compare(case: str, got: State, expected: State, figures: Figures) -> bool:
    """Whether ``got`` is ``expected``; counts what is missing and what is extra."""
    if got == expected:
        return True
    missing = (len(expected[0] - got[0]) + len(expected[1] - got[1]) + len(set(expected[2]) - set(got[2]))
               + len(set(expected[3]) - set(got[3])))
    extra = (len(got[0] - expected[0]) + len(got[1] - expected[1]) + len(set(got[2]) - set(expected[2]))
             + len(set(got[3]) - set(expected[3])))
    figures.acknowledged_lost += missing
    figures.refused_present += extra
    figures.failures.append(f"{case}: {missing} acknowledged things missing, {extra} unacknowledged present; "
                            f"missing e.g. {_sample(expected, got)}, extra e.g. {_sample(got, expected)}")
    return False


def _sample(a: State, b: State) -> list:
    return [sorted(set(x) - set(y))[:3] for x, y in zip(a, b, strict=True)]


def check_restart(case: str, path: Path, expected: State, figures: Figures, then_write: bool = True) -> None:
    """Restart on ``path`` and compare; then (``then_write``) three writes in
    a child that is killed once they are acknowledged, and two restarts
    that must hold them."""
    data = restart(path, figures)
    try:
        ok = compare(case, state_of(data.store, data.engine), expected, figures)
    finally:
        data.close()
    if not ok or not then_write:
        return
    triples = [(f"{EX}after", f"{EX}p", f"{case}-{n}") for n in range(3)]
    try:
        acknowledged = run_child(lambda: _write_then_die(path, triples))
    except ChildNotKilled as exc:
        figures.failures.append(f"{case}: the child making writes after the restart failed: {exc}")
        return
    if acknowledged != len(triples):
        figures.failures.append(f"{case}: the child acknowledged {acknowledged} of {len(triples)} writes")
        return
    quads = expected[0] | {(f"<{s}>", f"<{p}>", f'"{o}"', "None") for s, p, o in triples}
    with_writes = (quads, *expected[1:])
    for attempt in range(2):
        data = restart(path, figures)
        try:
            if not compare(f"{case} (writes after the restart, restart {attempt + 1})",
                           state_of(data.store, data.engine), with_writes, figures):
                return
        finally:
            data.close()


def _write_then_die(path: Path, triples: list) -> int:
    data = open_directory(path)
    done = 0
    for s, p, o in triples:
        data.store.update(f'INSERT DATA {{ <{s}> <{p}> "{o}" }}')
        done += 1
        _report(done)
    return done


# ---------------------------------------------------------------- children
_REPORT_FD: int | None = None


def _report(count: int) -> None:
    os.write(_REPORT_FD, f"{count}\n".encode())


def run_child(body: Callable[[], object], kill_points: Callable[[], None] | None = None) -> int:
    """Fork a child that arms ``kill_points`` (patches that SIGKILL it at a
    fault point), runs ``body`` and SIGKILLs itself; returns the last count
    it reported (see :func:`_report`), or -1 if it was not killed (it
    returned or raised: a fault point not reached)."""
    global _REPORT_FD
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(read_end)
            _REPORT_FD = write_end
            if kill_points is not None:
                kill_points()
            body()
            if kill_points is None:
                os.kill(os.getpid(), signal.SIGKILL)  # after its writes: as a kill -9
        except BaseException as exc:
            os.write(write_end, f"error {type(exc).__name__}: {exc}\n".encode())
        finally:
            os._exit(code)
    os.close(write_end)
    output = b""
    while chunk := os.read(read_end, 4096):
        output += chunk
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if not os.WIFSIGNALED(status) or os.WTERMSIG(status) != signal.SIGKILL:
        raise ChildNotKilled(output.decode(errors="replace").strip() or f"exit status {status}")
    counts = [int(line) for line in output.decode().split() if line.isdigit()]
    return counts[-1] if counts else 0


class ChildNotKilled(AssertionError):
    """A child ran past its fault point (or failed before it)."""


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def kill_at(owner, name: str, when: str, nth: int = 1, only: Callable[..., bool] | None = None) -> None:
    """Patch ``owner.name`` so that its ``nth`` call (counting those ``only``
    accepts) kills the process ``when`` ("before" or "after") it runs."""
    original = getattr(owner, name)
    calls = [0]

    def patched(*args, **kwargs):
        if only is None or only(*args, **kwargs):
            calls[0] += 1
            if calls[0] == nth and when == "before":
                die()
        result = original(*args, **kwargs)
        if calls[0] == nth and when == "after" and (only is None or only(*args, **kwargs)):
            die()
        return result

    setattr(owner, name, patched)


def checkpoint_steps() -> dict[str, Callable[[], None]]:
    """Where a checkpoint can be killed, as patches to arm in a child."""
    from pathlib import Path as _Path

    from engine.catalog import Catalog
    from engine.durability import data_directory

    def segment(path, *_a, **_k) -> bool:
        return str(path).endswith(".log")

    return {
        "before the store directory": lambda: kill_at(data_directory, "write_checkpoint", "before"),
        "after the store directory": lambda: kill_at(data_directory, "write_checkpoint", "after"),
        "after the carried batches": lambda: kill_at(data_directory.DataDirectory, "_write_carry", "after"),
        "before the catalog row": lambda: kill_at(Catalog, "record_checkpoint", "before"),
        "after the catalog row": lambda: kill_at(Catalog, "record_checkpoint", "after"),
        "after one old segment is removed": lambda: kill_at(_Path, "unlink", "after", only=segment),
        "after the old segments are removed": lambda: kill_at(data_directory.DataDirectory, "_forget_before",
                                                              "after"),
    }


def recovery_steps(replays: int) -> dict[str, Callable[[], None]]:
    from engine.durability import data_directory, log_scan

    steps = {"after the torn tail is cut": lambda: kill_at(log_scan, "cut_torn_tail", "after")}
    if replays:
        steps["in the middle of the replay"] = lambda: kill_at(data_directory, "_replay", "before",
                                                               nth=max(1, replays // 2))
    return steps


# ------------------------------------------------------------------- faults
def _live_records(path: Path, after: int) -> list:
    return scan_log(path / "wal", after).records


def _checkpoint_lsn(path: Path) -> int:
    from engine.catalog import Catalog

    catalog = Catalog.for_directory(path)
    try:
        last = catalog.last_checkpoint()
        return last.lsn if last is not None else 0
    finally:
        catalog.close()


def _state_before(run: Run, lsn: int) -> State:
    """The oracle's state with the writes whose records are below ``lsn``."""
    index = -1
    for i, last in enumerate(run.lsns):
        if last < lsn:
            index = i
    return run.states[index] if index >= 0 else run.empty


def _copy(image: Path, case_dir: Path) -> Path:
    shutil.rmtree(case_dir, ignore_errors=True)
    shutil.copytree(image, case_dir)
    return case_dir


def fault_boundary(run: Run, index: int, case_dir: Path, figures: Figures, rng: random.Random) -> None:
    path = _copy(run.images[index], case_dir)
    figures.cases["boundary"] += 1
    check_restart(f"boundary after write {index}", path, run.states[index], figures)


def fault_torn(run: Run, index: int, case_dir: Path, figures: Figures, rng: random.Random,
               zeros: bool = False) -> bool:
    """A prefix of write ``index + 1``'s record after the copy of write ``index``."""
    if index + 1 >= len(run.images) or run.lsns[index + 1] != run.lsns[index] + 1:
        return False
    following = run.images[index + 1]
    record = next((r for r in _live_records(following, _checkpoint_lsn(following))
                   if r.lsn == run.lsns[index + 1]), None)
    if record is None:
        return False
    segment = case_dir / "wal" / record.segment.name
    path = _copy(run.images[index], case_dir)
    if not segment.exists() or segment.stat().st_size != record.offset:
        return False  # the record went to a segment this copy does not end with
    whole = record.segment.read_bytes()[record.offset:record.offset + 16 + len(record.payload)]
    cut = rng.randint(1, len(whole) - 1)
    with segment.open("ab") as out:
        out.write(whole[:cut] + (bytes(len(whole) - cut + rng.choice([0, 4096])) if zeros else b""))
    kind = "torn-zeros" if zeros else "torn"
    figures.cases[kind] += 1
    check_restart(f"{kind} ({cut} of {len(whole)} bytes of LSN {record.lsn}) after write {index}", path,
                  run.states[index], figures)
    return True


def fault_flip(run: Run, index: int, case_dir: Path, figures: Figures, rng: random.Random,
               tail: bool = False, cli: bool = False) -> bool:
    """One bit flipped in a record after the checkpoint (the tail record with ``tail``)."""
    path = _copy(run.images[index], case_dir)
    records = _live_records(path, _checkpoint_lsn(path))
    choices = [r for r in records if (r is records[-1]) == tail] if records else []
    if not choices or (tail and records[-1].segment != max((path / "wal").glob("*.log"))):
        return False  # no such record (the tail: only in the last segment)
    record = rng.choice(choices)
    size = 16 + len(record.payload)
    byte = record.offset + rng.randrange(size)
    segment = path / "wal" / record.segment.name
    data = bytearray(segment.read_bytes())
    data[byte] ^= 1 << rng.randrange(8)
    segment.write_bytes(bytes(data))
    kind = "flip-tail" if tail else "flip"
    figures.cases[kind] += 1
    case = f"{kind} (byte {byte - record.offset} of LSN {record.lsn}) after write {index}"
    expect_refusal_then_recover(case, path, segment.name, record.offset, record.lsn, run, figures, cli)
    return True


def fault_gap(run: Run, index: int, case_dir: Path, figures: Figures, rng: random.Random) -> bool:
    """A segment after the checkpoint removed (not the last: then the gap is in the middle)."""
    path = _copy(run.images[index], case_dir)
    checkpoint = _checkpoint_lsn(path)
    segments = [s for s in scan_log(path / "wal", checkpoint).segments if s.lsns and s.lsns[1] > checkpoint]
    if len(segments) < 2:
        return False
    gone = rng.choice(segments[:-1])
    gone.path.unlink()
    following = segments[segments.index(gone) + 1]
    figures.cases["gap"] += 1
    first_lost = max(gone.lsns[0], checkpoint + 1)
    expect_refusal_then_recover(f"gap ({gone.path.name} removed) after write {index}", path,
                                following.path.name, 0, first_lost, run, figures)
    return True


def expect_refusal_then_recover(case: str, path: Path, segment: str, offset: int, first_lost: int, run: Run,
                                figures: Figures, cli: bool = False) -> None:
    figures.restarts += 1
    try:
        data = open_directory(path)
    except LogDamaged as exc:
        damage = exc.damage
        if (damage.segment.name, damage.offset, damage.first_lost) != (segment, offset, first_lost):
            figures.failures.append(f"{case}: refused at {damage.segment.name} byte {damage.offset} LSN "
                                    f"{damage.first_lost}, not {segment} byte {offset} LSN {first_lost}")
            return
        if segment not in str(exc) or f"byte {offset}" not in str(exc):
            figures.failures.append(f"{case}: the refusal does not name the segment and byte: {exc}")
            return
    else:
        data.close()
        figures.failures.append(f"{case}: the server started on a damaged log")
        figures.acknowledged_lost += 1
        return
    if cli:
        done = subprocess.run([sys.executable, "-m", "endpoint.cli", "recover", "--data-dir", str(path),
                               "--truncate-at", str(first_lost), "--yes"], capture_output=True, text=True,
                              cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
        if done.returncode != 0:
            figures.failures.append(f"{case}: rivulet recover failed: {done.stderr}")
            return
    else:
        from engine.catalog import Catalog

        catalog = Catalog.for_directory(path)
        try:
            report = log_repair.inspect(path, catalog)
            plan = log_repair.plan_truncation(report, first_lost, catalog)
            figures.recover_warnings += bool(plan.warnings)  # the state is checked all the same
            log_repair.truncate(plan, catalog)
        finally:
            catalog.close()
    check_restart(f"{case}, recovered", path, _state_before(run, first_lost), figures)


def fault_checkpoint(run: Run, index: int, case_dir: Path, figures: Figures, rng: random.Random,
                     step: str) -> bool:
    if not _anything_to_checkpoint(run, index):
        return False  # checkpoint() would return at once
    path = _copy(run.images[index], case_dir)

    def body() -> None:
        data = open_directory(path)
        data.checkpoint()

    try:
        run_child(body, checkpoint_steps()[step])
    except ChildNotKilled as exc:
        figures.failures.append(f"checkpoint killed {step} after write {index}: not killed there: {exc}")
        return True
    figures.cases["checkpoint"] += 1
    check_restart(f"checkpoint killed {step} after write {index}", path, run.states[index], figures)
    return True


def _anything_to_checkpoint(run: Run, index: int) -> bool:
    """Whether write ``index``'s copy has records after its checkpoint (else checkpoint() returns at once)."""
    path = run.images[index]
    return _live_records(path, _checkpoint_lsn(path)) != []


def fault_recovery(run: Run, index: int, case_dir: Path, figures: Figures, rng: random.Random,
                   step: str) -> bool:
    path = _copy(run.images[index], case_dir)
    records = _live_records(path, _checkpoint_lsn(path))
    if step == "after the torn tail is cut":
        segment = max((path / "wal").glob("*.log"))
        with segment.open("ab") as out:
            out.write(bytes(rng.randint(1, 40)))  # zeros: a tail the OS never wrote
    steps = recovery_steps(len(records))
    if step not in steps:
        return False
    try:
        run_child(lambda: open_directory(path), steps[step])
    except ChildNotKilled as exc:
        figures.failures.append(f"recovery killed {step} after write {index}: not killed there: {exc}")
        return True
    figures.cases["recovery"] += 1
    check_restart(f"recovery killed {step} after write {index}", path, run.states[index], figures)
    return True


# ------------------------------------------------- the coordinator's log
def compaction_steps() -> dict[str, Callable[[], None]]:
    """Where a cluster coordinator's log compaction can be killed."""
    from pathlib import Path as _Path

    from engine.cluster import coordinator_log

    def compacted(path, *_a, **_k) -> bool:
        return str(path).endswith(".partial")

    def segment(path, *_a, **_k) -> bool:
        return str(path).endswith(".log")

    return {
        "after the new segment": lambda: kill_at(coordinator_log.WriteAheadLog, "rotate", "after"),
        "before compacted.json is renamed": lambda: kill_at(_Path, "rename", "before", only=compacted),
        "after compacted.json": lambda: kill_at(coordinator_log, "fsync_directory", "after"),
        "after one old segment is removed": lambda: kill_at(_Path, "unlink", "after", only=segment),
    }


def fault_compaction(work: Path, figures: Figures, rng: random.Random, step: str) -> None:
    """Commits logged by a coordinator (a restart between some), a torn commit
    at the end half the time, then a compaction killed at ``step``: the
    restarted log must hold every commit logged, with its terms."""
    import numpy as np

    from engine.cluster.coordinator_log import Changes, CoordinatorLog
    from engine.cluster.shard_ops import Op
    from engine.rdf import MemoryTermDictionary

    directory = work / "coordinator"
    shutil.rmtree(directory, ignore_errors=True)
    commits = rng.randint(3, 12)
    spelled: dict[int, str] = {}

    def log_commits(log: CoordinatorLog, versions: range) -> None:
        for version in versions:
            ids = [log.terms.encode(IRI(f"{EX}c{version}-{n}")) for n in range(3)]
            spelled.update({i: f"{EX}c{version}-{n}" for n, i in enumerate(ids)})
            log.log(version, [Op("add", 0, tuple(np.array([i]) for i in ids))])

    middle = rng.randint(1, commits - 1)
    log = CoordinatorLog(directory, MemoryTermDictionary(), 0, sync=False)
    log_commits(log, range(1, middle + 1))
    log.close()
    log = CoordinatorLog(directory, MemoryTermDictionary(), 0, sync=False)  # a new segment
    log_commits(log, range(middle + 1, commits + 1))
    log.close()
    if rng.random() < 0.5:  # a commit torn by a kill before the compaction's restart
        last = max(directory.glob("*.log"))
        with last.open("ab") as out:
            out.write(b"\x00" * rng.randint(1, 30))
    # (a segment goes only if every commit in it is at or before upto)
    upto = rng.randint(middle if step.startswith("after one old segment") else 1, commits)

    def body() -> None:
        opened = CoordinatorLog(directory, MemoryTermDictionary(), 0, sync=False)
        opened.compact(upto, Changes(upto))

    try:
        run_child(body, compaction_steps()[step])
    except ChildNotKilled as exc:
        figures.failures.append(f"compaction killed {step}: not killed there: {exc}")
        return
    figures.cases["compaction"] += 1
    figures.restarts += 1
    started = time.monotonic()
    try:
        terms = MemoryTermDictionary()
        log = CoordinatorLog(directory, terms, 0, sync=False)
    except Exception as exc:
        figures.failures.append(f"compaction killed {step}: the coordinator log did not open: {exc}")
        return
    figures.recovery_seconds.append(time.monotonic() - started)
    try:
        kept = [version for version, _ in log.commits_after(log.compacted.version)]
        expected = list(range(log.compacted.version + 1, commits + 1))
        wrong_terms = [i for i, name in spelled.items() if str(terms.decode(i)) != f"<{name}>"]
        if log.version != commits or kept != expected or wrong_terms:
            figures.acknowledged_lost += max(0, commits - log.version) + len(wrong_terms)
            figures.failures.append(f"compaction killed {step}: version {log.version} of {commits}, commits "
                                    f"{kept} not {expected}, {len(wrong_terms)} terms wrong")
    finally:
        log.close()


# ------------------------------------------------------------------ driver
def run_harness(restarts: int, seed: int, writes: int = 120, deadline_s: float = 3600.0,
                work: Path | None = None, log: Callable[[str], None] = lambda _line: None) -> Figures:
    """Fault-injected restarts (at least ``restarts``, or until ``deadline_s``),
    over workloads of ``writes`` writes each, seeded from ``seed``."""
    figures = Figures()
    stop_at = time.monotonic() + deadline_s
    owned = work is None
    work = work or Path(tempfile.mkdtemp(prefix="rivulet-crash-"))
    round_ = 0
    try:
        while figures.restarts < restarts and time.monotonic() < stop_at:
            round_dir = work / f"round-{round_}"
            run = record_run(seed + round_, writes, round_dir)
            rng = random.Random(seed * 1000 + round_)
            # each case is a copy put where the run was: the catalog names checkpoints by absolute path
            _faults_of_a_run(run, round_dir / "live", figures, rng, restarts, stop_at)
            log(f"round {round_}: {figures.summary()}")
            shutil.rmtree(round_dir, ignore_errors=True)
            round_ += 1
    finally:
        if owned:
            shutil.rmtree(work, ignore_errors=True)
    return figures


def _faults_of_a_run(run: Run, case_dir: Path, figures: Figures, rng: random.Random, restarts: int,
                     stop_at: float) -> None:
    """Every record boundary and a torn record after it; flips, gaps and kills at a sample of the copies."""
    steps = list(checkpoint_steps())
    recovery = ["after the torn tail is cut", "in the middle of the replay"]
    compaction = list(compaction_steps())
    flips = 0
    for index in range(len(run.images)):
        if figures.restarts >= restarts or time.monotonic() >= stop_at:
            return
        fault_boundary(run, index, case_dir, figures, rng)
        fault_torn(run, index, case_dir, figures, rng, zeros=rng.random() < 0.3)
        if rng.random() < 0.5:
            flips += fault_flip(run, index, case_dir, figures, rng, tail=rng.random() < 0.25,
                                cli=flips % 10 == 9)
        if rng.random() < 0.4:  # (possible only with two segments after the checkpoint)
            fault_gap(run, index, case_dir, figures, rng)
        if rng.random() < 0.3:
            fault_checkpoint(run, index, case_dir, figures, rng, steps[index % len(steps)])
        if rng.random() < 0.15:
            fault_recovery(run, index, case_dir, figures, rng, recovery[index % len(recovery)])
        if rng.random() < 0.1:
            fault_compaction(case_dir.parent, figures, rng, compaction[index % len(compaction)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restarts", type=int, default=1000, help="fault-injected restarts at least (1000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--writes", type=int, default=120, help="writes per workload (120)")
    parser.add_argument("--deadline", type=float, default=3600.0, help="seconds at most (3600)")
    args = parser.parse_args(argv)
    logging.getLogger("rivulet").setLevel(logging.ERROR)  # a torn tail cut at every other restart
    started = time.monotonic()
    figures = run_harness(args.restarts, args.seed, args.writes, args.deadline,
                          log=lambda line: print(line, flush=True))
    print(figures.summary() + f"; {time.monotonic() - started:.0f} s")
    for failure in figures.failures[:20]:
        print("FAILED:", failure)
    return 1 if figures.failures or figures.acknowledged_lost or figures.refused_present else 0


if __name__ == "__main__":
    sys.exit(main())
