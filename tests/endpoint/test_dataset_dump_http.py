"""``GET /store``: the whole dataset as N-Quads or TriG, negotiated, streamed,
read back whole by another server (the round trip a backup by dump makes)."""

from __future__ import annotations

import httpx

from engine.api import Store
from engine.rdf import IRI, parse_rdf
from tests.rdf.test_dataset_writers import canonical, generated, stored_quads


def test_the_demo_dataset_dumps_and_loads_into_another_server(serve, demo_store):
    url = serve(demo_store)
    expected = canonical(stored_quads(demo_store))
    for accept, fmt, media in ((None, "nquads", "application/n-quads"),
                               ("application/trig", "trig", "application/trig"),
                               ("application/n-quads;q=0.5, application/trig", "trig", "application/trig"),
                               ("*/*", "nquads", "application/n-quads")):
        headers = {"Accept": accept} if accept else {}
        dump = httpx.get(url + "/store", headers=headers, timeout=10)
        assert dump.status_code == 200 and dump.headers["content-type"] == media
        assert dump.headers["vary"].startswith("Accept")
        assert canonical(parse_rdf(dump.content, fmt)) == expected
        head = httpx.head(url + "/store", headers=headers, timeout=10)
        assert head.status_code == 200 and head.headers["content-type"] == media and not head.content
        other = serve()
        load = httpx.post(other + "/store", content=dump.content, headers={"Content-Type": media}, timeout=10)
        assert load.status_code == 204
        again = httpx.get(other + "/store", timeout=10)
        assert canonical(parse_rdf(again.content, "nquads")) == expected
    assert any(quad[3] != "None" for quad in expected)  # the demo has named graphs: the dump carried them


def test_format_parameters_and_refusals(serve):
    url = serve(generated(4, 300))
    assert httpx.get(url + "/store?format=trig", timeout=10).headers["content-type"] == "application/trig"
    assert httpx.get(url + "/store?format=nq", timeout=10).headers["content-type"] == "application/n-quads"
    turtle = httpx.get(url + "/store", headers={"Accept": "text/turtle"}, timeout=10)
    assert turtle.status_code == 406 and "application/n-quads, application/trig" in turtle.text
    assert httpx.get(url + "/store?format=turtle", timeout=10).status_code == 406
    # a write naming no graph is still refused, and a single graph's GET is unchanged
    assert httpx.put(url + "/store", content=b"", headers={"Content-Type": "text/turtle"},
                     timeout=10).status_code == 400
    assert httpx.delete(url + "/store", timeout=10).status_code == 400
    graph = httpx.get(url + "/store?graph=http://example.org/g1", headers={"Accept": "application/n-triples"},
                      timeout=10)
    assert graph.status_code == 200 and graph.headers["content-type"] == "application/n-triples"


def test_a_large_dump_is_streamed_in_chunks(serve):
    store = generated(0, 20_000)
    url = serve(store)
    with httpx.stream("GET", url + "/store", headers={"Accept-Encoding": "identity"}, timeout=30) as response:
        assert response.headers.get("transfer-encoding") == "chunked"
        chunks = [chunk for chunk in response.iter_raw()]
    assert len(chunks) > 1
    assert canonical(parse_rdf(b"".join(chunks), "nquads")) == canonical(stored_quads(store))


def test_the_dump_is_one_snapshot(serve):
    """Writes after the dump began are not in it, though it is read lazily."""
    store = Store()
    store.load(b"<http://x/a> <http://x/p> <http://x/b> <http://x/g> .\n", "nquads")
    url = serve(store)
    graphs = store.graphs()  # the snapshot is taken when the first graph is read
    first = next(graphs)
    store.load(b"<http://x/c> <http://x/p> <http://x/d> <http://x/g> .\n", "nquads")
    rest = list(graphs)
    assert first[0] is None and [list(t) for _, t in rest] == [[
        (IRI("http://x/a"), IRI("http://x/p"), IRI("http://x/b"))]]
    assert len(list(parse_rdf(httpx.get(url + "/store", timeout=10).content, "nquads"))) == 2
