"""Drive a scenario over HTTP against a real ``rivulet serve`` child process:
``PUT /streams/{name}``, ``POST /queries``, ``POST /streams/{name}``
(timestamped N-Triples batches, or one N-Triples / Turtle item with
``X-Timestamp``), SPARQL updates, and each query's events read from
``GET /queries/{name}/events`` (Server-Sent Events), with readers that
disconnect and resume with ``Last-Event-ID``.

Many scenarios share one server (each in its own namespace, see the
generator's ``tag``): starting a server takes a second or two.
"""

from __future__ import annotations

import re
import threading
import time
from urllib.parse import quote

import httpx

from tests.endpoint.rivulet_process import RivuletProcess
from tests.endpoint.sse_client import SSEReader
from tests.stream.scenarios.actual import Actual, construct_result, select_result
from tests.stream.scenarios.inprocess import REFUSED
from tests.stream.scenarios.model import Declare, Post, Reconnect, Register, Scenario, Unregister, Update
from tests.stream.scenarios.oracle import Event, Expected, Result
from tests.stream.scenarios.terms import canonical, from_sparql_json

BATCH = "application/x-timestamped-ntriples"
#: seconds to wait for the events a scenario expects with none arriving (they
#: are queued before the POST that fired them is answered, so this only bounds
#: a failure); while they come (a window of 20,000 rows is megabytes of JSON,
#: slow to read on a loaded machine) the wait goes on, up to EVENT_WAIT_MAX
EVENT_WAIT = 10.0
EVENT_WAIT_MAX = 120.0
#: after the expected count arrived: how long extra events get to show up
QUIET = 0.2


def batch_body(items) -> str:
    lines = []
    for ts, triples in items:
        lines += [f"{ts} {s} {p} {o} ." for s, p, o in triples] or [str(ts)]
    return "\n".join(lines) + "\n"


def turtle(triples) -> str:
    """Triples as Turtle with prefixes (IRIs as prefixed names where they can be)."""
    prefixes: dict[str, str] = {}

    def name(term: str) -> str:
        if not term.startswith("<"):
            return term
        namespace, _, local = term[1:-1].rpartition("/")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", local):
            return term
        prefix = prefixes.setdefault(namespace + "/", f"n{len(prefixes)}")
        return f"{prefix}:{local}"

    statements = [" ".join(name(t) for t in triple) + " ." for triple in triples]
    return "".join(f"@prefix {p}: <{ns}> .\n" for ns, p in prefixes.items()) + "\n".join(statements) + "\n"


def to_event(data: dict, form: str) -> Event:
    results = data["results"]
    if form == "ASK":
        result = Result.of("ASK", boolean=bool(results.get("boolean")))
    else:
        variables = results["head"]["vars"]
        rows = [[from_sparql_json(b.get(v)) for v in variables] for b in results["results"]["bindings"]]
        if form == "CONSTRUCT":
            result = construct_result([tuple(row) for row in rows])
        else:
            result = select_result(variables, rows)
    window = data["window"]
    return Event(data["sequence"], window["start_ms"], window["end_ms"], result)


class Server:
    """One ``rivulet serve`` (in memory) and a client for it."""

    def __init__(self) -> None:
        self.process = RivuletProcess()
        self.url = self.process.url
        self.client = httpx.Client(timeout=120)

    def stop(self) -> None:
        self.client.close()
        self.process.stop()


class _Connection(SSEReader):
    """An SSE reader that tells when its connection ended."""

    def __init__(self, url: str, last_event_id: str | None = None) -> None:
        self.ended = threading.Event()
        super().__init__(url, last_event_id)

    def _run(self) -> None:
        try:
            super()._run()
        finally:
            self.ended.set()


class _Reader:
    """The events of one query: connections one after another, each resuming
    where the previous one stopped, as a client does after a disconnect (the
    scenario's, or the server's: a subscriber more than 256 events behind is
    dropped, as documented, and one POST can close more windows than that)."""

    def __init__(self, url: str, form: str) -> None:
        self.url, self.form = url, form
        self.seen: list[dict] = []
        self.reader: _Connection | None = _Connection(url, last_event_id="0")
        self.resume_after_ops: int | None = None
        self.dropped = 0
        #: the query is being unregistered: its connection ends after the queued events
        self.final = False

    def disconnect(self, after_ops: int) -> None:
        if self.reader is None:
            return
        self.reader.close()
        # what it had read when cut off; anything it appends later is ignored
        self.seen += [data for _, _, data in list(self.reader.events)]
        self.reader = None
        self.resume_after_ops = after_ops

    def finish(self) -> None:
        if self.reader is None:
            self.resume()  # a client comes back before the query goes: its events are kept until then
        self.final = True

    def tick(self) -> None:
        if self.reader is not None and self.reader.ended.is_set() and not self.final:
            self.dropped += 1
            self.seen += [data for _, _, data in list(self.reader.events)]
            self.resume()
        if self.resume_after_ops is not None:
            self.resume_after_ops -= 1
            if self.resume_after_ops <= 0:
                self.resume()

    def resume(self) -> None:
        last = str(self.seen[-1]["sequence"]) if self.seen else "0"
        self.reader = _Connection(self.url, last_event_id=last)
        self.resume_after_ops = None

    def events(self, expected: int) -> list[Event]:
        if self.reader is None:
            self.resume()
        started = time.monotonic()
        deadline, count = started + EVENT_WAIT, 0
        while len(self.seen) + len(self.reader.events) < expected and time.monotonic() < deadline:
            if self.final and self.reader.ended.is_set():
                break
            time.sleep(0.01)
            self.tick()
            if len(self.seen) + len(self.reader.events) > count:  # still coming
                count = len(self.seen) + len(self.reader.events)
                deadline = min(time.monotonic() + EVENT_WAIT, started + EVENT_WAIT_MAX)
        time.sleep(QUIET)
        self.reader.close()
        data = self.seen + [data for _, _, data in list(self.reader.events)]
        return [to_event(d, self.form) for d in data]


def run(scenario: Scenario, expected: Expected, server: Server) -> Actual:
    """Run ``scenario`` against ``server``, waiting for as many events per
    query as ``expected`` holds (they bound the wait, nothing else); with
    ``http_resume``, a reader resumed from the middle is compared too."""
    expected_counts = {name: len(events) for name, events in expected.events.items()}
    http, url = server.client, server.url
    actual = Actual()
    readers: dict[str, _Reader] = {}
    for graph, triples in scenario.static.items():
        body = " ".join(f"{s} {p} {o} ." for s, p, o in triples)
        update = f"INSERT DATA {{ GRAPH <{graph}> {{ {body} }} }}" if graph else f"INSERT DATA {{ {body} }}"
        outcome = _update(http, url, update)
        if outcome != "ok":
            raise RuntimeError(f"loading the stored data: {outcome}")
    for spec in scenario.streams:
        response = http.put(f"{url}/streams/{spec.name}", json=spec.declaration())
        if response.status_code != 201:
            raise RuntimeError(f"declaring {spec.name}: {response.status_code} {response.text}")
    try:
        for op in scenario.ops:
            try:
                outcome = _apply(http, url, op, readers, actual)
            except httpx.TransportError as error:
                # e.g. a connection the server closed after a 500 without saying so
                outcome = f"error: {type(error).__name__}: {error}"
            actual.outcomes.append(outcome)
            for reader in readers.values():
                reader.tick()
        for name, reader in readers.items():
            actual.events[name] = reader.events(expected_counts.get(name, 0))
            if reader.dropped:
                actual.notes.append(f"the server dropped the SSE reader of {name} {reader.dropped} times")
        for name, count in expected_counts.items():
            live = name in readers and not readers[name].final
            if count >= 2 and live and "http_resume" in scenario.features:
                after = count // 2
                late = SSEReader(readers[name].url, last_event_id=str(after))
                events = late.wait_for(count - after, EVENT_WAIT_MAX)  # returns once all came
                time.sleep(QUIET)
                late.close()
                actual.resumed[name] = (after, [to_event(d, readers[name].form) for d in events])
        for graph in scenario.checked_graphs():
            actual.graphs[graph] = _graph(http, url, graph)
    finally:
        for reader in readers.values():
            if reader.reader is not None:
                reader.reader.close()
    actual.cleanup = _clean_up(http, url, scenario, readers)
    return actual


def _clean_up(http: httpx.Client, url: str, scenario: Scenario, readers: dict[str, _Reader]) -> list[str]:
    """Unregister the scenario's queries and drop its streams (outputs too), as
    a server that sees many short-lived streams needs to (issue 26 item 6):
    the next scenario on this server starts from its stored data only. What
    did not go as documented is returned."""
    wrong = []
    for name, reader in readers.items():
        if not reader.final:
            response = http.delete(f"{url}/queries/{quote(name, safe='')}")
            if response.status_code != 204:
                wrong.append(f"DELETE /queries/{name}: {response.status_code} {response.text[:200]}")
    iris = {s.iri for s in scenario.streams}
    iris |= {op.stream.iri for op in scenario.ops if isinstance(op, Declare)}
    iris |= {op.query.output for op in scenario.ops if isinstance(op, Register) and op.query.output}
    # an RSP-QL CONSTRUCT registered under a name (not an IRI) writes the stream
    # of that name under the server's base
    names = {op.query.event_name for op in scenario.ops if isinstance(op, Register)}
    for stream in http.get(f"{url}/streams").json()["streams"]:
        if stream["iri"] in iris or stream["iri"].rsplit("/", 1)[-1] in names:
            name = stream["name"]
            response = http.delete(f"{url}/streams/{quote(name, safe='')}")
            if response.status_code != 204:
                wrong.append(f"DELETE /streams/{name}: {response.status_code} {response.text[:200]}")
            elif http.get(f"{url}/streams/{quote(name, safe='')}").status_code != 404:
                wrong.append(f"stream {name} is still there after its drop")
    return wrong


def _apply(http: httpx.Client, url: str, op, readers: dict[str, _Reader], actual: Actual) -> str:
    if isinstance(op, Post):
        if op.form == "batch":
            response = http.post(
                f"{url}/streams/{op.stream}", content=batch_body(op.items), headers={"Content-Type": BATCH}
            )
        else:
            ((ts, triples),) = op.items
            body = (
                turtle(triples) if op.form == "turtle" else "".join(f"{s} {p} {o} .\n" for s, p, o in triples)
            )
            media = "application/n-triples" if op.form == "ntriples" else "text/turtle"
            response = http.post(
                f"{url}/streams/{op.stream}",
                content=body,
                headers={"Content-Type": media, "X-Timestamp": str(ts)},
            )
        if response.status_code == 202:
            return "ok"
        if response.status_code in REFUSED:
            return "refused"
        return f"error {response.status_code}: {response.text[:300]}"
    if isinstance(op, Register):
        response = http.post(
            f"{url}/queries",
            content=op.query.registration(),
            headers={"Content-Type": "application/sparql-query"},
        )
        name = op.query.event_name
        if response.status_code != 201:
            return f"error {response.status_code}: {response.text[:300]}"
        readers[name] = _Reader(f"{url}/queries/{quote(name, safe='')}/events", op.query.form)
        return "ok"
    if isinstance(op, Declare):
        response = http.put(f"{url}/streams/{op.stream.name}", json=op.stream.declaration())
        if response.status_code in (200, 201):
            return "ok"
        if response.status_code == 409:
            return "refused"  # the name is another stream's
        return f"error {response.status_code}: {response.text[:300]}"
    if isinstance(op, Update):
        return _update(http, url, op.text())
    if isinstance(op, Unregister):
        if op.query in readers:  # not when its registration failed
            readers[op.query].finish()
        response = http.delete(f"{url}/queries/{quote(op.query, safe='')}")
        return "ok" if response.status_code == 204 else f"error {response.status_code}: {response.text[:300]}"
    assert isinstance(op, Reconnect)
    if op.query in readers:
        readers[op.query].disconnect(op.after_ops)
    return "ok"


def _update(http: httpx.Client, url: str, text: str) -> str:
    response = http.post(f"{url}/sparql", content=text, headers={"Content-Type": "application/sparql-update"})
    if response.status_code not in (200, 204):
        return f"error {response.status_code}: {response.text[:300]}"
    return "ok"


def _graph(http: httpx.Client, url: str, graph: str) -> frozenset:
    response = http.get(
        f"{url}/sparql",
        params={"query": f"SELECT ?s ?p ?o WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"},
        headers={"Accept": "application/sparql-results+json"},
    )
    response.raise_for_status()
    return frozenset(
        tuple(canonical(from_sparql_json(b[v])) for v in ("s", "p", "o"))
        for b in response.json()["results"]["bindings"]
    )
