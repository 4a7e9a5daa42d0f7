"""Replaying the HTTP exchanges of the W3C protocol and graph store manifests.

Those manifests describe each test as a list of HTTP requests (vocabulary
``ht:``) with what the response must be: a status class or code, a boolean,
a kind of format, a Content-Type, an RDF body, a Location to reuse in later
requests. :func:`read_manifest` reads them; :func:`replay` sends them, in
order, to a live server and fails on the first response that does not match.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import httpx
import rdflib
from rdflib import RDFS, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.compare import isomorphic

from engine.sparql.results import format_for_media_type, read_select
from tests.harness.w3c.manifest import SUITE_ROOT

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
HT = Namespace("http://www.w3.org/2011/http#")
CNT = Namespace("http://www.w3.org/2011/content#")
UT = Namespace("http://www.w3.org/2009/sparql/tests/test-update#")

#: hts: status names used by the manifests
STATUS_NAMES = {"OK": 200, "Created": 201, "NoContent": 204, "NotFound": 404}

#: the manifests' path prefixes -> ours
PATH_PREFIXES = (("/sparql/", "/sparql"), ("/gsp", "/store"))

FORMAT_KINDS = {
    "boolean": {"application/sparql-results+json", "application/sparql-results+xml"},
    "tabular": {"application/sparql-results+json", "application/sparql-results+xml", "text/csv",
                "text/tab-separated-values"},
    "RDF": {"application/rdf+xml", "text/turtle", "application/n-triples"},
}

RDF_PARSERS = {"text/turtle": "turtle", "application/n-triples": "nt", "application/rdf+xml": "xml",
               "application/ld+json": "json-ld"}


@dataclass(frozen=True)
class Expected:
    statuses: tuple[str, ...]
    boolean: bool | None = None
    format: str | None = None
    location: str | None = None
    content_type: str | None = None
    body: str | None = None


@dataclass(frozen=True)
class Exchange:
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes | None
    expected: Expected


@dataclass(frozen=True)
class ManifestTest:
    name: str
    title: str
    exchanges: tuple[Exchange, ...]
    #: (file, graph IRI) to load as named graphs before the test
    graph_data: tuple[tuple[Path, str], ...] = ()
    requires: tuple[str, ...] = field(default=())


def _local(node) -> str:
    return str(node).rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _headers(graph: rdflib.Graph, node) -> tuple[tuple[str, str], ...]:
    headers = graph.value(node, HT.headers)
    if headers is None:
        return ()
    return tuple((str(graph.value(h, HT.fieldName)), str(graph.value(h, HT.fieldValue)))
                 for h in Collection(graph, headers))


def _body(graph: rdflib.Graph, node) -> tuple[str | None, str]:
    body = graph.value(node, HT.body)
    if body is None:
        return None, "utf-8"
    encoding = graph.value(body, CNT.characterEncoding)
    return str(graph.value(body, CNT.chars)), str(encoding or "UTF-8").lower()


def _exchange(graph: rdflib.Graph, request) -> Exchange:
    text, encoding = _body(graph, request)
    resp = graph.value(request, HT.resp)
    content_type = dict((k.lower(), v) for k, v in _headers(graph, resp)).get("content-type")
    expected_text, _ = _body(graph, resp)
    boolean = graph.value(resp, MF.expectedBoolean)
    fmt = graph.value(resp, MF.expectedFormat)
    location = graph.value(resp, MF.expectedLocation)
    expected = Expected(
        statuses=tuple(sorted(_local(s) for s in graph.objects(resp, MF.expectedStatus))),
        boolean=None if boolean is None else boolean.toPython(),
        format=None if fmt is None else str(fmt),
        location=None if location is None else str(location),
        content_type=content_type,
        body=expected_text,
    )
    path = str(graph.value(request, HT.absolutePath))
    for theirs, ours in PATH_PREFIXES:
        if path.startswith(theirs):
            path = ours + path[len(theirs):]
            break
    return Exchange(
        method=str(graph.value(request, HT.methodName)),
        path=path,
        headers=_headers(graph, request),
        body=None if text is None else text.encode(encoding),
        expected=expected,
    )


def read_manifest(path: Path) -> list[ManifestTest]:
    """The tests of a manifest and of the manifests it includes, in order."""
    graph = rdflib.Graph()
    graph.parse(path, format="turtle", publicID=path.as_uri())
    tests: list[ManifestTest] = []
    manifest = URIRef(path.as_uri())
    includes = graph.value(manifest, MF.include)
    if includes is not None:
        for included in Collection(graph, includes):
            tests += read_manifest(Path(str(included).removeprefix("file://")))
    entries = graph.value(manifest, MF.entries)
    for entry in Collection(graph, entries) if entries is not None else ():
        action = graph.value(entry, MF.action)
        requests = Collection(graph, graph.value(action, HT.requests))
        graph_data = tuple(
            (Path(str(graph.value(d, UT.graph)).removeprefix("file://")), str(graph.value(d, RDFS.label)))
            for d in graph.objects(entry, UT.graphData)
        )
        tests.append(ManifestTest(
            name=_local(entry),
            title=str(graph.value(entry, MF.name)),
            exchanges=tuple(_exchange(graph, r) for r in requests),
            graph_data=tuple(sorted(graph_data)),
            requires=tuple(sorted(_local(r) for r in graph.objects(entry, MF.requires))),
        ))
    return tests


def protocol_tests() -> list[ManifestTest]:
    return read_manifest(SUITE_ROOT / "protocol" / "manifest.ttl")


def graph_store_tests() -> list[ManifestTest]:
    return read_manifest(SUITE_ROOT / "graph-store-protocol" / "manifest.ttl")


# ------------------------------------------------------------------ checking


def _status_ok(code: int, statuses: tuple[str, ...]) -> bool:
    for name in statuses:
        if name.startswith("StatusCode") and name.endswith("xx"):
            if code // 100 == int(name[len("StatusCode")]):
                return True
        elif STATUS_NAMES.get(name) == code:
            return True
    return False


def _media(header: str | None) -> tuple[str, str | None]:
    parts = [p.strip().lower() for p in (header or "").split(";")]
    charset = next((p.split("=", 1)[1].strip('"') for p in parts[1:] if p.startswith("charset=")), None)
    return parts[0], charset


def _check(response: httpx.Response, expected: Expected) -> None:
    where = f"{response.request.method} {response.request.url}"
    assert _status_ok(response.status_code, expected.statuses), (
        f"{where}: status {response.status_code}, expected {expected.statuses}: {response.text[:300]}")
    media, _ = _media(response.headers.get("content-type"))
    if expected.format is not None:
        assert media in FORMAT_KINDS[expected.format], f"{where}: {media} is not {expected.format}"
    if expected.boolean is not None:
        fmt = format_for_media_type(media)
        assert fmt is not None, f"{where}: {media} is not a boolean result format"
        assert read_select(fmt, response.content) is expected.boolean, f"{where}: {response.text[:300]}"
    if expected.content_type is not None:
        assert _media(response.headers.get("content-type")) == _media(expected.content_type), (
            f"{where}: Content-Type {response.headers.get('content-type')}, expected {expected.content_type}")
    if expected.body is not None and response.request.method != "HEAD":
        want = rdflib.Graph().parse(data=expected.body, format=RDF_PARSERS[_media(expected.content_type)[0]])
        got = rdflib.Graph().parse(data=response.content, format=RDF_PARSERS[media])
        assert isomorphic(want, got), f"{where}: graph differs:\n{response.text}"


def replay(test: ManifestTest, base_url: str) -> None:
    """Send the test's requests in order, checking each response."""
    templates: dict[str, str] = {}
    with httpx.Client(base_url=base_url, timeout=30) as client:
        for exchange in test.exchanges:
            path, body = exchange.path, exchange.body
            for name, value in templates.items():
                path = path.replace(name, value)
                body = None if body is None else body.replace(name.encode(), value.encode())
            response = client.request(exchange.method, path, headers=list(exchange.headers), content=body)
            _check(response, exchange.expected)
            if exchange.expected.location is not None:
                assert "location" in response.headers, f"{exchange.method} {path}: no Location header"
                templates[exchange.expected.location] = response.headers["location"]
