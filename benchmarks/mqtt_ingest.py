"""Sustained ingest through MQTT beside HTTP, with one windowed query per stream.

One ``rivulet serve --data-dir`` child process (``--sync always``: every
item acknowledged is on disk) and one Mosquitto broker (Debian's package,
started here on a free loopback port). Three streams, each read by one
C-SPARQL query ``SELECT (COUNT(*) AS ?n) ... [RANGE 1s STEP 1s]``:

- ``http_item``: one item per ``POST /streams/http_item`` from one client,
  as a sensor without a broker would send them;
- ``http_batch``: the same items 100 to a POST (timestamped N-Triples);
- ``mqtt``: one item per MQTT message, QoS 1, published as fast as the
  broker takes them; the stream's source ingests what has arrived together
  (up to its in-flight window, default 100) and acknowledges once durable.

An item is a CityBench-shaped observation of 4 triples with its timestamp
in the payload (timestamped N-Triples). The rate is items (and triples)
over the wall time from the first send to the last acknowledgement by
Rivulet (the HTTP answer; the source's acknowledged count). Every window
is checked: the query's counts must add up to the triples sent.

    python -m benchmarks.mqtt_ingest [--items 20000] [--seconds 60] [--no-write]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import httpx
import orjson

from benchmarks import machine_description, markdown_table, write_section
from tests.endpoint.rivulet_process import RivuletProcess
from tests.mqtt.helpers import Publisher, wait_for
from tests.mqtt.mosquitto import Mosquitto, why_no_mosquitto

EX = "http://example.org/city/"
BATCH = "application/x-timestamped-ntriples"
TRIPLES_PER_ITEM = 4
START_MS = 1_700_000_000_000


def item(k: int) -> str:
    """Observation ``k`` at ``START_MS + k`` ms (1,000 items a second of application time)."""
    ts, ob = START_MS + k, f"<{EX}obs{k}>"
    return (f"{ts} {ob} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{EX}Observation> .\n"
            f"{ts} {ob} <{EX}observedBy> <{EX}sensor{k % 50}> .\n"
            f'{ts} {ob} <{EX}hasValue> "{k % 97}"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
            f"{ts} {ob} <{EX}property> <{EX}congestion> .\n")


def query(name: str) -> str:
    return (f"REGISTER QUERY q_{name} AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}{name}> "
            "[RANGE 1s STEP 1s] WHERE { ?s ?p ?o }")


def counted(http: httpx.Client, url: str, name: str) -> int:
    """Triples in the windows query ``q_name`` reported (its retained events)."""
    with http.stream("GET", f"{url}/queries/q_{name}/events", headers={"Last-Event-ID": "0"},
                     timeout=httpx.Timeout(10, read=2)) as response:
        total = 0
        try:
            for line in response.iter_lines():
                if line.startswith("data:"):
                    bindings = orjson.loads(line[5:])["results"]["results"]["bindings"]
                    total += sum(int(b["n"]["value"]) for b in bindings)
        except httpx.ReadTimeout:
            pass  # no more retained events
    return total


def run(items: int, seconds: float) -> list[tuple]:
    reason = why_no_mosquitto()
    if reason:
        raise SystemExit(f"benchmarks.mqtt_ingest: {reason}")
    broker = Mosquitto()
    data = Path(tempfile.mkdtemp(prefix="rivulet-mqtt-bench-"))
    server = RivuletProcess("--data-dir", str(data / "data"))
    http = httpx.Client(timeout=60)
    rows = []
    try:
        for name in ("http_item", "http_batch", "mqtt"):
            spec = {"iri": f"{EX}{name}"}
            if name == "mqtt":
                spec["source"] = {"broker": broker.url, "topic": "city/traffic", "format": BATCH}
            assert http.put(f"{server.url}/streams/{name}", json=spec).status_code == 201
            assert http.post(f"{server.url}/queries", content=query(name),
                             headers={"Content-Type": "application/sparql-query"}).status_code == 201
        bodies = [item(k) for k in range(items)]
        closing = f"{START_MS + items + 1000}\n"
        deadline = time.monotonic() + seconds

        started = time.perf_counter()
        sent = 0
        for body in bodies:
            if time.monotonic() > deadline:
                break
            http.post(f"{server.url}/streams/http_item", content=body, headers={"Content-Type": BATCH})
            sent += 1
        rows.append(("HTTP, one item per POST", sent, time.perf_counter() - started))
        http.post(f"{server.url}/streams/http_item", content=closing, headers={"Content-Type": BATCH})

        started = time.perf_counter()
        for at in range(0, items, 100):
            http.post(f"{server.url}/streams/http_batch", content="".join(bodies[at:at + 100]),
                      headers={"Content-Type": BATCH})
        rows.append(("HTTP, 100 items per POST", items, time.perf_counter() - started))
        http.post(f"{server.url}/streams/http_batch", content=closing, headers={"Content-Type": BATCH})

        wait_for(lambda: http.get(f"{server.url}/streams/mqtt").json()["source_state"]["connected"],
                 what="the MQTT source")
        publisher = Publisher(broker.url, "bench-gateway")
        started = time.perf_counter()
        for body in bodies:
            publisher.publish("city/traffic", body)

        def acknowledged() -> int:
            return http.get(f"{server.url}/streams/mqtt").json()["source_state"]["acknowledged"]

        wait_for(lambda: acknowledged() >= items, seconds=max(seconds, 30),
                 what="every message acknowledged")
        rows.append(("MQTT, one item per message, QoS 1", items, time.perf_counter() - started))
        publisher.publish("city/traffic", closing)
        wait_for(lambda: acknowledged() >= items + 1, what="the closing heartbeat")
        publisher.close()

        sent_of = {"http_item": rows[0][1], "http_batch": items, "mqtt": items}
        for name, count in sent_of.items():
            windows = wait_for(lambda n=name, c=count: counted(http, server.url, n) == c * TRIPLES_PER_ITEM,
                               what=f"the windows of {name} to hold every triple")
            assert windows
    finally:
        server.stop()
        broker.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=60.0, help="bound on each phase")
    parser.add_argument("--no-write", action="store_true", help="print, do not update docs/benchmarks.md")
    args = parser.parse_args()
    rows = run(args.items, args.seconds)
    table = markdown_table(
        ["how", "items", "seconds", "items/s", "triples/s"],
        [(how, count, round(elapsed, 2), round(count / elapsed), round(count * TRIPLES_PER_ITEM / elapsed))
         for how, count, elapsed in rows])
    body = (f"`python -m benchmarks.mqtt_ingest --items {args.items}`: {machine_description()}. One "
            "`rivulet serve --data-dir` (`--sync always`) and one Mosquitto 2.0 on loopback; each stream "
            "read by one `[RANGE 1s STEP 1s]` COUNT query; an item is 4 triples; every window checked (the "
            "counts add up to the triples sent).\n\n" + table)
    print(body)
    if not args.no_write:
        write_section("MQTT ingest beside HTTP (`benchmarks/mqtt_ingest.py`)", body)


if __name__ == "__main__":
    main()
