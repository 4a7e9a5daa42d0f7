"""The Flask blueprint on a real WSGI server (Werkzeug's threaded server on
loopback): the W3C protocol tests, the same answers and errors as the
Starlette application for the same requests, streams and Server-Sent Events,
and a mount under a URL prefix."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from flask import Flask
from werkzeug.serving import make_server

from endpoint.flask_blueprint import rivulet_blueprint
from endpoint.settings import Settings
from engine.api import Store
from engine.stream import StreamEngine
from tests.endpoint.conftest import DEMO
from tests.endpoint.test_http_cancellation import SLOW
from tests.endpoint.test_http_sparql import EX, LONGEST, RHINE_TRIBUTARIES
from tests.endpoint.test_request_timeout_http import slow_store
from tests.harness.w3c.manifest import suite_missing_reason
from tests.harness.w3c_http.manifest import protocol_tests, replay

Serve = Callable[..., str]


@pytest.fixture
def flask_serve() -> Iterator[Serve]:
    """Factory: ``flask_serve(store=None, prefix="", **settings) -> base URL``
    of a Werkzeug server (a thread per request) running a Flask app with the
    blueprint mounted at ``prefix``."""
    servers = []

    def start(store: Store | None = None, prefix: str = "", **settings) -> str:
        store = store if store is not None else Store()
        streams = StreamEngine(store)
        app = Flask("rivulet-test")
        app.register_blueprint(rivulet_blueprint(store, Settings(**settings), streams), url_prefix=prefix)
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        servers.append((server, thread, streams))
        return f"http://127.0.0.1:{server.server_port}{prefix}"

    yield start
    for server, thread, streams in servers:
        server.shutdown()
        thread.join(timeout=5)
        streams.close()


PROTOCOL_TESTS = protocol_tests() if not suite_missing_reason() else []


@pytest.mark.skipif(bool(suite_missing_reason()), reason=suite_missing_reason() or "")
@pytest.mark.parametrize("test", PROTOCOL_TESTS, ids=[t.name for t in PROTOCOL_TESTS])
def test_w3c_protocol_on_the_blueprint(test, flask_serve):
    store = Store()
    for path, graph in test.graph_data:
        store.load(path, graph=graph)
    replay(test, flask_serve(store))


#: requests, good and bad, whose answers must be the same from both front doors
SAME_ANSWERS = [
    ("GET", "/sparql", {"query": LONGEST}, {}, None),
    ("GET", "/sparql", {"query": LONGEST, "format": "csv"}, {}, None),
    ("GET", "/sparql", {"query": RHINE_TRIBUTARIES}, {"Accept": "text/turtle"}, None),
    ("GET", "/sparql", {"query": RHINE_TRIBUTARIES}, {"Accept": "application/ld+json"}, None),
    ("GET", "/sparql", {"query": EX + "ASK { ex:Rhine ?p ?o }"}, {"Accept": "text/*"}, None),
    ("GET", "/sparql", {"query": "SELECT * WHERE { ?s ?p }"}, {}, None),
    ("GET", "/sparql", {"query": "ASK {}"}, {"Accept": "image/png"}, None),
    ("GET", "/sparql", {"query": "ASK {}", "format": "csv", "output": "json"}, {}, None),
    ("GET", "/sparql", {"update": "CLEAR ALL"}, {}, None),
    ("GET", "/sparql", {"query": "REGISTER QUERY q AS SELECT * FROM STREAM <http://s> [RANGE 1s STEP 1s] "
                                 "WHERE { ?s ?p ?o }"}, {}, None),
    ("POST", "/sparql", {}, {"Content-Type": "text/plain"}, b"ASK {}"),
    ("POST", "/sparql", {}, {"Content-Type": "application/sparql-update"}, b"INSERT DATA { <a> }"),
    ("POST", "/sparql", {}, {"Content-Type": "application/sparql-update"},
     b"INSERT DATA { <http://x/s> <http://x/p> 1 }"),
    ("POST", "/sparql", {}, {"Content-Type": "application/sparql-query", "Authorization": "Basic !"},
     b"ASK { <http://x/s> ?p 1 }"),
    ("PUT", "/streams/bad name", {}, {}, b"{}"),
    ("PUT", "/streams/s", {}, {}, b'{"idle": "sometimes"}'),
    ("PUT", "/streams/s", {}, {}, b'{"timing": ["http://x/at"]}'),
    ("POST", "/streams/s", {}, {"X-Timestamp": "1000"}, b"<http://x/a> <http://x/b> <http://x/c> ."),
    ("POST", "/streams/s", {}, {"X-Timestamp": "10"}, b"<http://x/a> <http://x/b> <http://x/c> ."),
    ("POST", "/streams/s", {}, {}, b"<http://x/a> <http://x/b> ."),
    ("GET", "/streams/nope", {}, {}, None),
    ("PUT", "/streams/s", {}, {}, b'{"iri": "http://x/elsewhere"}'),
    ("DELETE", "/streams/s", {}, {}, None),
    ("DELETE", "/streams/s", {}, {}, None),
    ("POST", "/streams/s", {}, {"X-Timestamp": "2000"}, b""),
    ("POST", "/queries", {}, {"Content-Type": "image/png"}, b"x"),
    ("POST", "/queries", {}, {"Content-Type": "application/sparql-query"}, b"REGISTER QUERY"),
    ("DELETE", "/queries/nope", {}, {}, None),
]


def _summary(response: httpx.Response, base: str) -> tuple:
    """Status, media type and body, the server's own URL spelled BASE."""
    media = response.headers.get("content-type", "").split(";")[0]
    text = response.text.replace(base, "BASE")
    body = orjson.loads(text) if media == "application/json" else text
    if isinstance(body, dict):  # timings differ between two runs
        body = {k: v for k, v in body.items() if not k.endswith("_at_ms")}
    return response.status_code, media, body


def test_the_blueprint_answers_as_the_starlette_application_does(serve, flask_serve, demo_store):
    """Same requests in the same order to both front doors, over equal stores."""
    other = Store()
    other.load(DEMO)
    starlette_url, flask_url = serve(demo_store), flask_serve(other)
    for method, path, params, headers, body in SAME_ANSWERS:
        answers = [_summary(httpx.request(method, url + path, params=params, headers=headers, content=body),
                            url) for url in (starlette_url, flask_url)]
        assert answers[0] == answers[1], (method, path, params)
        assert answers[0][0] != 500


def test_writes_on_the_blueprint_need_the_token_by_bearer_or_basic(flask_serve):
    url = flask_serve(update_token="s3cret") + "/sparql"
    update = {"update": "INSERT DATA { <http://x/a> <http://x/b> <http://x/c> }"}
    refused = httpx.post(url, data=update)
    assert refused.status_code == 401
    assert refused.headers.get_list("www-authenticate") == ['Basic realm="rivulet"']
    assert httpx.post(url, data=update, auth=("user", "s3cret")).status_code == 204
    assert httpx.post(url, data=update, headers={"Authorization": "Bearer s3cret"}).status_code == 204
    assert httpx.get(url, params={"query": "ASK { <http://x/a> ?p ?o }"}).json()["boolean"] is True


def test_the_blueprint_refuses_bodies_over_the_limit(flask_serve):
    url = flask_serve(max_body_bytes=1000) + "/sparql"
    too_big = httpx.post(url, content=b"#" * 2000, headers={"Content-Type": "application/sparql-update"})
    assert too_big.status_code == 413


REGISTRATION = """REGISTER QUERY hot AS
PREFIX ex: <http://example.org/>
SELECT ?sensor ?t
FROM STREAM <http://example.org/readings> [RANGE 1s STEP 1s]
WHERE { ?sensor ex:temperature ?t FILTER(?t > 30) }"""


def _read_windows(url: str, count: int, found: list[dict], headers: dict[str, str]) -> None:
    """Read ``count`` window events from the SSE stream at ``url`` into ``found``."""
    with httpx.stream("GET", url, headers=headers, timeout=20) as response:
        found.append({"status": response.status_code, "type": response.headers["content-type"]})
        event: dict[str, str] = {}
        for line in response.iter_lines():
            if line.startswith(("id:", "event:", "data:")):
                key, _, value = line.partition(":")
                event[key] = value.strip()
            elif not line and "data" in event:
                found.append(event)
                event = {}
                if len(found) > count:
                    return


def test_streams_and_windows_over_server_sent_events_under_a_prefix(flask_serve):
    base = flask_serve(prefix="/rdf")
    declared = httpx.put(base + "/streams/readings", json={"iri": "http://example.org/readings"})
    assert declared.status_code == 201 and declared.headers["location"] == base + "/streams/readings"
    registered = httpx.post(base + "/queries", content=REGISTRATION,
                            headers={"Content-Type": "application/sparql-query"})
    assert registered.status_code == 201 and registered.headers["location"] == base + "/queries/hot"
    found: list[dict] = []
    reader = threading.Thread(target=_read_windows, args=(base + "/queries/hot/events", 2, found, {}),
                              daemon=True)
    reader.start()
    deadline = time.monotonic() + 10
    while not httpx.get(base + "/queries/hot").json().get("subscribers") and time.monotonic() < deadline:
        time.sleep(0.02)
    for second, temperature in ((0, 35), (1, 20), (2, 31)):
        item = (f'<http://example.org/s1> <http://example.org/temperature> "{temperature}"'
                "^^<http://www.w3.org/2001/XMLSchema#integer> .")
        posted = httpx.post(base + "/streams/readings", content=item,
                            headers={"X-Timestamp": str(second * 1000 + 500)})
        assert posted.status_code == 202
    reader.join(timeout=20)
    assert found[0] == {"status": 200, "type": "text/event-stream; charset=utf-8"}
    events = found[1:]
    assert [e["id"] for e in events] == ["1", "2"]
    assert all(e["event"] == "window" for e in events)
    rows = [httpx.Response(200, content=e["data"]).json()["results"]["results"]["bindings"] for e in events]
    assert [[b["t"]["value"] for b in window] for window in rows] == [["35"], []]
    resumed: list[dict] = []
    _read_windows(base + "/queries/hot/events", 1, resumed, {"Last-Event-ID": "1"})
    assert [e["id"] for e in resumed[1:]] == ["2"] and resumed[1]["data"] == events[1]["data"]
    assert httpx.delete(base + "/queries/hot").status_code == 204
    assert httpx.get(base + "/queries").json() == {"queries": []}


GUNICORN_APP = """
from flask import Flask
from endpoint.flask_blueprint import rivulet_blueprint
from endpoint.settings import Settings
from engine.api import Store

store = Store()
store.load({demo!r})
app = Flask(__name__)
app.register_blueprint(rivulet_blueprint(store, Settings(base_url={base!r})), url_prefix="/rdf")
"""


def test_the_blueprint_under_gunicorn_answers_queries_and_streams_windows(tmp_path):
    """The way docs/flask.md says to run it: gunicorn with threads."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    (tmp_path / "app.py").write_text(GUNICORN_APP.format(demo=str(DEMO), base=base))
    gunicorn = Path(sys.executable).with_name("gunicorn")
    server = subprocess.Popen([str(gunicorn), "-k", "gthread", "--threads", "8", "-w", "1",
                               "--graceful-timeout", "2", "-b", f"127.0.0.1:{port}", "--chdir", str(tmp_path),
                               "app:app"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                answer = httpx.get(base + "/rdf/sparql", params={"query": LONGEST, "format": "csv"})
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        assert answer.status_code == 200 and answer.text.splitlines()[1].startswith(
            "http://example.org/rivers/Danube")
        assert httpx.put(base + "/rdf/streams/readings", json={"iri": "http://example.org/readings"}
                         ).status_code == 201
        assert httpx.post(base + "/rdf/queries", content=REGISTRATION).status_code == 201
        found: list[dict] = []
        reader = threading.Thread(target=_read_windows, args=(base + "/rdf/queries/hot/events", 1, found, {}),
                                  daemon=True)
        reader.start()
        while not httpx.get(base + "/rdf/queries/hot").json()["subscribers"] and time.monotonic() < deadline:
            time.sleep(0.05)
        for at, temperature in ((500, 35), (1500, 20)):
            item = (f'<http://example.org/s1> <http://example.org/temperature> "{temperature}"'
                    "^^<http://www.w3.org/2001/XMLSchema#integer> .")
            assert httpx.post(base + "/rdf/streams/readings", content=item,
                              headers={"X-Timestamp": str(at)}).status_code == 202
        reader.join(timeout=20)
        assert [e.get("id") for e in found[1:]] == ["1"]
        bindings = orjson.loads(found[1]["data"])["results"]["results"]["bindings"]
        assert [b["t"]["value"] for b in bindings] == ["35"]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_blueprint_bounds_updates_and_the_windows_of_the_engine_it_makes():
    """A backtracking REGEX in an update, and in a window of the stream
    engine the blueprint makes itself, stop at the settings' time limit."""
    store = Store()
    app = Flask("rivulet-bounds")
    app.register_blueprint(rivulet_blueprint(store, Settings(query_timeout=0.5)))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    poison, ns = "a" * 120 + "!", "http://example.org/"
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{server.server_port}", timeout=30) as http:
            text = f'INSERT {{ <{ns}u> <{ns}m> ?m }} WHERE {{ BIND(REGEX("{poison}", "^(a|aa)+$") AS ?m) }}'
            update = http.post("/sparql", data={"update": text})
            assert update.status_code == 503 and "update cancelled" in update.text
            assert "nothing was changed" in update.text and not len(store)
            assert http.put("/streams/s", json={"iri": f"{ns}s"}).status_code == 201
            text = (f"REGISTER QUERY q AS SELECT ?o FROM STREAM <{ns}s> [RANGE 1s STEP 1s] "
                    'WHERE { ?s ?p ?o FILTER(REGEX(STR(?o), "^(a|aa)+$")) }')
            registered = http.post("/queries", content=text,
                                   headers={"Content-Type": "application/sparql-query"})
            assert registered.status_code == 201
            item = http.post("/streams/s", content=f'<{ns}x> <{ns}p> "{poison}" .\n',
                             headers={"Content-Type": "application/n-triples", "X-Timestamp": "100"})
            assert item.status_code == 202
            heartbeat = http.post("/streams/s", headers={"X-Timestamp": "1000"})
            assert heartbeat.status_code == 202 and heartbeat.json()["windows_failed"] == 1
            assert http.get("/queries/q").json()["last_error"]["reason"] == "time_limit"
    finally:
        server.shutdown()
        thread.join(timeout=5)


def test_the_blueprint_takes_timeout_explain_and_the_union_default_graph(flask_serve):
    url = flask_serve(slow_store(), query_timeout=60) + "/sparql"
    started = time.monotonic()
    stopped = httpx.get(url, params={"query": SLOW, "timeout": "0.3"}, timeout=30)
    assert stopped.status_code == 503 and "the request's time limit of 0.3 s" in stopped.text
    assert time.monotonic() - started < 5
    assert httpx.get(url, params={"query": "ASK {}", "timeout": "x"}, timeout=10).status_code == 400
    plan = httpx.get(url, params={"query": SLOW, "explain": "plan"}, timeout=10)
    assert plan.status_code == 200 and plan.json()["plan"]["operator"] == "Project"

    store = Store()
    store.load(b"<http://x/a> <http://x/p> <http://x/b> <http://x/g> .\n", "nquads")
    union = flask_serve(store, union_default_graph=True) + "/sparql"
    answer = httpx.get(union, params={"query": "ASK { <http://x/a> <http://x/p> <http://x/b> }"}, timeout=10)
    assert answer.json()["boolean"] is True
