"""RDF 1.2 triple terms over a real uvicorn server: a Turtle 1.2 body into
the graph store, SPARQL 1.2 queries and updates with triple terms and
reifiers answered in every result format, and a timestamped N-Triples stream
item holding a triple term reaching a continuous query's window (the batch
scanner leaves such a body to the statement parser)."""

from __future__ import annotations

import httpx

from engine.rdf import IRI, TripleTerm
from engine.sparql.results import read_select
from tests.endpoint.sse_client import SSEReader

EX = "http://example.org/"
http = httpx.Client(timeout=30)
TURTLE = f"""PREFIX : <{EX}>
:alice :says <<( :bob :knows :carol )>> .
:bob :knows :carol ~ :claim {{| :source :web |}} .
""".encode()
QUERY = f"PREFIX : <{EX}> SELECT ?who ?t ?o WHERE {{ ?who :says ?t . ?who :says <<( :bob :knows ?o )>> }}"
EXPECTED = [IRI(EX + "alice"), TripleTerm(IRI(EX + "bob"), IRI(EX + "knows"), IRI(EX + "carol")),
            IRI(EX + "carol")]


def test_triple_terms_in_the_graph_store_queries_and_every_result_format(serve):
    url = serve()
    response = http.post(f"{url}/store?default", content=TURTLE, headers={"Content-Type": "text/turtle"})
    assert response.status_code in (200, 201, 204), response.text
    formats = {"application/sparql-results+json": "json", "application/sparql-results+xml": "xml",
               "text/tab-separated-values": "tsv"}
    for media, fmt in formats.items():
        answer = http.post(f"{url}/sparql", content=QUERY,
                           headers={"Content-Type": "application/sparql-query", "Accept": media})
        assert answer.status_code == 200, answer.text
        variables, rows = read_select(fmt, answer.content)
        assert variables == ["who", "t", "o"] and rows == [EXPECTED], fmt
    headers = {"Content-Type": "application/sparql-query"}
    body = http.post(f"{url}/sparql", content=QUERY, headers=headers).json()
    [binding] = body["results"]["bindings"]
    assert binding["t"] == {"type": "triple", "value": {"subject": {"type": "uri", "value": EX + "bob"},
                                                        "predicate": {"type": "uri", "value": EX + "knows"},
                                                        "object": {"type": "uri", "value": EX + "carol"}}}
    update = f"PREFIX : <{EX}> INSERT {{ ?r :checked true }} WHERE {{ :bob :knows :carol ~ ?r }}"
    assert http.post(f"{url}/sparql", data={"update": update}).status_code in (200, 204)
    ask = http.get(f"{url}/sparql", params={"query": f"PREFIX : <{EX}> ASK {{ :claim :checked true }}"},
                   headers={"Accept": "application/sparql-results+json"})
    assert ask.json()["boolean"] is True
    graph = http.get(f"{url}/store?default", headers={"Accept": "application/n-triples"})
    assert graph.status_code == 200
    assert f"<{EX}alice> <{EX}says> <<( <{EX}bob> <{EX}knows> <{EX}carol> )>> ." in graph.text


def test_a_stream_item_with_a_triple_term_reaches_the_window(serve):
    url = serve()
    assert http.put(f"{url}/streams/claims", json={"iri": f"{EX}claims"}).status_code == 201
    registration = (f"REGISTER QUERY q AS PREFIX : <{EX}> SELECT ?who ?o FROM STREAM <{EX}claims> "
                    f"[RANGE 1s STEP 1s] WHERE {{ ?who :says <<( :bob :knows ?o )>> }}")
    response = http.post(f"{url}/queries", content=registration,
                         headers={"Content-Type": "application/sparql-query"})
    assert response.status_code == 201, response.text
    reader = SSEReader(f"{url}/queries/q/events")
    body = (f"100 <{EX}alice> <{EX}says> <<( <{EX}bob> <{EX}knows> \"carol, \\\"the\\\" )>> one\" )>> .\n"
            f"200 <{EX}frank> <{EX}says> <{EX}nothing> .\n")
    accepted = http.post(f"{url}/streams/claims", content=body.encode(),
                         headers={"Content-Type": "application/x-timestamped-ntriples"})
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["triples"] == 2
    batch = {"Content-Type": "application/x-timestamped-ntriples"}
    bad = http.post(f"{url}/streams/claims", headers=batch,
                    content=f"300 <<( <{EX}a> <{EX}b> <{EX}c> )>> <{EX}p> <{EX}o> .\n")
    assert bad.status_code == 400 and "subject" in bad.text
    http.post(f"{url}/streams/claims", content=f"2500 <{EX}x> <{EX}y> <{EX}z> .\n",
              headers={"Content-Type": "application/x-timestamped-ntriples"})
    events = reader.wait_for(1)
    reader.close()
    bindings = events[0]["results"]["results"]["bindings"]
    found = [(b["who"]["value"], b["o"]["value"]) for b in bindings]
    assert found == [(EX + "alice", 'carol, "the" )>> one')]
