"""``/openapi.json``: valid OpenAPI 3.1, one entry per route of the application and no more,
and the statuses and JSON it describes are what the server really answers."""

from __future__ import annotations

import re

import httpx
import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from endpoint.app import create_app
from endpoint.openapi import DOCUMENT
from engine.api import Store
from tests.endpoint.sse_client import SSEReader

EX = "http://example.org/"
#: the routes another document describes (the W3C protocols) and the console's files
ELSEWHERE = re.compile(r"^/(sparql|store|static)?($|/)")
METHODS = {"get", "put", "post", "delete", "head", "patch", "options", "trace"}
http = httpx.Client(timeout=30)


def application_routes() -> dict[str, set[str]]:
    """Path (converters dropped, as OpenAPI spells it) -> methods, HEAD left out where GET implies it."""
    routes: dict[str, set[str]] = {}
    for route in create_app(Store()).routes:
        if ELSEWHERE.match(route.path) or getattr(route, "methods", None) is None:
            continue
        path = re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)
        routes.setdefault(path, set()).update(m.lower() for m in route.methods)
    return {path: methods - {"head"} for path, methods in routes.items()}


def documented_routes() -> dict[str, set[str]]:
    return {path: set(item) & METHODS - {"head"} for path, item in DOCUMENT["paths"].items()}


def test_the_document_is_valid_openapi_3_1():
    validate(DOCUMENT)  # raises with the first problem
    assert DOCUMENT["openapi"].startswith("3.1.")


def test_every_route_is_documented_and_every_documented_route_exists():
    assert documented_routes() == application_routes()
    assert "/queries/{name}/events" in DOCUMENT["paths"] and "/healthz" in DOCUMENT["paths"]


def test_a_documented_head_is_answered():
    for path, item in DOCUMENT["paths"].items():
        if "head" in item:
            assert "get" in item, f"{path}: HEAD without GET"


@pytest.fixture
def url(serve) -> str:
    return serve()


def check(response: httpx.Response, path: str, method: str, expected: int) -> httpx.Response:
    """Assert that ``response`` has the status the test expects, that the
    document lists it, and that its JSON matches the schema documented for it."""
    assert response.status_code == expected, f"{method.upper()} {path}: {response.text}"
    operation = DOCUMENT["paths"][path][method]
    status = str(response.status_code)
    assert status in operation["responses"], f"{method.upper()} {path} answered {status}: {response.text}"
    answer = operation["responses"][status]
    if "$ref" in answer:
        answer = DOCUMENT["components"]["responses"][answer["$ref"].rsplit("/", 1)[1]]
    media = response.headers.get("content-type", "").split(";")[0]
    content = answer.get("content", {})
    if content or response.content:
        assert media in content, f"{method.upper()} {path} {status}: {media} not documented"
    if media == "application/json":
        schema = {**content[media]["schema"], "components": DOCUMENT["components"]}
        errors = [e.message for e in Draft202012Validator(schema).iter_errors(response.json())]
        assert errors == [], f"{method.upper()} {path} {status}: {errors}"
    return response


def test_the_statuses_and_json_are_the_servers_own(url):
    stream, queries, events = "/streams/{name}", "/queries/{name}", "/queries/{name}/events"
    declaration = {"iri": f"{EX}s", "timing": [f"{EX}t"]}
    check(http.get(f"{url}/streams/nope"), stream, "get", 404)
    check(http.put(f"{url}/streams/s", json=declaration), stream, "put", 201)
    check(http.put(f"{url}/streams/s", json=declaration), stream, "put", 200)
    check(http.put(f"{url}/streams/s", json={"colour": "red"}), stream, "put", 400)
    check(http.get(f"{url}/streams/s"), stream, "get", 200)
    check(http.get(f"{url}/streams"), "/streams", "get", 200)

    def ingest(expected: int, body: str | bytes = b"", **headers: str) -> None:
        headers.setdefault("Content-Type", "application/x-timestamped-ntriples")
        check(http.post(f"{url}/streams/s", content=body, headers=headers), stream, "post", expected)

    ingest(202, f'1000 <{EX}a> <{EX}t> "1" .\n2000')
    ingest(409, f'500 <{EX}a> <{EX}t> "1" .')
    ingest(400, "1000 <broken")
    ingest(415, b"x", **{"Content-Type": "image/png"})
    check(http.post(f"{url}/streams/s", params={"timestamp": "1970-01-01T00:00:03Z"}), stream, "post", 202)

    def register(expected: int, text: str) -> None:
        check(http.post(f"{url}/queries", content=text, headers={"Content-Type": "application/sparql-query"}),
              "/queries", "post", expected)

    registration = (f"REGISTER QUERY q AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                    "WHERE { ?s ?p ?o }")
    register(201, registration)
    # every window must be reported: a jump over 100,000 windows of the query is refused
    ingest(422, **{"Content-Type": "application/n-triples", "X-Timestamp": "99999999999999"})
    register(409, registration)
    register(400, "REGISTER QUERY")
    register(404, registration.replace(f"<{EX}s>", "<http://example.org/undeclared>").replace("q AS", "r AS"))
    check(http.get(f"{url}/queries"), "/queries", "get", 200)
    reader = SSEReader(f"{url}/queries/q/events", last_event_id="0")
    assert reader.status == 200
    ingest(202, f'4000 <{EX}a> <{EX}t> "2" .\n5000')
    windows = reader.wait_for(1)
    reader.close()
    event_schema = {"$ref": "#/components/schemas/WindowEvent", "components": DOCUMENT["components"]}
    assert windows, "no window event arrived"
    assert [e.message for e in Draft202012Validator(event_schema).iter_errors(windows[0])] == []
    check(http.get(f"{url}/queries/q"), queries, "get", 200)
    check(http.get(f"{url}/queries/nope/events"), events, "get", 404)
    check(http.delete(f"{url}/streams/s"), stream, "delete", 409)  # q reads it
    check(http.delete(f"{url}/queries/q"), queries, "delete", 204)
    check(http.delete(f"{url}/queries/q"), queries, "delete", 404)
    check(http.get(f"{url}/queries/q"), queries, "get", 404)
    check(http.put(f"{url}/streams/s", json={"iri": f"{EX}elsewhere"}), stream, "put", 409)
    check(http.delete(f"{url}/streams/s"), stream, "delete", 204)
    check(http.delete(f"{url}/streams/s"), stream, "delete", 404)

    for path in ("/healthz", "/readyz", "/metrics", "/openapi.json"):
        check(http.get(f"{url}{path}"), path, "get", 200)
    assert http.get(f"{url}/openapi.json").json() == DOCUMENT


def test_refused_writes_are_documented(serve):
    url = serve(update_token="secret")
    check(http.put(f"{url}/streams/s"), "/streams/{name}", "put", 401)
    check(http.post(f"{url}/queries", content="x"), "/queries", "post", 401)
    check(http.delete(f"{url}/queries/q"), "/queries/{name}", "delete", 401)
    check(http.delete(f"{url}/streams/s"), "/streams/{name}", "delete", 401)
    read_only = serve(read_only=True)
    check(http.put(f"{read_only}/streams/s"), "/streams/{name}", "put", 403)
    check(http.post(f"{read_only}/streams/s", content=b""), "/streams/{name}", "post", 403)
    check(http.delete(f"{read_only}/streams/s"), "/streams/{name}", "delete", 403)
