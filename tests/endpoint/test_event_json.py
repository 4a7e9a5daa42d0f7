"""The JSON of window events, written from the reported rows' distinct
terms, is byte for byte what the row writer gives for the same rows; also
after a checkpoint's round trip of the event, and for an event kept by a
checkpoint of the release that held rows as tuples.

The engine runs real windows: terms that only the stream names (their IDs
freed and reused as batches leave), values the query computes, unbound
columns first, repeated rows, copies of one query, windows reused
unchanged, every report policy and form, in full and from changes."""

from __future__ import annotations

import pickle
import random

import httpx
import orjson
import pytest

from endpoint.sse import event_json, event_payload, results_json, sse_text
from engine.api import Store
from engine.rdf import IRI, Literal
from engine.rdf.ntriples import format_term
from engine.sparql.results import read_select, write_select
from engine.stream import StreamDefinition, StreamEngine, WindowEvent
from tests.endpoint.sse_client import SSEReader

EX = "http://example.org/"
HEAD = f"PREFIX ex: <{EX}> "
WINDOW = f"FROM NAMED WINDOW ex:w ON <{EX}s> [RANGE PT0.3S STEP PT0.1S] WHERE {{ WINDOW ex:w "
WHERE = {
    # ?who is unbound when nobody knows the observation: the first column unbound
    "optional": f"SELECT ?who ?o ?v {WINDOW}{{ ?o ex:val ?v OPTIONAL {{ ?who ex:knows ?o }} }} }}",
    "computed": f"SELECT ?v (CONCAT(STR(?v), \"\\\"!\") AS ?c) {WINDOW}{{ ?o ex:val ?v }} }}",
    "repeats": f"SELECT ?v {WINDOW}{{ ?o ex:val ?v }} }}",
    "construct": f"CONSTRUCT {{ ?o ex:seen ?v . ex:all ex:saw ?v }} {WINDOW}{{ ?o ex:val ?v }} }}",
    "ask": f"ASK {WINDOW}{{ ?o ex:val \"a\\\"b\" }} }}",
    "nothing": f"SELECT * {WINDOW}{{ ?o ex:never ?v }} }}",
}
VALUES = [Literal("a\"b"), Literal("é\n😀", lang="fr"), Literal("\u2028</x>"), Literal("7", EX + "t?a=1&b"),
          IRI(EX + "v,é"), Literal("3", "http://www.w3.org/2001/XMLSchema#integer")]


def row_writer(event: WindowEvent) -> bytes:
    """The results as the row writer gives them for the event's rows."""
    if event.form == "CONSTRUCT":
        return b"".join(write_select("json", ["subject", "predicate", "object"], event.triples))
    return b"".join(write_select("json", event.variables, event.rows))


def items(seed: int, steps: int, values: list = VALUES) -> list[list]:
    """Per 100 ms step, a few observations (new IRIs, window-only), some
    known by someone, values drawn from a few hostile spellings; some steps
    empty (their windows may reuse the previous answer)."""
    rng = random.Random(seed)
    out = []
    for step in range(steps):
        batch = []
        for j in range(rng.choice([0, 0, 1, 3, 6])):
            obs = IRI(f"{EX}obs{step}-{j}")
            triples = [(obs, IRI(EX + "val"), rng.choice(values))]
            if rng.random() < 0.4:
                triples.append((IRI(f"{EX}who{rng.randint(0, 2)}"), IRI(EX + "knows"), obs))
            batch.append((step * 100 + j, triples + triples[:rng.randint(0, 1)]))
        out.append(batch)
    return out


def old_release(event: WindowEvent) -> WindowEvent:
    """The event as a checkpoint of the release before kept it: rows and
    triples as lists of tuples, no reported positions."""
    state = event.__getstate__()
    del state["reported"]
    state["rows"], state["triples"] = list(event.rows), list(event.triples)
    old = WindowEvent.__new__(WindowEvent)
    old.__setstate__(state)
    return old


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("incremental", ["auto", "never", "always"])
def test_event_json_is_the_row_writers(seed, incremental):
    store = Store()
    engine = StreamEngine(store, incremental=incremental)
    engine.declare_stream(StreamDefinition("s", IRI(EX + "s"), timing=frozenset({EX + "val", EX + "knows"})))
    subscriptions = {}
    for report in ("RSTREAM", "ISTREAM", "DSTREAM"):
        for name, text in WHERE.items():
            for copy in ("", "_copy"):  # two copies: one evaluation, two policies
                query = f"{name}_{report}{copy}"
                running = engine.register(f"REGISTER {report} {query} AS {HEAD}{text}")
                subscriptions[query] = running.subscribe()
    checked = 0
    for step, batch in enumerate(items(seed, 30)):
        if batch:
            engine.ingest("s", batch)
        engine.heartbeat("s", (step + 1) * 100)
        for query, subscription in subscriptions.items():
            for event in subscription.drain():
                assert event.error is None, (query, event.error)
                payload = event_payload(event)
                document = orjson.loads(payload)
                assert document["rows"] == len(event.rows) + len(event.triples)
                expected = row_writer(event) if event.form != "ASK" else None
                if expected is not None:
                    assert results_json(event) == expected, (query, event.sequence)
                    assert payload.endswith(',"results":' + expected.strip().decode() + "}")
                assert event_json(event) == payload.encode()
                for kept in (pickle.loads(pickle.dumps(event)), old_release(event)):
                    assert sse_text(kept) == sse_text(event), (query, event.sequence)
                checked += event.count
    assert checked > 1000


def test_events_replayed_after_last_event_id_are_the_bytes_sent_live(serve):
    """Over HTTP: a client resuming with ``Last-Event-ID`` gets the retained
    events as they were sent live, and their results are the row writer's
    bytes for the rows they carry."""
    url = serve()
    http = httpx.Client(timeout=30)
    timing = [EX + "val", EX + "knows"]
    assert http.put(f"{url}/streams/s", json={"iri": EX + "s", "timing": timing}).status_code == 201
    for name in ("optional", "construct"):
        text = f"REGISTER ISTREAM {name} AS {HEAD}{WHERE[name]}"
        response = http.post(f"{url}/queries", content=text,
                             headers={"Content-Type": "application/sparql-query"})
        assert response.status_code == 201, response.text
    live = {name: SSEReader(f"{url}/queries/{name}/events") for name in ("optional", "construct")}
    # no U+2028: httpx's line reader (the test's and the Python client's) ends a line there
    steps = items(7, 20, [v for v in VALUES if "\u2028" not in str(v)])
    for step, batch in enumerate(steps):
        lines = [f"{ts} {format_term(s)} {format_term(p)} {format_term(o)} ." for ts, triples in batch
                 for s, p, o in triples]
        body = "\n".join(lines + [str((step + 1) * 100)])
        response = http.post(f"{url}/streams/s", content=body,
                             headers={"Content-Type": "application/x-timestamped-ntriples"})
        assert response.status_code < 300, response.text
    for name, reader in live.items():
        assert len(reader.wait_for(len(steps))) == len(steps), name
        resumed = SSEReader(f"{url}/queries/{name}/events", last_event_id="3")
        resumed.wait_for(len(steps) - 3)
        resumed.close()
        reader.close()
        assert resumed.raw == reader.raw[3:len(steps)], name
        for raw in reader.raw:
            results = raw[raw.index(',"results":') + len(',"results":'):-1].encode()
            parsed = read_select("json", results)
            assert results == b"".join(write_select("json", *parsed)).strip()
    assert any(orjson.loads(raw)["rows"] for raw in live["optional"].raw)
