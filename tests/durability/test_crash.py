"""SIGKILL under mixed load, again and again: no acknowledged write may be lost.

``rivulet serve --data-dir D`` promises that a write answered 2xx survives a
crash, that a write cut off by a crash is all there or not there at all,
and that continuous queries and their SSE subscribers resume where they
were. This test holds the server to it the way a crash would test it: the
real server runs as a child process on one data directory, several client
threads load it with every kind of write at once, and at a random moment
(seeded) it is killed with SIGKILL, at least 20 times; a few kills land
while the server is still recovering from the previous one, a few while it
shuts down after a SIGTERM (inside its last checkpoint). With
``--checkpoint-mb 0.05`` checkpoints are taken every few hundred writes in
the background, so kills land inside them too. After every
restart, and at the end, what the server holds is compared with what each
client was told.

Every write is recorded with its outcome: *acknowledged* (a 2xx answer came
back), *refused* (4xx: it must have changed nothing; some writes are
malformed or fail at run time on purpose) or *unknown* (the connection broke:
the kill landed while it was in flight). The checks:

- every acknowledged write is there: updates and graph store writes by
  SELECT over ``/sparql``; stream batches by their timeless triples, which the
  stream's stored graph absorbs, and by the watermark (``GET /streams``),
  which must not go back below the newest acknowledged timestamp; stream
  declarations (with their definition) and query registrations (and
  unregistrations) by ``GET /streams`` and ``GET /queries``; the stream a
  ``REGISTER STREAM`` query feeds holds exactly the triples of the windows
  it reported; a write whose
  answer depends on the state (a PUT answers 201 for a new graph, 204 for
  an existing one; a re-declaration 200) must get the answer of the state
  the acknowledged writes left;
- an unknown write is all there or all absent (an update of three triples in
  two graphs, a graph PUT of several triples, a stream batch), and once a
  restart has shown which, it stays so; a refused write is absent;
- an update whose values are computed when it runs (STRUUID, NOW, a blank
  node) comes back with the values it was read back with, not new ones;
- the server logs no traceback;
- the server restarts and answers after every kill (the data directory is
  never left unreadable), and once after a clean shutdown;
- each SSE reader, reconnecting with ``Last-Event-ID`` after every kill, has
  received the events 1, 2, 3, ... with no duplicate and no gap, their
  windows one STEP apart, and each window's count equal to the triples of
  the batches the server finally holds in that window (an event computed
  from a batch that a crash then lost would be a result the server denies);
  a new subscriber at the end, resuming from before the retained events,
  gets the same events the live one got.

One line sums it up: kills, writes acknowledged, writes lost (must be 0),
recovery time (kill to first answer), events. The suite's variant (12 kills)
is sized for about 45 s on two cores; a longer run by hand:

    python -m tests.durability.test_crash --kills 100
    python -m tests.durability.test_crash --kills 100 --sync none --seed 7
    python -m tests.durability.test_crash --memory     # no kills: the checks against an in-memory server

or ``RIVULET_CRASH_KILLS=100 pytest tests/durability`` (``RIVULET_CRASH_SEED``,
``RIVULET_CRASH_SYNC`` too). Every loop stops at its count or its deadline,
whichever comes first; only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import bisect
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Collection, Hashable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson
import pytest

from benchmarks.durability import ServerDidNotStart, ServerProcess, has_data_dir

SEED = 20261124
EX = "http://ex/"
UPDATE_GRAPH = f"{EX}ug"
#: the two streams the load writes to: A keeps one predicate as timing data (only in its
#: transient log, so only the windows can show it was recovered), B absorbs everything
STREAMS = {
    "A": {"iri": f"{EX}stream/A", "timing": [f"{EX}p/timing"]},
    "B": {"iri": f"{EX}stream/B"},
}
#: the registrations made before any load, each with an SSE reader; by POST /queries and by /sparql
READ_QUERIES = {"counts": "A", "counts_b": "B"}
#: a query whose windows over B become items of a stream it declares (REGISTER STREAM): its
#: stored graph must hold exactly the B triples of the windows closed so far, across recoveries
DERIVED = f"{EX}stream/derived"
DERIVED_NAME = "derived"
DERIVED_REGISTRATION = (f"REGISTER STREAM <{DERIVED}> AS CONSTRUCT {{ ?s <{EX}p/seen> ?o }} "
                        f"FROM STREAM <{EX}stream/B> [RANGE 1s STEP 1s] WHERE {{ ?s <{EX}p/val> ?o }}")
BASE_MS = 1_700_000_000_000
#: stream time between two batches of one stream; four batches close one window
BATCH_STEP_MS = 250
WINDOW_MS = 1000
#: timeless triples in one stream batch (A adds one timing triple)
BATCH_TRIPLES = 12
#: named graphs replaced by PUT, and named graphs appended to by POST
PUT_GRAPHS = 3
POST_GRAPHS = 2
#: extra registrations alive at most at once (each is evaluated at every window of B)
EXTRA_QUERIES = 4
BATCH = "application/x-timestamped-ntriples"
NTRIPLES = "application/n-triples"
SPARQL_QUERY = "application/sparql-query"
SPARQL_UPDATE = "application/sparql-update"
RESULTS_JSON = "application/sparql-results+json"
ACKED, REFUSED, UNKNOWN = "acknowledged", "refused", "unknown"
PRESENT, ABSENT = "present", "absent"
#: seconds one request may take: an fsync under load is slow, a hang is a failure
REQUEST_TIMEOUT_S = 30.0
#: seconds the in-flight requests may take to end once the server is killed (they fail at once)
DRAIN_TIMEOUT_S = 30.0
#: seconds an SSE reader may take to catch up with the windows reported
CATCH_UP_S = 30.0
#: events the server keeps per query for Last-Event-ID (docs/http-api.md)
RETAINED_EVENTS = 1000


@dataclass
class Config:
    """One run: how many kills, how the server syncs, how long the load runs between kills."""

    kills: int = 20
    seed: int = SEED
    sync: str = "always"
    checkpoint_mb: float = 0.05
    #: seconds of load before each kill: uniform in this range (seeded)
    load_s: tuple[float, float] = (0.3, 1.3)
    #: share of the stretches of load that last ``long_load_s`` instead: a background checkpoint
    #: takes about a second here, so most short stretches are killed inside one (which must be
    #: harmless), and these let some finish (so recoveries start from a checkpoint, not only the log)
    long_load_share: float = 0.2
    long_load_s: tuple[float, float] = (2.0, 3.5)
    #: share of kills that hit the restarted server again before it has answered
    recovery_kill_share: float = 0.25
    #: share of kills that come during a clean shutdown (SIGTERM, then SIGKILL before it has ended)
    shutdown_kill_share: float = 0.1
    #: the loop of kills stops here even if ``kills`` were not reached (the report says so); it
    #: only keeps a hang from running on: a restart takes 1-2 s on a quiet machine (20 kills in
    #: about 75 s) but 5-7 s on one whose two cores are shared with other work
    budget_s: float = 8.0 * 20
    #: False: no kills and no --data-dir; each cycle pauses the load and checks (develop the checks)
    durable: bool = True
    keep: bool = False


@dataclass
class Entry:
    """One write of one key, as the client saw it."""

    cycle: int
    what: str
    state: Hashable
    outcome: str
    status: int | None

    def __str__(self) -> str:
        answer = "no answer" if self.status is None else str(self.status)
        return f"cycle {self.cycle}: {self.what} ({answer}, {self.outcome})"


class Facts:
    """The states one kind of written thing may be found in, per key.

    Every key starts absent. An acknowledged write makes its new state the
    only one allowed; an unknown write allows its new state beside the
    current ones; a refused write changes nothing. Each check pins every
    key to what the server showed, so an unknown write is resolved once
    and must stay resolved. Writes of one key are sequential (one thread
    owns each key, and every unknown is resolved before the load resumes),
    so this is exact."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.allowed: dict[Hashable, set[Hashable]] = {}
        self.history: dict[Hashable, list[Entry]] = defaultdict(list)
        #: triples of an all-or-none write, to tell a partial one from a whole one
        self.sizes: dict[Hashable, int] = {}
        self.lock = threading.Lock()

    def record(self, key: Hashable, entry: Entry, size: int | None = None) -> None:
        with self.lock:
            self.history[key].append(entry)
            if size is not None:
                self.sizes[key] = size
            current = self.allowed.get(key, {ABSENT})
            if entry.outcome == ACKED:
                self.allowed[key] = {entry.state}
            elif entry.outcome == UNKNOWN:
                self.allowed[key] = current | {entry.state}
            else:
                self.allowed[key] = current

    def states(self, key: Hashable) -> set[Hashable]:
        with self.lock:
            return set(self.allowed.get(key, {ABSENT}))

    def keys_in(self, state: Hashable) -> list[Hashable]:
        """The keys whose only allowed state is ``state``."""
        with self.lock:
            return [key for key, allowed in self.allowed.items() if allowed == {state}]

    def size(self, key: Hashable) -> int | None:
        with self.lock:
            return self.sizes.get(key)

    def check(self, observed: dict[Hashable, Hashable], where: str, tally: Tally) -> list[str]:
        """Compare what the server holds with what may be; pin every key to it."""
        problems = []
        with self.lock:
            for key in sorted(set(self.allowed) | set(observed), key=repr):
                got = observed.get(key, ABSENT)
                allowed = self.allowed.get(key, {ABSENT})
                history = self.history.get(key, [])
                if got not in allowed:
                    acked = any(e.outcome == ACKED for e in history)
                    if acked:
                        tally.lost += 1
                    else:
                        tally.violations += 1
                    label = "LOST acknowledged write" if acked else "inconsistent state"
                    writes = "; ".join(map(str, history)) or "none: nothing was ever written there"
                    problems.append(f"{where}: {label}: {self.kind} {key!r} is {got!r}, expected "
                                    f"{' or '.join(sorted(map(repr, allowed)))}; writes: {writes}")
                elif len(allowed) > 1 and history:
                    tally.unknown_resolved[got == history[-1].state] += 1
                self.allowed[key] = {got}
        return problems


@dataclass
class Tally:
    """Counts for the summary line."""

    outcomes: Counter = field(default_factory=Counter)
    #: unknown writes found applied (True) or not (False)
    unknown_resolved: Counter = field(default_factory=Counter)
    lost: int = 0
    violations: int = 0


class Gate:
    """Lets the load threads run between kills and stops them for a check.

    ``close`` stops new requests; requests in flight go on (a kill must land
    on them); ``drain`` waits until none is left, so that every unknown write
    has ended before the server is restarted and checked."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._open = False
        self._busy = 0

    def enter(self, timeout: float = 0.2) -> bool:
        with self._cond:
            if not self._open:
                self._cond.wait(timeout)
            if not self._open:
                return False
            self._busy += 1
            return True

    def leave(self) -> None:
        with self._cond:
            self._busy -= 1
            self._cond.notify_all()

    def open(self) -> None:
        with self._cond:
            self._open = True
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._open = False

    def drain(self, timeout: float) -> bool:
        with self._cond:
            self._open = False
            return self._cond.wait_for(lambda: self._busy == 0, timeout)


@dataclass
class Event:
    sequence: int
    start_ms: int
    end_ms: int
    count: int | None
    cycle: int
    event_id: str | None


class EventReader(threading.Thread):
    """One SSE subscriber of a query, as a long-lived client would be: it
    reads every event, and when the connection breaks (a kill) it reconnects,
    with ``Last-Event-ID`` set to the last sequence it received, until the
    run ends. Refusals while the server restarts (404 before the query is
    back, connection refused) are retried every 50 ms."""

    def __init__(self, run: CrashRun, query: str) -> None:
        super().__init__(name=f"sse-{query}", daemon=True)
        self.run_ = run
        self.query = query
        self.events: list[Event] = []
        self.connections = 0
        self.refusals: Counter = Counter()

    def run(self) -> None:
        try:
            with httpx.Client(timeout=httpx.Timeout(5.0, read=40.0)) as client:  # pings come every 15 s
                while not self.run_.stopping.is_set() and time.monotonic() < self.run_.hard_deadline:
                    try:
                        self._read_once(client)
                    except httpx.HTTPError:
                        pass
                    time.sleep(0.05)
        except Exception:  # noqa: BLE001 - a bug of the harness fails the run, with its trace
            self.run_.harness_error(traceback.format_exc())

    def _read_once(self, client: httpx.Client) -> None:
        headers = {"Accept": "text/event-stream"}
        if self.events:
            headers["Last-Event-ID"] = str(self.events[-1].sequence)
        url = f"{self.run_.server.url}/queries/{self.query}/events"
        with client.stream("GET", url, headers=headers) as response:
            if response.status_code != 200:
                self.refusals[response.status_code] += 1
                return
            self.connections += 1
            event_id, data = None, []
            for line in response.iter_lines():
                if self.run_.stopping.is_set():
                    return
                if line.startswith("id:"):
                    event_id = line[3:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].lstrip())
                elif line == "" and data:
                    self._keep(event_id, orjson.loads("\n".join(data)))
                    event_id, data = None, []

    def _keep(self, event_id: str | None, payload: dict) -> None:
        bindings = payload.get("results", {}).get("results", {}).get("bindings", [])
        count = int(bindings[0]["n"]["value"]) if bindings and "n" in bindings[0] else None
        window = payload["window"]
        self.events.append(Event(int(payload["sequence"]), int(window["start_ms"]), int(window["end_ms"]),
                                 count, self.run_.cycle, event_id))

    def last_sequence(self) -> int:
        return self.events[-1].sequence if self.events else 0


class Worker(threading.Thread):
    """A load thread: one write at a time while the gate is open, each
    recorded with its outcome. A fresh client after every restart, so that
    no request goes out on a connection to the killed server."""

    pause_s = 0.01

    def __init__(self, run: CrashRun, name: str, seed: int) -> None:
        super().__init__(name=name, daemon=True)
        self.run_ = run
        self.rng = random.Random(seed)
        self._client: httpx.Client | None = None
        self._client_cycle = -1

    def run(self) -> None:
        try:
            while not self.run_.stopping.is_set() and time.monotonic() < self.run_.hard_deadline:
                if not self.run_.gate.enter():
                    continue
                try:
                    self.step()
                finally:
                    self.run_.gate.leave()
                time.sleep(self.pause_s)
        except Exception:  # noqa: BLE001 - a bug of the harness fails the run, with its trace
            self.run_.harness_error(traceback.format_exc())
        finally:
            if self._client is not None:
                self._client.close()

    def step(self) -> None:
        raise NotImplementedError

    def client(self) -> httpx.Client:
        if self._client is None or self._client_cycle != self.run_.cycle:
            if self._client is not None:
                self._client.close()
            self._client = httpx.Client(base_url=self.run_.server.url, timeout=REQUEST_TIMEOUT_S)
            self._client_cycle = self.run_.cycle
        return self._client

    def write(self, what: str, expect: Collection[int], method: str, path: str,
              **kwargs) -> tuple[str, int | None]:
        """Send one write; its outcome, and a problem if the answer is not one ``expect``s."""
        return self.run_.write(self.client(), what, expect, method, path, **kwargs)


def update_triples(n: int) -> str:
    """Three triples of subject ``u/n``, two in the default graph and one in
    a named graph: an update of them must apply to both graphs or neither."""
    s = f"<{EX}u/{n}>"
    return f'{s} <{EX}p/num> {n} . {s} <{EX}p/tag> "t{n}" . GRAPH <{UPDATE_GRAPH}> {{ {s} <{EX}p/in> "{n}" }}'


class UpdateWorker(Worker):
    """SPARQL updates: INSERT DATA of new subjects, DELETE DATA of
    acknowledged ones, and updates that must be refused (malformed, or
    failing at run time after a first operation that would insert)."""

    def step(self) -> None:
        run = self.run_
        r = self.rng.random()
        if r < 0.08 and (n := run.take_deletable()) is not None:
            outcome, status = self.write(f"DELETE DATA u/{n}", (204,), "POST", "/sparql",
                                         data={"update": f"DELETE DATA {{ {update_triples(n)} }}"})
            run.updates.record(n, Entry(run.cycle, f"DELETE DATA u/{n}", ABSENT, outcome, status))
            return
        n = run.next_id()
        if r < 0.17:
            self.computed(n)
            return
        if r < 0.21:
            if self.rng.random() < 0.5:
                text = f'INSERT DATA {{ <{EX}u/{n}> <{EX}p/num> {n} . <{EX}u/{n}> <{EX}p/tag> "oops }}'
                what = f"malformed INSERT DATA u/{n}"
            else:  # the LOAD fails (a loopback address is refused by policy): nothing may be inserted
                text = f"INSERT DATA {{ {update_triples(n)} }} ; LOAD <http://127.0.0.1:9/none>"
                what = f"INSERT DATA u/{n} ; failing LOAD"
            outcome, status = self.write(what, (400,), "POST", "/sparql", data={"update": text})
            run.updates.record(n, Entry(run.cycle, what, PRESENT, outcome, status), size=3)
            return
        outcome, status = self.write(f"INSERT DATA u/{n}", (204,), "POST", "/sparql",
                                     data={"update": f"INSERT DATA {{ {update_triples(n)} }}"})
        run.updates.record(n, Entry(run.cycle, f"INSERT DATA u/{n}", PRESENT, outcome, status), size=3)
        if outcome == ACKED:
            run.add_deletable(n)

    def computed(self, n: int) -> None:
        """An update whose triples are computed when it runs (STRUUID, NOW, a blank node),
        then read back: a recovery must bring back the values the server stored and
        answered then, not compute new ones (as replaying the update's text would)."""
        run = self.run_
        s = f"<{EX}r/{n}>"
        text = (f"INSERT {{ {s} <{EX}p/uuid> ?u ; <{EX}p/now> ?t ; <{EX}p/node> _:b }} "
                "WHERE { BIND(STRUUID() AS ?u) BIND(NOW() AS ?t) }")
        outcome, status = self.write(f"INSERT r/{n} (STRUUID, NOW, blank node)", (204,), "POST", "/sparql",
                                     data={"update": text})
        run.computed.record(n, Entry(run.cycle, "INSERT of computed values", PRESENT, outcome, status),
                            size=3)
        if outcome != ACKED:
            return
        try:
            response = self.client().get("/sparql", headers={"Accept": RESULTS_JSON}, params={
                "query": f"SELECT ?u ?t WHERE {{ {s} <{EX}p/uuid> ?u ; <{EX}p/now> ?t }}"})
        except httpx.TransportError:
            return  # killed before the read: the first check pins the values instead
        if response.status_code == 200:
            rows = response.json()["results"]["bindings"]
            if len(rows) == 1:
                run.computed_values[n] = (rows[0]["u"]["value"], rows[0]["t"]["value"])
            else:
                run.problem(f"cycle {run.cycle}: r/{n} read back as {rows} right after its INSERT")


def version_size(v: int) -> int:
    return 3 + v % 3


def version_lines(k: int, v: int) -> list[str]:
    """The body of version ``v`` of PUT graph ``k``: its subjects name the version."""
    return [f'<{EX}gp/{k}/v{v}/t{i}> <{EX}p/v> "{v}" .' for i in range(version_size(v))]


class GraphStoreWorker(Worker):
    """Graph store writes: PUT replacing a graph with a new version (all
    of a version or none), POST appending a batch, DELETE (or DROP GRAPH by
    /sparql), and bodies with a malformed last line (refused: their first
    lines must not be stored)."""

    pause_s = 0.02

    def step(self) -> None:
        run = self.run_
        r = self.rng.random()
        k = self.rng.randrange(PUT_GRAPHS)
        graph = f"{EX}gp/{k}"
        current = run.put_graphs.states(k)
        if r < 0.55 or (r < 0.62 and current == {ABSENT}):
            v = run.next_id()
            expect = (201,) if current == {ABSENT} else (204,) if ABSENT not in current else (201, 204)
            outcome, status = self.write(f"PUT gp/{k} v{v}", expect, "PUT", "/store", params={"graph": graph},
                                         content="\n".join(version_lines(k, v)),
                                         headers={"Content-Type": NTRIPLES})
            run.put_graphs.record(k, Entry(run.cycle, f"PUT v{v}", v, outcome, status))
        elif r < 0.62:
            if self.rng.random() < 0.5:
                outcome, status = self.write(f"DELETE gp/{k}", (204,), "DELETE", "/store",
                                             params={"graph": graph})
            else:
                outcome, status = self.write(f"DROP GRAPH gp/{k}", (204,), "POST", "/sparql",
                                             data={"update": f"DROP GRAPH <{graph}>"})
            run.put_graphs.record(k, Entry(run.cycle, "DELETE / DROP", ABSENT, outcome, status))
        elif r < 0.70:
            v = run.next_id()
            body = "\n".join([*version_lines(k, v)[:-1], f"<{EX}gp/{k}/v{v}/bad> <{EX}p/v> oops ."])
            outcome, status = self.write(f"malformed PUT gp/{k} v{v}", (400,), "PUT", "/store",
                                         params={"graph": graph}, content=body,
                                         headers={"Content-Type": NTRIPLES})
            run.put_graphs.record(k, Entry(run.cycle, f"malformed PUT v{v}", v, outcome, status))
        else:
            a = self.rng.randrange(POST_GRAPHS)
            b = run.next_id()
            lines = [f'<{EX}ga/{a}/b{b}/t{i}> <{EX}p/b> "{b}" .' for i in range(3)]
            bad = r > 0.95
            if bad:
                lines[-1] = f"<{EX}ga/{a}/b{b}/t2> <{EX}p/b> oops ."
            what = f"{'malformed ' if bad else ''}POST ga/{a} b{b}"
            outcome, status = self.write(what, (400,) if bad else (201, 204), "POST", "/store",
                                         params={"graph": f"{EX}ga/{a}"}, content="\n".join(lines),
                                         headers={"Content-Type": NTRIPLES})
            run.post_graphs.record((a, b), Entry(run.cycle, what, PRESENT, outcome, status), size=3)


class StreamWorker(Worker):
    """Batches to one stream, timestamps increasing by BATCH_STEP_MS a batch
    (so windows keep closing), each triple with its own subject; now and then
    a heartbeat, a late batch (409) or a malformed one (400)."""

    pause_s = 0.02

    def __init__(self, run: CrashRun, name: str, seed: int, stream: str) -> None:
        super().__init__(run, name, seed)
        self.stream = stream
        self.batch = 0

    def step(self) -> None:
        run, stream = self.run_, self.stream
        b = self.batch
        self.batch += 1
        ts = BASE_MS + b * BATCH_STEP_MS
        r = self.rng.random()
        if r < 0.05:
            run.sent_timestamp(stream, ts)
            outcome, status = self.write(f"heartbeat {stream} @{ts}", (202,), "POST", f"/streams/{stream}",
                                         content=str(ts), headers={"Content-Type": BATCH})
            if outcome == ACKED:
                run.acked_timestamp(stream, ts)
            return
        floor = run.watermark_floor(stream)
        if r < 0.09 and floor is not None and floor > BASE_MS + WINDOW_MS:
            label, stamps = f"late{b}", [floor - 100] * 3
            expect, what = (409,), f"late batch {stream} {label} @{floor - 100}"
        else:
            label, stamps = f"b{b}", [ts + i for i in range(BATCH_TRIPLES)]
            expect, what = (202,), f"batch {stream} {label} @{ts}"
        lines = [f'{t} <{EX}s{stream}/{label}/t{i}> <{EX}p/val> "{b}" .' for i, t in enumerate(stamps)]
        window_stamps = list(stamps)
        if STREAMS[stream].get("timing"):
            lines.insert(1, f'{stamps[0]} <{EX}s{stream}/{label}/t0> <{EX}p/timing> "{b}" .')
            window_stamps.append(stamps[0])
        if expect == (202,) and r < 0.12:
            lines.append(f"{stamps[-1]} <{EX}s{stream}/{label}/bad> <{EX}p/val> oops .")
            expect, what = (400,), "malformed " + what
        run.sent_timestamp(stream, max(stamps))
        outcome, status = self.write(what, expect, "POST", f"/streams/{stream}", content="\n".join(lines),
                                     headers={"Content-Type": BATCH})
        run.stream_batches.record((stream, label), Entry(run.cycle, what, PRESENT, outcome, status),
                                  size=len(stamps))
        run.window_stamps[(stream, label)] = window_stamps
        if outcome == ACKED:
            run.acked_timestamp(stream, max(stamps))


class ControlWorker(Worker):
    """Declarations and registrations: new streams, new queries over B (by
    /queries and by /sparql, C-SPARQL and RSP-QL), unregistrations, a
    re-declaration of A, and registrations that must be refused."""

    pause_s = 0.15

    def step(self) -> None:
        run = self.run_
        r = self.rng.random()
        alive = sorted(name for name in run.queries.keys_in(PRESENT) if str(name).startswith("extra_"))
        n = run.next_id()
        if r < 0.10:
            name = f"x{n}"
            outcome, status = self.write(f"declare {name}", (201,), "PUT", f"/streams/{name}",
                                         json={"iri": f"{EX}stream/{name}"})
            run.declarations.record(name, Entry(run.cycle, "declare", PRESENT, outcome, status))
        elif r < 0.15:
            outcome, status = self.write("re-declare A", (200,), "PUT", "/streams/A", json=STREAMS["A"])
            run.declarations.record("A", Entry(run.cycle, "re-declare", PRESENT, outcome, status))
        elif r < 0.25:
            if self.rng.random() < 0.5:
                name, expect = "counts", (409,)
                text = (f"REGISTER QUERY counts AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}stream/B> "
                        "[RANGE 1s STEP 1s] WHERE { ?s ?p ?o }")
            else:
                name, expect = f"ghost_{n}", (404,)
                text = (f"REGISTER QUERY {name} AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}stream/nowhere> "
                        "[RANGE 1s STEP 1s] WHERE { ?s ?p ?o }")
            outcome, status = self.write(f"refused registration {name}", expect, "POST", "/queries",
                                         content=text, headers={"Content-Type": SPARQL_QUERY})
            run.queries.record(name, Entry(run.cycle, "refused registration", PRESENT, outcome, status))
        elif alive and (len(alive) >= EXTRA_QUERIES or r < 0.45):
            name = alive[0]
            outcome, status = self.write(f"unregister {name}", (204,), "DELETE", f"/queries/{name}")
            run.queries.record(name, Entry(run.cycle, "unregister", ABSENT, outcome, status))
        else:
            name = f"extra_{n}"
            if self.rng.random() < 0.5:
                text = (f"REGISTER QUERY {name} AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}stream/B> "
                        "[RANGE 2s STEP 1s] WHERE { ?s ?p ?o }")
            else:
                text = (f"REGISTER RSTREAM {name} AS SELECT (COUNT(*) AS ?n) FROM NAMED WINDOW <{EX}w> "
                        f"ON <{EX}stream/B> [RANGE PT2S STEP PT1S] WHERE {{ WINDOW <{EX}w> {{ ?s ?p ?o }} }}")
            if self.rng.random() < 0.3:
                outcome, status = self.write(f"register {name} by /sparql", (201,), "POST", "/sparql",
                                             content=text, headers={"Content-Type": SPARQL_UPDATE})
            else:
                outcome, status = self.write(f"register {name}", (201,), "POST", "/queries", content=text,
                                             headers={"Content-Type": SPARQL_QUERY})
            run.queries.record(name, Entry(run.cycle, "register", PRESENT, outcome, status))


@dataclass
class Report:
    config: Config
    kills: int = 0
    recovery_kills: int = 0
    shutdown_kills: int = 0
    #: background checkpoints completed, as the server's log tells (None: no log)
    checkpoints: int | None = None
    recoveries: list[float] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)
    problems: list[str] = field(default_factory=list)
    events: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    stopped_early: str | None = None
    #: where the data directory and the server log were kept (a failed run keeps them)
    kept: Path | None = None

    def summary(self) -> str:
        outcomes = self.tally.outcomes
        resolved = self.tally.unknown_resolved
        recovery = "no recovery measured"
        if self.recoveries:
            recovery = (f"recovery median {statistics.median(self.recoveries):.2f} s, "
                        f"max {max(self.recoveries):.2f} s")
        mode = f"sync {self.config.sync}" if self.config.durable else "in memory, paused instead of killed"
        events = ", ".join(f"{name} {count}" for name, count in self.events.items())
        return (f"durability: {self.kills} kills ({self.recovery_kills} during recovery, "
                f"{self.shutdown_kills} during a shutdown), "
                f"{outcomes[ACKED]:,} writes acknowledged, {outcomes[REFUSED]:,} refused, "
                f"{outcomes[UNKNOWN]:,} unknown ({resolved[True]} found applied, {resolved[False]} not, "
                f"{outcomes[UNKNOWN] - resolved[True] - resolved[False]} that leave no trace either way), "
                f"writes lost: {self.tally.lost}, other violations: {self.tally.violations}, "
                f"problems: {len(self.problems)}; {recovery}; checkpoints completed {self.checkpoints}; "
                f"SSE events {events}; "
                f"{self.seconds:.1f} s, seed {self.config.seed}, {mode}"
                + (f"; stopped early: {self.stopped_early}" if self.stopped_early else "")
                + (f"; kept {self.kept}" if self.kept else ""))


class CrashRun:
    """The server, the load threads, the SSE readers, and the ledger of every write."""

    def __init__(self, config: Config, work_dir: Path) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        self.work_dir = work_dir
        args = ["--data-dir", str(work_dir / "data"), "--sync", config.sync,
                "--checkpoint-mb", str(config.checkpoint_mb)] if config.durable else []
        self.server = ServerProcess(args, work_dir / "server.log")
        self.report = Report(config)
        self.updates = Facts("update subject")
        self.put_graphs = Facts("PUT graph")
        self.post_graphs = Facts("POSTed batch")
        self.stream_batches = Facts("stream batch")
        self.computed = Facts("computed update subject")
        #: (uuid, time) each computed update stored, as read back after its answer (or first checked)
        self.computed_values: dict[int, tuple[str, str]] = {}
        self.queries = Facts("registered query")
        self.declarations = Facts("declared stream")
        #: the timestamps each batch puts into its stream's windows (timing triples too)
        self.window_stamps: dict[tuple[str, str], list[int]] = {}
        self.gate = Gate()
        self.stopping = threading.Event()
        self.cycle = 0
        self.started = time.monotonic()
        self.hard_deadline = self.started + config.budget_s + 120
        self._lock = threading.Lock()
        self._next_id = 0
        self._deletable: list[int] = []
        #: the load threads' own generator: ``self.rng`` draws only the kills, so a seed repeats them
        self._pick = random.Random(config.seed + 99)
        self._floor: dict[str, int | None] = dict.fromkeys(STREAMS)
        self._sent: dict[str, int | None] = dict.fromkeys(STREAMS)
        self.readers = [EventReader(self, name) for name in READ_QUERIES]
        self.workers: list[Worker] = [
            UpdateWorker(self, "updates-1", config.seed + 1),
            UpdateWorker(self, "updates-2", config.seed + 2),
            GraphStoreWorker(self, "graph-store", config.seed + 3),
            StreamWorker(self, "stream-A", config.seed + 4, "A"),
            StreamWorker(self, "stream-B", config.seed + 5, "B"),
            ControlWorker(self, "control", config.seed + 6),
        ]

    # ---- shared bookkeeping, called from the load threads

    def next_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    def add_deletable(self, n: int) -> None:
        with self._lock:
            self._deletable.append(n)

    def take_deletable(self) -> int | None:
        with self._lock:
            if not self._deletable:
                return None
            return self._deletable.pop(self._pick.randrange(len(self._deletable)))

    def sent_timestamp(self, stream: str, ts: int) -> None:
        with self._lock:
            self._sent[stream] = max(ts, self._sent[stream] or ts)

    def acked_timestamp(self, stream: str, ts: int) -> None:
        with self._lock:
            self._floor[stream] = max(ts, self._floor[stream] or ts)

    def watermark_floor(self, stream: str) -> int | None:
        with self._lock:
            return self._floor[stream]

    def problem(self, text: str) -> None:
        with self._lock:
            self.report.problems.append(text)

    def harness_error(self, trace: str) -> None:
        self.problem(f"the test harness failed (a bug of this test, not of the server):\n{trace}")
        self.stopping.set()

    def write(self, client: httpx.Client, what: str, expect: Collection[int], method: str, path: str,
              **kwargs) -> tuple[str, int | None]:
        """Send one write and classify it: acknowledged, refused, or unknown."""
        cycle = self.cycle
        try:
            response = client.request(method, path, **kwargs)
        except httpx.TransportError:
            outcome, status = UNKNOWN, None
        else:
            status = response.status_code
            outcome = ACKED if 200 <= status < 300 else REFUSED if 400 <= status < 500 else UNKNOWN
            if status not in expect:
                self.problem(f"cycle {cycle}: {what}: answered {status} where {sorted(expect)} was expected: "
                             f"{response.text[:300]!r}")
        with self._lock:
            self.report.tally.outcomes[outcome] += 1
        return outcome, status

    # ---- the run

    def run(self) -> Report:
        try:
            self._run()
        except ServerDidNotStart as exc:
            self.problem(f"cycle {self.cycle}: the server did not come back: {exc}")
        except (AssertionError, httpx.HTTPError) as exc:  # a check could not even be made: the run stops
            self.problem(f"cycle {self.cycle}: {type(exc).__name__}: {exc}")
        finally:
            self.stopping.set()
            self.gate.close()
            self.server.stop()
            for thread in [*self.workers, *self.readers]:
                thread.join(timeout=10)
            self.report.seconds = time.monotonic() - self.started
        for text in server_tracebacks(self.server.log_path):
            self.problem(text)
        self.report.checkpoints = completed_checkpoints(self.server.log_path)
        return self.report

    def _run(self) -> None:
        config = self.config
        self.server.start()
        self._setup()
        for thread in [*self.readers, *self.workers]:
            thread.start()
        deadline = self.started + config.budget_s
        for cycle in range(1, config.kills + 1):
            if self.report.kills >= config.kills or self.stopping.is_set():
                break
            if time.monotonic() > deadline:
                self.report.stopped_early = f"the budget of {config.budget_s:.0f} s ran out"
                break
            self.gate.open()
            long = self.rng.random() < config.long_load_share
            time.sleep(self.rng.uniform(*(config.long_load_s if long else config.load_s)))
            if config.durable:
                self._kill_and_restart()
            else:
                self._pause()
            self.verify(f"after kill {self.report.kills}" if config.durable else f"after pause {cycle}")
        if self.stopping.is_set():
            return
        # a last stretch of load without a kill: every write of it must be acknowledged
        self.gate.open()
        time.sleep(1.0)
        self._pause()
        self.verify("at the end of the load")
        if config.durable:
            self.gate.close()
            self.server.stop()
            self.cycle += 1
            self.server.start()
            self.verify("after a clean shutdown (SIGTERM) and restart")
        self.check_events()

    def _setup(self) -> None:
        """Declare the streams and register the read queries, before any load: all must be acknowledged."""
        with httpx.Client(base_url=self.server.url, timeout=REQUEST_TIMEOUT_S) as client:
            for name, spec in STREAMS.items():
                outcome, status = self.write(client, f"declare {name}", (201,), "PUT", f"/streams/{name}",
                                             json=spec)
                self.declarations.record(name, Entry(0, "declare", PRESENT, outcome, status))
            for name, stream in READ_QUERIES.items():
                text = (f"REGISTER QUERY {name} AS SELECT (COUNT(*) AS ?n) "
                        f"FROM STREAM <{STREAMS[stream]['iri']}> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}")
                path, media = ("/queries", SPARQL_QUERY) if stream == "A" else ("/sparql", SPARQL_UPDATE)
                outcome, status = self.write(client, f"register {name}", (201,), "POST", path, content=text,
                                             headers={"Content-Type": media})
                self.queries.record(name, Entry(0, "register", PRESENT, outcome, status))
            outcome, status = self.write(client, "register the derived stream", (201,), "POST", "/queries",
                                         content=DERIVED_REGISTRATION, headers={"Content-Type": SPARQL_QUERY})
            self.queries.record(DERIVED, Entry(0, "register", PRESENT, outcome, status))
            self.declarations.record(DERIVED_NAME, Entry(0, "declared by REGISTER STREAM", PRESENT, outcome,
                                                         status))
        if self.report.problems:
            raise AssertionError("the setup failed:\n" + "\n".join(self.report.problems))

    def _pause(self) -> None:
        if not self.gate.drain(DRAIN_TIMEOUT_S):
            raise AssertionError(f"requests still running {DRAIN_TIMEOUT_S:.0f} s after the load was stopped")
        self.cycle += 1

    def _kill_and_restart(self) -> None:
        """SIGKILL while requests are in flight; restart on the same directory and
        port; sometimes kill again before the restarted server has answered."""
        self.gate.close()
        if self.rng.random() < self.config.shutdown_kill_share:
            self.server.terminate()
            time.sleep(self.rng.uniform(0.0, 0.5))
            self.report.shutdown_kills += 1
        killed_at = time.monotonic()
        self.server.kill()
        self.report.kills += 1
        self._pause()
        if self.rng.random() < self.config.recovery_kill_share and self.report.kills < self.config.kills:
            self.server.spawn()
            time.sleep(self.rng.uniform(0.05, 0.8))
            killed_at = time.monotonic()
            self.server.kill()
            self.report.kills += 1
            self.report.recovery_kills += 1
        self.report.recoveries.append(self.server.start(since=killed_at))

    # ---- the checks

    def select(self, client: httpx.Client, text: str) -> list[dict[str, str]]:
        response = client.get("/sparql", params={"query": text}, headers={"Accept": RESULTS_JSON})
        assert response.status_code == 200, f"check query: {response.status_code} {response.text[:300]}"
        return [{k: v["value"] for k, v in row.items()} for row in response.json()["results"]["bindings"]]

    def verify(self, where: str) -> None:
        """Everything the server holds against everything the clients were told; pins unknowns."""
        tally = self.report.tally
        problems: list[str] = []
        with httpx.Client(base_url=self.server.url, timeout=REQUEST_TIMEOUT_S) as client:
            rows = self.select(client, f"""SELECT ?s (COUNT(*) AS ?c) WHERE {{
                {{ ?s ?p ?o }} UNION {{ GRAPH <{UPDATE_GRAPH}> {{ ?s ?p ?o }} }}
                FILTER(STRSTARTS(STR(?s), "{EX}u/")) }} GROUP BY ?s""")
            observed = {int(r["s"].rsplit("/", 1)[1]): whole(int(r["c"]), 3) for r in rows}
            problems += self.updates.check(observed, where, tally)

            problems += self._check_computed(client, where)

            rows = self.select(client, f"""SELECT ?g ?s WHERE {{ GRAPH ?g {{ ?s ?p ?o }}
                FILTER(STRSTARTS(STR(?g), "{EX}gp/")) }}""")
            subjects: dict[int, set[str]] = defaultdict(set)
            for r in rows:
                subjects[int(r["g"].rsplit("/", 1)[1])].add(r["s"])
            versions = {k: graph_version(k, s) for k, s in subjects.items()}
            problems += self.put_graphs.check(versions, where, tally)

            rows = self.select(client, f"""SELECT ?g ?s WHERE {{ GRAPH ?g {{ ?s ?p ?o }}
                FILTER(STRSTARTS(STR(?g), "{EX}ga/")) }}""")
            counts: Counter = Counter()
            for r in rows:
                a, b = r["s"].removeprefix(f"{EX}ga/").split("/")[:2]
                counts[(int(a), int(b[1:]))] += 1 if r["g"] == f"{EX}ga/{a}" else 1000  # wrong graph: partial
            problems += self.post_graphs.check({k: whole(c, 3) for k, c in counts.items()}, where, tally)

            observed = {}
            for stream, spec in STREAMS.items():
                rows = self.select(client, f"SELECT ?s {{ GRAPH <{spec['iri']}> {{ ?s <{EX}p/val> ?o }} }}")
                counts = Counter((stream, r["s"].removeprefix(f"{EX}s{stream}/").split("/")[0]) for r in rows)
                observed.update({k: whole(c, self.stream_batches.size(k)) for k, c in counts.items()})
            problems += self.stream_batches.check(observed, where, tally)

            streams = {s["name"]: s for s in get_json(client, "/streams")["streams"]}
            problems += self.declarations.check(dict.fromkeys(streams, PRESENT), where, tally)
            problems += self._check_streams(streams, where)
            problems += self._check_derived(client, streams.get(DERIVED_NAME), where)

            queries = {q["name"]: q for q in get_json(client, "/queries")["queries"]}
            problems += self.queries.check(dict.fromkeys(queries, PRESENT), where, tally)
            for name, stream in READ_QUERIES.items():
                window = (queries.get(name, {}).get("windows") or [{}])[0]
                if window.get("stream") != STREAMS[stream]["iri"] or window.get("range_ms") != WINDOW_MS:
                    problems.append(f"{where}: query {name} came back as {queries.get(name)!r}")
        for text in problems:
            self.problem(text)
        with self._lock:
            self._deletable = [n for n in self.updates.keys_in(PRESENT) if isinstance(n, int)]

    def _check_computed(self, client: httpx.Client, where: str) -> list[str]:
        """Computed updates: all three triples or none, and their values as first seen."""
        tally = self.report.tally
        rows = self.select(client, f"""SELECT ?s (COUNT(*) AS ?c) WHERE {{ ?s ?p ?o
            FILTER(STRSTARTS(STR(?s), "{EX}r/")) }} GROUP BY ?s""")
        problems = self.computed.check({int(r["s"].rsplit("/", 1)[1]): whole(int(r["c"]), 3) for r in rows},
                                       where, tally)
        rows = self.select(client, f"""SELECT ?s ?u ?t WHERE {{ ?s <{EX}p/uuid> ?u ; <{EX}p/now> ?t ;
            <{EX}p/node> ?b FILTER(STRSTARTS(STR(?s), "{EX}r/") && isBlank(?b)) }}""")
        values: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for r in rows:
            values[int(r["s"].rsplit("/", 1)[1])].append((r["u"], r["t"]))
        for n in self.computed.keys_in(PRESENT):
            found = values.get(n, [])
            known = self.computed_values.get(n)
            if len(found) != 1:
                tally.violations += 1
                problems.append(f"{where}: computed update r/{n} holds {found} (uuid, time) with a blank "
                                "node, not exactly one")
            elif known is None:
                self.computed_values[n] = found[0]
            elif found[0] != known:
                tally.lost += 1
                problems.append(f"{where}: LOST acknowledged write: r/{n} was stored (and read) with "
                                f"{known}, the server now holds {found[0]}: the recovery computed the "
                                "update's values again instead of restoring them")
        return problems

    def _check_derived(self, client: httpx.Client, state: dict | None, where: str) -> list[str]:
        """The derived stream's graph holds the B triples stamped before its watermark
        (the close of the last window reported), from the batches B holds: no more, no less."""
        if state is None:
            return []  # reported by the declarations' check
        watermark = state.get("watermark_ms")
        expected = set()
        for key in self.stream_batches.keys_in(PRESENT):
            if key[0] == "B" and watermark is not None:
                expected |= {f"{EX}sB/{key[1]}/t{i}" for i, t in enumerate(self.window_stamps[key])
                             if t < watermark}
        rows = self.select(client, f"SELECT ?s {{ GRAPH <{DERIVED}> {{ ?s <{EX}p/seen> ?o }} }}")
        found = {r["s"] for r in rows}
        problems = []
        missing, extra = sorted(expected - found), sorted(found - expected)
        if missing:
            self.report.tally.lost += 1
            problems.append(f"{where}: LOST acknowledged write: the derived stream (watermark {watermark}) "
                            f"lacks {len(missing)} triples of B's windows, e.g. {missing[:3]}")
        if extra:
            self.report.tally.violations += 1
            problems.append(f"{where}: the derived stream (watermark {watermark}) holds {len(extra)} "
                            f"triples of no window reported, e.g. {extra[:3]}")
        return problems

    def _check_streams(self, streams: dict[str, dict], where: str) -> list[str]:
        """Definitions as declared; watermarks not behind the newest acknowledged
        timestamp (nor behind what the last check saw), not past anything sent."""
        problems = []
        for name, spec in STREAMS.items():
            state = streams.get(name)
            if state is None:
                continue  # reported by the declarations' check
            for key, value in spec.items():
                if state.get(key) != value:
                    problems.append(f"{where}: stream {name} came back with {key}={state.get(key)!r}, "
                                    f"declared {value!r}")
            with self._lock:
                floor, sent = self._floor[name], self._sent[name]
            # batches that were unknown and are now found stored count as acknowledged from here on
            present = [max(self.window_stamps[k]) for k in self.stream_batches.keys_in(PRESENT)
                       if k[0] == name]
            if present:
                floor = max(floor or 0, max(present))
            watermark = state.get("watermark_ms")
            if floor is not None and (watermark is None or watermark < floor):
                self.report.tally.lost += 1
                problems.append(f"{where}: LOST acknowledged write: stream {name}'s watermark is "
                                f"{watermark}, but a batch or heartbeat up to {floor} was acknowledged "
                                "or is stored")
            if watermark is not None and (sent is None or watermark > sent):
                self.report.tally.violations += 1
                problems.append(f"{where}: stream {name}'s watermark {watermark} is past every timestamp "
                                f"sent ({sent})")
            if watermark is not None:
                with self._lock:
                    self._floor[name] = max(watermark, self._floor[name] or watermark)
        return problems

    def check_events(self) -> None:
        """Close one more window on each stream, let the readers catch up, then
        check each reader's events across all the restarts."""
        with httpx.Client(base_url=self.server.url, timeout=REQUEST_TIMEOUT_S) as client:
            for stream in STREAMS:
                with self._lock:
                    ts = max(self._sent[stream] or BASE_MS, self._floor[stream] or BASE_MS) + 2 * WINDOW_MS
                    self._sent[stream] = ts
                response = client.post(f"/streams/{stream}", content=str(ts), headers={"Content-Type": BATCH})
                assert response.status_code == 202, f"the final heartbeat failed: {response.text[:300]}"
            for reader in self.readers:
                reported = get_json(client, f"/queries/{reader.query}")["windows_reported"]
                deadline = time.monotonic() + CATCH_UP_S
                while reader.last_sequence() < reported and time.monotonic() < deadline:
                    time.sleep(0.05)
                self.report.events[reader.query] = len(reader.events)
                for text in self._check_reader(reader, READ_QUERIES[reader.query], reported):
                    self.problem(text)
                for text in self._check_retained(client, reader, reported):
                    self.problem(text)

    def _check_retained(self, client: httpx.Client, reader: EventReader, reported: int) -> list[str]:
        """A new subscriber resuming from before the retained events gets the same
        events the live reader got across the kills (the server kept them as sent)."""
        first = max(1, reported - RETAINED_EVENTS + 1)
        live = {e.sequence: (e.start_ms, e.end_ms, e.count) for e in reader.events}
        replayed: dict[int, tuple[int, int, int | None]] = {}
        deadline = time.monotonic() + CATCH_UP_S
        url = f"/queries/{reader.query}/events"
        try:
            with client.stream("GET", url, headers={"Accept": "text/event-stream",
                                                    "Last-Event-ID": str(first - 1)}) as response:
                if response.status_code != 200:
                    return [f"a new subscriber of {reader.query} was answered {response.status_code}"]
                data: list[str] = []
                for line in response.iter_lines():
                    if line.startswith("data:"):
                        data.append(line[5:].lstrip())
                    elif line == "" and data:
                        payload = orjson.loads("\n".join(data))
                        data = []
                        bindings = payload["results"]["results"]["bindings"]
                        replayed[int(payload["sequence"])] = (
                            payload["window"]["start_ms"], payload["window"]["end_ms"],
                            int(bindings[0]["n"]["value"]) if bindings else None)
                        if max(replayed) >= reported:
                            break
                    if time.monotonic() > deadline:
                        break
        except httpx.HTTPError as exc:
            return [f"a new subscriber of {reader.query} failed: {exc!r}"]
        problems = []
        if sorted(replayed) != list(range(first, reported + 1)):
            missing = sorted(set(range(first, reported + 1)) - set(replayed))
            problems.append(f"a new subscriber of {reader.query} from Last-Event-ID {first - 1} got "
                            f"{len(replayed)} events, not {reported - first + 1}; missing {missing[:10]}")
        for sequence, event in sorted(replayed.items()):
            if sequence in live and live[sequence] != event:
                problems.append(f"{reader.query}: retained event {sequence} is (start, end, count) {event}, "
                                f"the live reader got {live[sequence]}")
                break
        return problems

    def _check_reader(self, reader: EventReader, stream: str, reported: int) -> list[str]:
        problems = []
        events = reader.events
        label = f"SSE reader of {reader.query}"
        if reader.last_sequence() != reported:
            problems.append(f"{label}: the last event received is {reader.last_sequence()}, the server "
                            f"reports {reported} windows ({reader.connections} connections, "
                            f"refusals {dict(reader.refusals)})")
        for i, event in enumerate(events):
            if event.sequence != i + 1 or event.event_id not in (None, str(event.sequence)):
                previous = events[i - 1] if i else None
                kind = "duplicate" if previous and event.sequence <= previous.sequence else "gap"
                problems.append(
                    f"{label}: {kind}: event #{i + 1} received has sequence {event.sequence} (id "
                    f"{event.event_id}) after {previous.sequence if previous else None}, in cycle "
                    f"{event.cycle} (the previous in cycle {previous.cycle if previous else None})")
                break  # the rest would all be off by the same amount
        for previous, event in zip(events, events[1:]):
            if event.end_ms != previous.end_ms + WINDOW_MS or event.start_ms != event.end_ms - WINDOW_MS:
                problems.append(
                    f"{label}: event {event.sequence} is window [{event.start_ms}, {event.end_ms}) after "
                    f"[{previous.start_ms}, {previous.end_ms}): windows must follow one STEP "
                    f"({WINDOW_MS} ms) apart (cycles {previous.cycle}, {event.cycle})")
                break
        stamps, undecided = [], []
        for key, key_stamps in self.window_stamps.items():
            if key[0] != stream:
                continue
            states = self.stream_batches.states(key)
            if states == {PRESENT}:
                stamps.extend(key_stamps)
            elif states != {ABSENT}:
                undecided.append(key)
        stamps.sort()
        if undecided:
            problems.append(f"{label}: batches still undecided at the end: {undecided[:5]}")
        wrong = 0
        for event in events:
            expected = count_between(stamps, event.start_ms, event.end_ms)
            if event.count != expected:
                wrong += 1
                if wrong <= 5:
                    batches = sorted({k[1] for k, s in self.window_stamps.items() if k[0] == stream
                                      and any(event.start_ms <= t < event.end_ms for t in s)})
                    detail = "; ".join(f"{b}: {self.stream_batches.history[(stream, b)][-1]}"
                                       for b in batches)
                    problems.append(
                        f"{label}: event {event.sequence} (cycle {event.cycle}) counts {event.count} triples "
                        f"in [{event.start_ms}, {event.end_ms}), the batches stored there hold {expected}: "
                        f"{detail}")
        if wrong > 5:
            problems.append(f"{label}: {wrong} events in all count other triples than the stored "
                            "batches hold")
        return problems


def server_tracebacks(log_path: Path, lines: int = 25) -> list[str]:
    """Each traceback the server wrote to its log, with the start it belongs to:
    a server that fails inside a request or a recovery says so only there."""
    try:
        log = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    found, start = [], "?"
    for i, line in enumerate(log):
        if line.startswith("===== start "):
            start = line.removeprefix("===== ").split(":")[0]
        elif line.startswith("Traceback (most recent call last)"):
            found.append(f"the server logged a traceback ({start} of the server):\n"
                         + "\n".join(log[i:i + lines]))
    return found


def completed_checkpoints(log_path: Path) -> int | None:
    """Checkpoints the server's log says it finished (its ``checkpoint N: ...`` lines);
    for the summary only: whether the kills met checkpoints, not a check."""
    try:
        text = log_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return len(re.findall(r"\bcheckpoint \d+: ", text))


def whole(count: int, size: int | None) -> str:
    """``present`` if an all-or-none write is all there, else what is there."""
    if size is None:
        return f"{count} triples that no write of this test sent"
    return PRESENT if count == size else f"partial: {count} of {size} triples"


def graph_version(k: int, subjects: set[str]) -> int | str:
    """The version of PUT graph ``k`` whose triples the graph holds exactly, else what it holds."""
    versions = {s.removeprefix(f"{EX}gp/{k}/").split("/")[0] for s in subjects}
    if len(versions) == 1 and (v := versions.pop()).startswith("v") and v[1:].isdigit():
        expected = {line.split(" ")[0][1:-1] for line in version_lines(k, int(v[1:]))}
        if subjects == expected:
            return int(v[1:])
    return f"a mix of {len(subjects)} triples: {sorted(subjects)[:4]}"


def count_between(stamps: list[int], start: int, end: int) -> int:
    """Timestamps in ``[start, end)`` of a sorted list."""
    return bisect.bisect_left(stamps, end) - bisect.bisect_left(stamps, start)


def get_json(client: httpx.Client, path: str) -> dict:
    response = client.get(path)
    assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text[:300]}"
    return response.json()


def run_crash_test(config: Config) -> Report:
    """One run in a fresh temporary directory (kept with ``config.keep``, or when the run fails)."""
    work_dir = Path(tempfile.mkdtemp(prefix="rivulet-crash-"))
    report = CrashRun(config, work_dir).run()
    if report.problems or config.keep:
        report.kept = work_dir
        # the assertion's text is lost with the terminal: keep it beside the data
        (work_dir / "problems.txt").write_text("\n".join(report.problems) + "\n" + report.summary() + "\n")
        print(f"data directory, server log and problems kept in {work_dir}", file=sys.stderr)
    else:
        shutil.rmtree(work_dir, ignore_errors=True)
    return report


def assert_durable(report: Report) -> None:
    config = report.config
    assert not report.problems, (
        f"{len(report.problems)} problems (seed {config.seed}, sync {config.sync}):\n"
        + "\n".join(report.problems[:40]) + "\n" + report.summary())
    if config.durable:
        assert report.kills >= config.kills, (f"only {report.kills} of {config.kills} kills in the budget of "
                                              f"{config.budget_s:.0f} s: {report.summary()}")
    assert report.tally.lost == 0, report.summary()


def test_acknowledged_writes_survive_repeated_sigkill():
    if not has_data_dir():
        pytest.skip("rivulet serve has no --data-dir option yet: there is nothing durable to crash")
    config = Config(kills=int(os.environ.get("RIVULET_CRASH_KILLS", "12")),
                    seed=int(os.environ.get("RIVULET_CRASH_SEED", str(SEED))),
                    sync=os.environ.get("RIVULET_CRASH_SYNC", "always"))
    if config.kills > 20:
        config.budget_s = config.kills * 8.0
    report = run_crash_test(config)
    print(report.summary())
    assert_durable(report)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs to send (default 20)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"random seed (default {SEED})")
    parser.add_argument("--sync", choices=("always", "none"), default="always", help="the server's --sync")
    parser.add_argument("--checkpoint-mb", type=float, default=0.05, help="the server's --checkpoint-mb")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds the kills may take in all (default 8 s a kill, at least 160)")
    parser.add_argument("--memory", action="store_true",
                        help="no --data-dir and no kills: pause the load and check (tests the checks)")
    parser.add_argument("--keep", action="store_true", help="keep the data directory and the server log")
    args = parser.parse_args(argv)
    if not args.memory and not has_data_dir():
        sys.exit("rivulet serve has no --data-dir option yet; --memory runs the checks without kills")
    config = Config(kills=args.kills, seed=args.seed, sync=args.sync, checkpoint_mb=args.checkpoint_mb,
                    budget_s=args.budget or max(160.0, 8.0 * args.kills), durable=not args.memory,
                    keep=args.keep)
    report = run_crash_test(config)
    for text in report.problems[:60]:
        print(text)
    print(report.summary())
    sys.exit(1 if report.problems or report.tally.lost else 0)


if __name__ == "__main__":
    main()
