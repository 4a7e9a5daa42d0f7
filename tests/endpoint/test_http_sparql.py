"""The SPARQL endpoint as clients use it: curl-like httpx calls, SPARQLWrapper
and rdflib's SPARQLStore, against a live server holding the demo dataset."""

import io

import httpx
import pytest
import rdflib
from rdflib.plugins.stores.sparqlstore import SPARQLStore, SPARQLUpdateStore
from SPARQLWrapper import JSON, POST, TURTLE, SPARQLWrapper

from engine.api import Store
from engine.rdf import IRI, Literal
from engine.sparql.results import read_select

EX = "PREFIX ex: <http://example.org/rivers/>\n"
LONGEST = EX + "SELECT ?river ?km WHERE { ?river a ex:River ; ex:lengthKm ?km } ORDER BY DESC(?km) LIMIT 3"
TOP3 = [f"http://example.org/rivers/{name}" for name in ("Danube", "Rhine", "Elbe")]
RHINE_TRIBUTARIES = EX + "CONSTRUCT { ?r ex:flowsInto ex:Rhine } WHERE { ?r ex:flowsInto ex:Rhine }"


def media(response: httpx.Response) -> str:
    return response.headers["content-type"].split(";")[0]


def rivers(response: httpx.Response) -> list[str]:
    fmt = {"application/sparql-results+json": "json", "application/sparql-results+xml": "xml",
           "text/csv": "csv", "text/tab-separated-values": "tsv"}[media(response)]
    variables, rows = read_select(fmt, response.content)
    terms = [row[variables.index("river")] for row in rows]
    # CSV carries no term types: its IRIs come back as plain literals
    return [getattr(t, "value", None) or t.lexical for t in terms]


def test_query_by_get_post_form_and_post_direct(demo):
    url = demo + "/sparql"
    by_get = httpx.get(url, params={"query": LONGEST})
    by_form = httpx.post(url, data={"query": LONGEST})
    direct = httpx.post(url, content=LONGEST, headers={"Content-Type": "application/sparql-query"})
    for response in (by_get, by_form, direct):
        assert response.status_code == 200
        assert media(response) == "application/sparql-results+json"
        assert rivers(response) == TOP3


@pytest.mark.parametrize(("accept", "expected"), [
    (None, "application/sparql-results+json"),
    ("*/*", "application/sparql-results+json"),
    ("application/sparql-results+xml", "application/sparql-results+xml"),
    ("text/csv;q=0.5, text/tab-separated-values", "text/tab-separated-values"),
    ("text/tab-separated-values;q=0.2, text/csv;q=0.9", "text/csv"),
    ("application/json", "application/sparql-results+json"),
    ("text/html, application/xml;q=0.9, */*;q=0.8", "application/sparql-results+xml"),
])
def test_select_format_follows_accept_and_q_values(demo, accept, expected):
    headers = {"Accept": accept} if accept else {}
    response = httpx.get(demo + "/sparql", params={"query": LONGEST}, headers=headers)
    assert response.status_code == 200
    assert media(response) == expected
    assert rivers(response) == TOP3


@pytest.mark.parametrize(("name", "expected"), [("csv", "text/csv"), ("tsv", "text/tab-separated-values"),
                                                ("xml", "application/sparql-results+xml")])
def test_format_parameter_overrides_accept(demo, name, expected):
    response = httpx.get(demo + "/sparql", params={"query": LONGEST, "format": name},
                         headers={"Accept": "application/sparql-results+json"})
    assert media(response) == expected
    assert rivers(response) == TOP3


@pytest.mark.parametrize(("accept", "parser"), [("text/turtle", "turtle"), ("application/n-triples", "nt"),
                                                ("application/rdf+xml", "xml"),
                                                ("application/ld+json", "json-ld")])
def test_construct_in_every_graph_syntax(demo, accept, parser):
    response = httpx.get(demo + "/sparql", params={"query": RHINE_TRIBUTARIES}, headers={"Accept": accept})
    assert response.status_code == 200 and media(response) == accept
    graph = rdflib.Graph().parse(data=response.content, format=parser)
    names = sorted(str(s).rsplit("/", 1)[1] for s in graph.subjects())
    assert names == ["Main", "Moselle"]


def test_ask_and_describe(demo):
    ask = httpx.get(demo + "/sparql", params={"query": EX + "ASK { ex:Inn ex:flowsInto ex:Danube }"})
    assert ask.json() == {"head": {}, "boolean": True}
    describe = httpx.get(demo + "/sparql", params={"query": EX + "DESCRIBE ex:Inn", "format": "nt"})
    assert media(describe) == "application/n-triples"
    assert '"518"^^<http://www.w3.org/2001/XMLSchema#integer>' in describe.text


def test_no_acceptable_format_is_406(demo):
    png = httpx.get(demo + "/sparql", params={"query": LONGEST}, headers={"Accept": "image/png"})
    assert png.status_code == 406
    assert "text/csv" in png.text  # the message lists what is available
    csv_graph = httpx.get(demo + "/sparql", params={"query": RHINE_TRIBUTARIES, "format": "csv"})
    assert csv_graph.status_code == 406


def test_malformed_query_is_400_with_line_and_column(demo):
    response = httpx.post(demo + "/sparql", data={"query": "SELECT ?x\nWHERE { ?x ?p }"})
    assert response.status_code == 400
    assert "line 2, column 15" in response.text


def test_wrong_method_and_body_type(demo):
    delete = httpx.delete(demo + "/sparql")
    assert delete.status_code == 405 and "POST" in delete.headers["allow"]
    xml = httpx.post(demo + "/sparql", content="<q/>", headers={"Content-Type": "application/xml"})
    assert xml.status_code == 415


def test_large_results_are_streamed_in_chunks(serve):
    store = Store()
    store.add((IRI(f"http://example.org/s{i}"), IRI("http://example.org/p"), Literal(str(i)))
              for i in range(20000))
    url = serve(store) + "/sparql"
    with httpx.stream("GET", url, params={"query": "SELECT * { ?s ?p ?o }", "format": "tsv"},
                      headers={"Accept-Encoding": "identity"}) as response:  # the chunks as written
        assert response.headers.get("transfer-encoding") == "chunked"
        assert "content-length" not in response.headers
        chunks = list(response.iter_raw())
    assert len(chunks) > 1
    lines = b"".join(chunks).decode().splitlines()
    assert lines[0] == "?s\t?p\t?o" and len(lines) == 20001


def test_update_by_form_and_direct_post_then_query(demo):
    url = demo + "/sparql"
    form = httpx.post(url, data={"update": EX + "INSERT DATA { ex:Ruhr ex:flowsInto ex:Rhine }"})
    direct = httpx.post(url, content=EX + "DELETE DATA { ex:Main ex:flowsInto ex:Rhine }",
                        headers={"Content-Type": "application/sparql-update"})
    assert form.status_code == 204 and direct.status_code == 204
    response = httpx.get(url, params={"query": RHINE_TRIBUTARIES, "format": "nt"})
    assert sorted(line.split()[0] for line in response.text.splitlines()) == [
        "<http://example.org/rivers/Moselle>", "<http://example.org/rivers/Ruhr>"]


def test_failed_update_is_400_and_changes_nothing(demo):
    url = demo + "/sparql"
    update = EX + "INSERT DATA { ex:a ex:b ex:c } ; CREATE GRAPH ex:readings"
    response = httpx.post(url, data={"update": update})
    assert response.status_code == 400 and "already exists" in response.text
    ask = httpx.get(url, params={"query": EX + "ASK { ex:a ex:b ex:c }"})
    assert ask.json()["boolean"] is False


def test_query_dataset_parameters(demo):
    query = EX + "SELECT (COUNT(*) AS ?n) { ?r ex:levelCm ?cm }"
    plain = httpx.get(demo + "/sparql", params={"query": query})
    readings = httpx.get(demo + "/sparql", params={"query": query,
                                                   "default-graph-uri": "http://example.org/rivers/readings"})
    assert plain.json()["results"]["bindings"][0]["n"]["value"] == "0"
    assert readings.json()["results"]["bindings"][0]["n"]["value"] == "6"


def test_update_using_graph_uri(demo):
    url = demo + "/sparql"
    update = EX + "INSERT { ?r ex:high true } WHERE { ?r ex:levelCm ?cm FILTER(?cm > 500) }"
    response = httpx.post(url, params={"using-graph-uri": "http://example.org/rivers/readings"},
                          content=update, headers={"Content-Type": "application/sparql-update"})
    assert response.status_code == 204
    high = httpx.get(url, params={"query": EX + "SELECT ?r { ?r ex:high true }", "format": "csv"})
    assert high.text.split() == ["r", "http://example.org/rivers/r4"]


def test_read_only_mode_refuses_writes(serve, demo_store):
    url = serve(demo_store, read_only=True)
    update = httpx.post(url + "/sparql", data={"update": "CLEAR ALL"})
    put = httpx.put(url + "/store?default", content="<a:b> <a:b> <a:b> .",
                    headers={"Content-Type": "application/n-triples"})
    assert update.status_code == 403 and put.status_code == 403
    assert httpx.get(url + "/sparql", params={"query": LONGEST}).status_code == 200
    assert len(demo_store) > 0


def test_writes_can_require_a_bearer_token(serve, demo_store):
    url = serve(demo_store, update_token="s3cret") + "/sparql"
    update = {"update": "INSERT DATA { <http://x/a> <http://x/b> <http://x/c> }"}
    missing = httpx.post(url, data=update)
    wrong = httpx.post(url, data=update, headers={"Authorization": "Bearer nope"})
    right = httpx.post(url, data=update, headers={"Authorization": "Bearer s3cret"})
    assert missing.status_code == 401
    assert missing.headers.get_list("www-authenticate") == ['Basic realm="rivulet"']
    assert wrong.headers.get_list("www-authenticate") == ['Bearer realm="rivulet"']
    from_a_page = httpx.post(url, data=update, headers={"Sec-Fetch-Mode": "cors"})
    assert from_a_page.headers.get_list("www-authenticate") == ['Bearer realm="rivulet"']
    assert wrong.status_code == 401
    assert right.status_code == 204
    assert httpx.get(url, params={"query": "ASK { <http://x/a> ?p ?o }"}).json()["boolean"] is True


def test_writes_take_the_token_as_the_password_of_basic_credentials(serve, demo_store):
    """SPARQL clients (SPARQLWrapper, Jena, Comunica) can send only a user and a password."""
    url = serve(demo_store, update_token="s3cret") + "/sparql"
    update = {"update": "INSERT DATA { <http://x/basic> <http://x/b> <http://x/c> }"}
    ask = {"query": "ASK { <http://x/basic> ?p ?o }"}
    wrong = httpx.post(url, data=update, auth=("admin", "nope"))
    no_password = httpx.post(url, data=update, headers={"Authorization": "Basic czNjcmV0"})  # "s3cret"
    garbled = httpx.post(url, data=update, headers={"Authorization": "Basic !!!"})
    assert [r.status_code for r in (wrong, no_password, garbled)] == [401, 401, 401]
    assert httpx.get(url, params=ask).json()["boolean"] is False
    assert httpx.post(url, data=update, auth=("anyone", "s3cret")).status_code == 204
    assert httpx.get(url, params=ask).json()["boolean"] is True


def test_cors_is_off_by_default_and_configurable(serve):
    origin = {"Origin": "https://app.example"}
    closed = httpx.get(serve() + "/sparql", params={"query": "ASK {}"}, headers=origin)
    assert "access-control-allow-origin" not in closed.headers
    url = serve(cors_origins=("https://app.example",)) + "/sparql"
    opened = httpx.get(url, params={"query": "ASK {}"}, headers=origin)
    assert opened.headers["access-control-allow-origin"] == "https://app.example"
    preflight = httpx.options(url, headers={**origin, "Access-Control-Request-Method": "POST",
                                            "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code == 200
    assert "POST" in preflight.headers["access-control-allow-methods"]


def test_sparqlwrapper_select_construct_and_update(demo):
    client = SPARQLWrapper(demo + "/sparql", updateEndpoint=demo + "/sparql")
    client.setQuery(LONGEST)
    client.setReturnFormat(JSON)
    bindings = client.query().convert()["results"]["bindings"]
    assert [b["river"]["value"].rsplit("/", 1)[1] for b in bindings] == ["Danube", "Rhine", "Elbe"]

    client.setQuery(RHINE_TRIBUTARIES)
    client.setReturnFormat(TURTLE)
    graph = rdflib.Graph().parse(io.BytesIO(client.query().convert()), format="turtle")
    assert len(graph) == 2

    client.setMethod(POST)
    client.setQuery(EX + "INSERT DATA { ex:Saar ex:flowsInto ex:Moselle }")
    assert client.query().response.status == 204
    client.setQuery(EX + "ASK { ex:Saar ex:flowsInto ex:Moselle }")
    client.setReturnFormat(JSON)
    assert client.query().convert()["boolean"] is True


def test_rdflib_sparqlstore_reads_and_sparqlupdatestore_writes(demo):
    graph = rdflib.Graph(store=SPARQLStore(demo + "/sparql"))
    rows = list(graph.query(LONGEST))
    assert [str(r.river).rsplit("/", 1)[1] for r in rows] == ["Danube", "Rhine", "Elbe"]

    ex = rdflib.Namespace("http://example.org/rivers/")
    writer = rdflib.Graph(store=SPARQLUpdateStore(demo + "/sparql", demo + "/sparql"), identifier=ex.notes)
    writer.add((ex.Lahn, ex.flowsInto, ex.Rhine))
    assert graph.query(EX + "ASK { GRAPH ex:notes { ex:Lahn ex:flowsInto ex:Rhine } }").askAnswer is True


def test_a_repeated_query_answers_the_same_from_the_event_loop(demo):
    """The second run of a query takes the short path (plan cached and fast last
    time); its answer, headers and errors must be those of the whole path."""
    url = demo + "/sparql"
    accept = {"Accept": "application/sparql-results+json"}
    first = httpx.get(url, params={"query": LONGEST}, headers=accept)
    again = [httpx.get(url, params={"query": LONGEST}, headers=accept) for _ in range(3)]
    for response in again:
        assert response.status_code == 200 and response.content == first.content
        assert response.headers["content-type"] == first.headers["content-type"]
        assert response.headers["vary"] == "Accept"
    assert rivers(again[-1]) == TOP3
    # a format nobody offers is refused as on the whole path, and the same query as CSV is CSV
    refused = httpx.get(url, params={"query": LONGEST}, headers={"Accept": "image/png"})
    assert refused.status_code == 406
    as_csv = httpx.get(url, params={"query": LONGEST}, headers={"Accept": "text/csv"})
    assert media(as_csv) == "text/csv" and rivers(as_csv) == TOP3
    # an update in between is seen by the next short-path answer
    httpx.post(url, data={"update": EX + "DELETE WHERE { ex:Danube ex:lengthKm ?km }"}).raise_for_status()
    after = rivers(httpx.get(url, params={"query": LONGEST}, headers=accept))
    assert after[:2] == TOP3[1:] and TOP3[0] not in after and len(after) == 3
