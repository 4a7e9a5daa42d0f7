"""The Graph Store HTTP Protocol as a client uses it: upload graphs in every
syntax, read them back, replace and delete them, and the error answers."""

import httpx
import pytest
import rdflib
from rdflib.compare import isomorphic

TURTLE = b"""@prefix ex: <http://example.org/rivers/> .
ex:Isar ex:flowsInto ex:Danube ; ex:lengthKm 292 ; ex:label "Isar"@de ."""
GRAPH = "http://example.org/graphs/bavaria"

SYNTAXES = {
    "text/turtle": "turtle",
    "application/n-triples": "nt",
    "application/rdf+xml": "xml",
    "application/ld+json": "json-ld",
}


def expected_graph() -> rdflib.Graph:
    return rdflib.Graph().parse(data=TURTLE, format="turtle")


def fetch(url: str, accept: str = "text/turtle", **params) -> rdflib.Graph:
    response = httpx.get(url, params=params or None, headers={"Accept": accept})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == accept
    return rdflib.Graph().parse(data=response.content, format=SYNTAXES[accept])


@pytest.mark.parametrize("media_type", list(SYNTAXES))
def test_put_a_graph_in_each_syntax_and_read_it_in_each(serve, media_type):
    store_url = serve() + "/store"
    body = expected_graph().serialize(format=SYNTAXES[media_type], encoding="utf-8")
    created = httpx.put(store_url, params={"graph": GRAPH}, content=body,
                        headers={"Content-Type": media_type})
    assert created.status_code == 201
    for accept in SYNTAXES:
        assert isomorphic(fetch(store_url, accept, graph=GRAPH), expected_graph())


def test_put_replaces_and_post_merges(serve):
    store_url = serve() + "/store"
    headers = {"Content-Type": "text/turtle"}
    httpx.put(store_url, params={"graph": GRAPH}, content=TURTLE, headers=headers)
    one_triple = b"<http://example.org/rivers/Isar> <http://example.org/rivers/lengthKm> 295 ."
    replaced = httpx.put(store_url, params={"graph": GRAPH}, headers=headers, content=one_triple)
    assert replaced.status_code == 204
    assert len(fetch(store_url, graph=GRAPH)) == 1
    merged = httpx.post(store_url, params={"graph": GRAPH}, content=TURTLE, headers=headers)
    assert merged.status_code == 204
    assert len(fetch(store_url, graph=GRAPH)) == 4


def test_the_default_graph(serve):
    store_url = serve() + "/store"
    put = httpx.put(store_url + "?default", content=TURTLE, headers={"Content-Type": "text/turtle"})
    assert put.status_code == 204
    assert isomorphic(fetch(store_url + "?default"), expected_graph())
    assert httpx.delete(store_url + "?default").status_code == 204
    assert len(fetch(store_url + "?default")) == 0


def test_direct_identification_names_the_graph_by_its_url(serve):
    base = serve()
    url = base + "/store/rivers/bavaria"
    assert httpx.put(url, content=TURTLE, headers={"Content-Type": "text/turtle"}).status_code == 201
    assert isomorphic(fetch(url), expected_graph())
    assert isomorphic(fetch(base + "/store", graph=url), expected_graph())
    assert httpx.head(url).status_code == 200
    assert httpx.delete(url).status_code == 204
    assert httpx.get(url).status_code == 404


def test_post_to_the_store_creates_a_graph_and_says_where(serve):
    store_url = serve() + "/store"
    response = httpx.post(store_url, content=TURTLE, headers={"Content-Type": "text/turtle"})
    assert response.status_code == 201
    location = response.headers["location"]
    assert location.startswith(store_url + "/")
    assert isomorphic(fetch(location), expected_graph())


def test_bulk_upload_of_a_dataset_in_nquads_and_trig(serve):
    base = serve()
    nquads = (b"<http://x/a> <http://x/p> \"1\" <http://x/g1> .\n"
              b"<http://x/b> <http://x/p> \"2\" .\n")
    trig = b"<http://x/g2> { <http://x/c> <http://x/p> \"3\" }"
    for body, media_type in ((nquads, "application/n-quads"), (trig, "application/trig")):
        response = httpx.post(base + "/store", content=body, headers={"Content-Type": media_type})
        assert response.status_code == 204
    query = ("SELECT ?g (COUNT(*) AS ?n) { { ?s ?p ?o BIND('default' AS ?g) } "
             "UNION { GRAPH ?g { ?s ?p ?o } } } GROUP BY ?g ORDER BY ?g")
    count = httpx.get(base + "/sparql", params={"query": query, "format": "csv"})
    assert count.text.split() == ["g,n", "http://x/g1,1", "http://x/g2,1", "default,1"]


def test_multipart_upload_merges_every_file(serve):
    store_url = serve() + "/store"
    files = [
        ("part", ("isar.ttl", TURTLE, "text/turtle")),
        ("part", ("lech.nt", b"<http://example.org/rivers/Lech> <http://example.org/rivers/flowsInto> "
                             b"<http://example.org/rivers/Danube> .\n", "application/octet-stream")),
    ]
    response = httpx.post(store_url, params={"graph": GRAPH}, files=files)
    assert response.status_code == 201
    assert len(fetch(store_url, graph=GRAPH)) == 4


def test_errors(serve):
    store_url = serve() + "/store"
    missing = httpx.get(store_url, params={"graph": "http://example.org/none"})
    assert missing.status_code == 404
    assert httpx.delete(store_url, params={"graph": "http://example.org/none"}).status_code == 404
    bad_type = httpx.put(store_url, params={"graph": GRAPH}, content=b"x",
                         headers={"Content-Type": "image/png"})
    assert bad_type.status_code == 415
    malformed = httpx.put(store_url, params={"graph": GRAPH}, content=b"<a> <b> .",
                          headers={"Content-Type": "text/turtle"})
    assert malformed.status_code == 400 and "turtle" in malformed.text
    assert httpx.get(store_url, params={"graph": GRAPH}).status_code == 404  # nothing was created
    unnamed = httpx.put(store_url, content=b"", headers={"Content-Type": "text/turtle"})
    assert unnamed.status_code == 400
    assert httpx.patch(store_url + "?default").status_code == 405
