"""The W3C SPARQL 1.1 federated query (SERVICE) tests (``service/manifest.ttl``).

Each remote endpoint a test names (``qt:serviceData``: <http://example.org/sparql>
and so on) is a real Rivulet server on loopback holding that endpoint's data;
SERVICE aliases route the example IRIs to them, on the queried server and on
the endpoints too (service3 nests a SERVICE inside a SERVICE). The endpoint
the tests call invalid is aliased to a loopback port nobody listens on, so
the SILENT tests see a refused connection without leaving the machine.
"""

import socket
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import rdflib
from rdflib.collection import Collection

from engine.api import Store
from engine.sparql.results import read_select
from tests.harness.w3c.compare import compare_solutions
from tests.harness.w3c.manifest import MF, QT, SUITE_ROOT, suite_missing_reason, url_to_path

pytestmark = pytest.mark.skipif(bool(suite_missing_reason()), reason=suite_missing_reason() or "")

MANIFEST = SUITE_ROOT / "service" / "manifest.ttl"
UNREACHABLE = "http://invalid.endpoint.org/sparql"

#: tests the engine cannot pass yet, and why (listed in docs/conformance-http.md)
UNSUPPORTED: dict[str, str] = {}


@dataclass(frozen=True)
class ServiceTest:
    name: str
    query: Path
    data: tuple[Path, ...]
    endpoints: tuple[tuple[str, tuple[Path, ...]], ...]
    result: Path


def read_tests() -> list[ServiceTest]:
    graph = rdflib.Graph().parse(MANIFEST, format="turtle", publicID=MANIFEST.as_uri())
    manifest = rdflib.URIRef(MANIFEST.as_uri())
    tests = []
    for entry in Collection(graph, graph.value(manifest, MF.entries)):
        action = graph.value(entry, MF.action)
        endpoints = tuple(sorted(
            (str(graph.value(s, QT.endpoint)), tuple(url_to_path(str(d)) for d in graph.objects(s, QT.data)))
            for s in graph.objects(action, QT.serviceData)
        ))
        tests.append(ServiceTest(
            name=str(entry).rsplit("#", 1)[1],
            query=url_to_path(str(graph.value(action, QT.query))),
            data=tuple(url_to_path(str(d)) for d in graph.objects(action, QT.data)),
            endpoints=endpoints,
            result=url_to_path(str(graph.value(entry, MF.result))),
        ))
    return tests


TESTS = read_tests() if not suite_missing_reason() else []


@pytest.fixture
def closed_port_url():
    """A loopback URL whose port stays bound, but not listening, for the whole test.

    Connections to it are refused; a port merely free at the start could be
    taken by one of the test's own servers a moment later (it once was, and
    the "invalid" endpoint answered).
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/sparql"


def store_with(files) -> Store:
    store = Store()
    for path in files:
        store.load(path)
    return store


def test_the_manifest_has_7_tests():
    assert len(TESTS) == 7


@pytest.mark.parametrize("test", [
    pytest.param(t, marks=pytest.mark.xfail(reason=UNSUPPORTED[t.name], strict=True))
    if t.name in UNSUPPORTED else t
    for t in TESTS
], ids=[t.name for t in TESTS])
def test_w3c_service(test, serve, closed_port_url):
    stores, aliases = [], {UNREACHABLE: closed_port_url}
    for iri, files in test.endpoints:
        store = store_with(files)
        aliases[iri] = serve(store) + "/sparql"
        stores.append(store)
    main = store_with(test.data)
    url = serve(main) + "/sparql"
    for store in [main, *stores]:
        store.service_endpoints.update(aliases)

    response = httpx.post(url, data={"query": test.query.read_text()},
                          headers={"Accept": "application/sparql-results+xml"}, timeout=30)
    assert response.status_code == 200, response.text
    variables, rows = read_select("xml", response.content)
    expected_vars, expected_rows = read_select("xml", test.result.read_bytes())
    difference = compare_solutions(variables, rows, expected_vars, expected_rows)
    assert difference is None, difference
