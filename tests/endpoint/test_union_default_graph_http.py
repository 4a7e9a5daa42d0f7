"""``--union-default-graph`` on a real server: a query naming no dataset
reads the merge of every graph; a query naming one, GRAPH, updates and the
graph store are unchanged. Without the option nothing changes."""

from __future__ import annotations

import httpx

from engine.api import Store
from tests.endpoint.rivulet_process import RivuletProcess

QUADS = (b"<http://x/a> <http://x/p> <http://x/b> .\n"
         b"<http://x/a> <http://x/p> <http://x/b> <http://x/g1> .\n"  # also in the default graph: one triple
         b"<http://x/c> <http://x/p> <http://x/d> <http://x/g1> .\n"
         b"<http://x/e> <http://x/p> <http://x/f> <http://x/g2> .\n")
COUNT = "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"


def count(url: str, query: str = COUNT, **params: str) -> int:
    response = httpx.get(url + "/sparql", params={"query": query, **params}, timeout=10)
    assert response.status_code == 200, response.text
    return int(response.json()["results"]["bindings"][0]["n"]["value"])


def dataset() -> Store:
    store = Store()
    store.load(QUADS, "nquads")
    return store


def test_the_default_graph_is_the_merge_of_every_graph(serve):
    url = serve(dataset(), union_default_graph=True)
    for _ in range(3):  # the short path of a repeated small query reads the same dataset
        assert count(url) == 3  # a, c, e: the triple in two graphs counted once
    assert count(url, "SELECT (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } }") == 3  # named graphs apart
    assert count(url, "SELECT (COUNT(*) AS ?n) FROM <http://x/g2> { ?s ?p ?o }") == 1
    assert count(url, **{"default-graph-uri": "http://x/g1"}) == 2
    # an update still writes the store's own default graph, which GET /store?default shows alone
    insert = "INSERT DATA { <http://x/h> <http://x/p> <http://x/i> }"
    write = httpx.post(url + "/sparql", data={"update": insert}, timeout=10)
    assert write.status_code == 204
    assert count(url) == 4
    default = httpx.get(url + "/store?default", headers={"Accept": "application/n-triples"}, timeout=10)
    assert sorted(default.text.splitlines()) == ["<http://x/a> <http://x/p> <http://x/b> .",
                                                 "<http://x/h> <http://x/p> <http://x/i> ."]


def test_without_the_option_the_default_graph_is_the_stores_own(serve):
    url = serve(dataset())
    assert count(url) == 1


def test_the_service_description_says_so(serve):
    feature = "<http://www.w3.org/ns/sparql-service-description#UnionDefaultGraph>"
    for union in (True, False):
        url = serve(dataset(), union_default_graph=union)
        description = httpx.get(url + "/sparql", headers={"Accept": "application/n-triples"}, timeout=10).text
        assert (feature in description) is union


def test_rivulet_serve_takes_the_option(tmp_path):
    data = tmp_path / "data.nq"
    data.write_bytes(QUADS)
    server = RivuletProcess("--data", str(data), "--union-default-graph")
    try:
        assert count(server.url) == 3
    finally:
        server.stop()
