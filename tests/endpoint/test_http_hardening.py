"""Hostile or broken requests get a clear 4xx and change nothing."""

from __future__ import annotations

import httpx
import pyoxigraph
import pytest

from engine.api import Store
from engine.rdf import IRI, Literal
from tests.endpoint.sse_client import SSEReader

EX = "http://example.org/"


@pytest.fixture
def url(serve) -> str:
    store = Store()
    store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> 1 . GRAPH <{EX}g> {{ <{EX}a> <{EX}p> 2 }} }}")
    return serve(store)


def triples(url: str) -> int:
    query = "SELECT * { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"
    response = httpx.get(f"{url}/sparql", params={"query": query},
                         headers={"Accept": "application/sparql-results+json"})
    return len(response.json()["results"]["bindings"])


def test_load_cannot_read_the_servers_files(url, tmp_path):
    secret = tmp_path / "secret.nt"
    secret.write_text(f"<{EX}secret> <{EX}is> \"hunter2\" .\n")
    response = httpx.post(f"{url}/sparql", data={"update": f"LOAD <{secret.as_uri()}> INTO GRAPH <{EX}leak>"})
    assert response.status_code == 400
    assert "hunter2" not in response.text and "not allowed" in response.text
    assert triples(url) == 2


def test_a_graph_name_cannot_smuggle_an_update(url):
    evil = f"{EX}g> ; DROP ALL ; DROP SILENT GRAPH <{EX}x"
    for method in ("PUT", "POST", "DELETE"):
        response = httpx.request(method, f"{url}/store", params={"graph": evil}, content=b"",
                                 headers={"Content-Type": "text/turtle"})
        assert response.status_code == 400, method
        assert "not a usable graph IRI" in response.text
    assert triples(url) == 2


def test_malformed_bulk_upload_is_a_400(url):
    response = httpx.post(f"{url}/store", content=b"<http://a> <http://b> oops <http://g> .",
                          headers={"Content-Type": "application/n-quads"})
    assert response.status_code == 400 and "nothing was loaded" in response.text
    assert triples(url) == 2


@pytest.mark.parametrize("definition", [
    {"iri": 5}, {"graph": "not an iri>"}, {"timing": ["x y"]}, {"timing": "http://p"},
    {"idle_lag_ms": True}, {"idle": "sometimes"}, {"colour": "blue"},
])
def test_bad_stream_definitions_are_refused(url, definition):
    response = httpx.put(f"{url}/streams/s", json=definition)
    assert response.status_code == 400, definition
    assert httpx.get(f"{url}/streams").json()["streams"] == []


def test_a_registration_that_is_not_utf8_is_a_400(url):
    response = httpx.post(f"{url}/queries", content="REGISTER QUERY é".encode("latin-1"),
                          headers={"Content-Type": "application/sparql-query"})
    assert response.status_code == 400 and "UTF-8" in response.text


def register_counter(url: str) -> None:
    assert httpx.put(f"{url}/streams/s", json={"iri": f"{EX}s"}).status_code == 201
    response = httpx.post(f"{url}/queries", headers={"Content-Type": "application/sparql-query"},
                          content=f"REGISTER QUERY c AS SELECT (COUNT(*) AS ?n) "
                                  f"FROM STREAM <{EX}s> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}")
    assert response.status_code == 201


def post(url: str, body: str) -> None:
    response = httpx.post(f"{url}/streams/s", content=body,
                          headers={"Content-Type": "application/x-timestamped-ntriples"})
    assert response.status_code == 202, response.text


def test_an_id_from_before_a_reregistration_does_not_hide_events(url):
    register_counter(url)
    reader = SSEReader(f"{url}/queries/c/events", last_event_id="50")
    post(url, f"100 <{EX}a> <{EX}p> \"1\" .\n2000")
    events = reader.wait_for(2)
    reader.close()
    assert [e["sequence"] for e in events] == [1, 2]


def test_unregistering_ends_the_event_streams(url):
    register_counter(url)
    reader = SSEReader(f"{url}/queries/c/events")
    assert httpx.delete(f"{url}/queries/c").status_code == 204
    reader._thread.join(timeout=10)
    assert not reader._thread.is_alive()


DEEP_PARENS = "(" * 300 + "1" + ")" * 300


@pytest.mark.parametrize("field, text", [
    ("query", "SELECT * { " + "{" * 500 + "}" * 500 + " }"),
    ("query", f"SELECT * {{ ?s ?p ?o FILTER({DEEP_PARENS}) }}"),
    ("query", "ASK { FILTER(" + "!" * 500 + "true) }"),
    ("update", f"INSERT {{ <{EX}x> <{EX}p> ?v }} WHERE {{ BIND({DEEP_PARENS} AS ?v) }}"),
])
def test_deep_nesting_is_a_400_with_its_position(url, field, text):
    """A few hundred brackets used to overflow the recursive parser: 500 and a traceback."""
    response = httpx.post(f"{url}/sparql", data={field: text})
    assert response.status_code == 400, response.text
    assert "nested more than 64 levels" in response.text and "line 1, column" in response.text
    assert triples(url) == 2


def test_a_deeply_nested_registration_is_a_400(url):
    register = (f"REGISTER QUERY deep AS SELECT * FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                f"WHERE {{ ?s ?p ?o FILTER({DEEP_PARENS}) }}")
    response = httpx.post(f"{url}/queries", content=register,
                          headers={"Content-Type": "application/sparql-query"})
    assert response.status_code == 400 and "nested more than" in response.text
    assert httpx.get(f"{url}/queries").json()["queries"] == []


def refused_as_upload_and_stream_item(url: str, line: str, message: str) -> None:
    """``line`` is refused by the graph store and as a stream item (timestamped
    batch and single item), with ``message``, and nothing is stored."""
    upload = httpx.post(f"{url}/store", params={"graph": f"{EX}up"}, content=line,
                        headers={"Content-Type": "application/n-triples"})
    assert upload.status_code == 400
    register_counter(url)
    for body, headers in (("100 " + line, {"Content-Type": "application/x-timestamped-ntriples"}),
                          (line, {"Content-Type": "application/n-triples", "X-Timestamp": "100"})):
        item = httpx.post(f"{url}/streams/s", content=body, headers=headers)
        assert item.status_code == 400 and message in item.text
    assert triples(url) == 2


@pytest.mark.parametrize("escape", ["\\uD800", "\\uDFFF", "\\U00110000"])
def test_escapes_that_are_not_unicode_scalar_values_are_refused(url, escape):
    """A lone surrogate used to be stored, and then broke every answer that wrote it."""
    refused_as_upload_and_stream_item(url, f'<{EX}a> <{EX}p> "x{escape}" .\n', "Unicode scalar value")


@pytest.mark.parametrize("iri", ["http://x/a\\u0020b", "http://x/a\\u003Eb", "relative"])
def test_iris_that_escapes_make_invalid_or_relative_are_refused(url, iri):
    """They used to be stored from stream items, and then broke N-Triples and Turtle answers."""
    refused_as_upload_and_stream_item(url, f'<{EX}a> <{EX}p> <{iri}> .\n', "IRI")


def test_bodies_over_the_limit_are_413_and_change_nothing(serve):
    store = Store()
    url = serve(store, max_body_bytes=1000)
    big = f'<{EX}a> <{EX}p> "{"x" * 2000}" .\n'.encode()
    declared = httpx.put(f"{url}/store", params={"graph": f"{EX}g"}, content=big,
                         headers={"Content-Type": "application/n-triples"})
    assert declared.status_code == 413 and "limit of 1,000 bytes" in declared.text

    def chunks():  # no Content-Length: counted as it arrives
        for _ in range(10):
            yield b"# padding " + b"x" * 190 + b"\n"

    streamed = httpx.post(f"{url}/sparql", content=chunks(),
                          headers={"Content-Type": "application/sparql-update"})
    assert streamed.status_code == 413
    small = httpx.post(f"{url}/sparql", data={"update": f"INSERT DATA {{ <{EX}a> <{EX}p> 1 }}"})
    assert small.status_code == 204
    assert len(store) == 1


def test_iri_of_a_string_that_is_not_an_iri_is_unbound_and_never_stored(url):
    smuggle = f'INSERT {{ ?x <{EX}p> <{EX}o> }} WHERE {{ BIND(IRI("{EX}a> <{EX}evil> <{EX}x") AS ?x) }}'
    assert httpx.post(f"{url}/sparql", data={"update": smuggle}).status_code == 204
    assert triples(url) == 2
    answer = httpx.get(f"{url}/sparql", params={"query": 'SELECT (IRI("a b") AS ?i) WHERE {}'},
                       headers={"Accept": "application/sparql-results+json"})
    assert answer.status_code == 200 and answer.json()["results"]["bindings"] == [{}]


HUGE = "9" * 4500


def test_numbers_past_pythons_digit_limit_are_refused_or_not_numbers(url):
    limit = httpx.get(f"{url}/sparql", params={"query": f"SELECT * WHERE {{}} LIMIT {HUGE}"})
    assert limit.status_code == 400 and "at most" in limit.text
    stored = httpx.post(f"{url}/sparql", data={
        "update": f'INSERT DATA {{ <{EX}b> <{EX}n> "{HUGE}"^^<http://www.w3.org/2001/XMLSchema#integer> }}'})
    assert stored.status_code == 204
    for query in (f"SELECT (SUM(?n) AS ?s) (MAX(?n) AS ?m) WHERE {{ ?b <{EX}n> ?n }}",
                  f"SELECT ?n WHERE {{ ?b <{EX}n> ?n }} ORDER BY ?n",
                  f"SELECT (?n * ?n AS ?sq) WHERE {{ ?b <{EX}n> ?n }}"):
        answer = httpx.get(f"{url}/sparql", params={"query": query},
                           headers={"Accept": "application/sparql-results+json"})
        assert answer.status_code == 200, (query, answer.text)


@pytest.mark.parametrize("timestamp", ["100000000000000000000000", "-9223372036854775808", "9" * 5000,
                                       "10000-01-01T00:00:00Z"])
def test_timestamps_outside_years_1_to_9999_are_refused(url, timestamp):
    register_counter(url)
    heartbeat = httpx.post(f"{url}/streams/s", headers={"X-Timestamp": timestamp})
    assert heartbeat.status_code == 400 and ("out of range" in heartbeat.text or "not a timestamp"
                                             in heartbeat.text)
    post(url, f"100 <{EX}a> <{EX}p> \"1\" .\n2000")  # the stream still takes items


def test_a_window_size_past_the_digit_limit_is_a_400(url):
    assert httpx.put(f"{url}/streams/s", json={"iri": f"{EX}s"}).status_code == 201
    register = (f"REGISTER QUERY w AS SELECT * FROM STREAM <{EX}s> [RANGE {HUGE}ms STEP 1s] "
                "WHERE { ?s ?p ?o }")
    response = httpx.post(f"{url}/queries", content=register,
                          headers={"Content-Type": "application/sparql-query"})
    assert response.status_code == 400 and "at most" in response.text


@pytest.mark.parametrize("path, body, content_type", [
    ("/sparql", "update=DROP ALL", "application/x-www-form-urlencoded"),
    ("/queries", "REGISTER QUERY x AS SELECT * WHERE { ?s ?p ?o }", "text/plain"),
    ("/streams/forged", "", "text/plain"),
])
def test_browsers_cannot_write_from_another_site(url, path, body, content_type):
    """Forms and text/plain POSTs need no preflight: a page elsewhere could
    make a visitor's browser write to a server without a token."""
    forged = {"Content-Type": content_type, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    response = httpx.post(f"{url}{path}", content=body, headers=forged)
    assert response.status_code == 403 and "another site (http://evil.example)" in response.text
    assert triples(url) == 2
    assert httpx.get(f"{url}/queries").json()["queries"] == []
    assert httpx.get(f"{url}/streams").json()["streams"] == []


def test_same_origin_pages_and_non_browser_clients_still_write(url, serve):
    update = {"update": f"INSERT DATA {{ <{EX}c> <{EX}p> 3 }}"}
    own = {"Origin": url, "Sec-Fetch-Site": "same-origin"}
    assert httpx.post(f"{url}/sparql", data=update, headers=own).status_code == 204
    curl_like = httpx.post(f"{url}/sparql", data={"update": f"INSERT DATA {{ <{EX}d> <{EX}p> 4 }}"})
    assert curl_like.status_code == 204
    assert triples(url) == 4
    allowed = serve(Store(), cors_origins=("http://app.example",))
    from_app = {"Origin": "http://app.example", "Sec-Fetch-Site": "cross-site"}
    answer = httpx.post(f"{allowed}/sparql", data=update, headers=from_app)
    assert answer.status_code == 204
    # a browser may read and send back the log position of its write (read-your-writes)
    assert "rivulet-log-position" in answer.headers["access-control-expose-headers"].lower()
    preflight = httpx.options(f"{allowed}/sparql", headers={
        "Origin": "http://app.example", "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "rivulet-log-position"})
    assert preflight.status_code == 200, preflight.text


LAUGHS = "".join(f'<!ENTITY {b} "{("&" + a + ";") * 16}">\n' for a, b in zip("abcdef", "bcdefg"))
BILLION_LAUGHS = f"""<?xml version="1.0"?>
<!DOCTYPE rdf:RDF [
<!ENTITY a "{"a" * 55}">
{LAUGHS}]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="{EX}">
 <rdf:Description rdf:about="{EX}a"><ex:p>&g;</ex:p></rdf:Description>
</rdf:RDF>
"""
OWL_STYLE = f"""<?xml version="1.0"?>
<!DOCTYPE rdf:RDF [ <!ENTITY ex "{EX}"> <!ENTITY xsd "http://www.w3.org/2001/XMLSchema#"> ]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="{EX}">
 <rdf:Description rdf:about="&ex;owl"><ex:p rdf:datatype="&xsd;integer">5</ex:p></rdf:Description>
</rdf:RDF>
"""


def test_rdf_xml_entity_expansion_is_refused_before_it_grows(url):
    """A 700-byte document used to hold a worker for tens of seconds (and ~1 GB)."""
    response = httpx.put(f"{url}/store", params={"graph": f"{EX}lol"}, content=BILLION_LAUGHS,
                         headers={"Content-Type": "application/rdf+xml"}, timeout=30)
    assert response.status_code == 400 and "refused" in response.text
    assert triples(url) == 2
    owl = httpx.put(f"{url}/store", params={"graph": f"{EX}owl"}, content=OWL_STYLE,
                    headers={"Content-Type": "application/rdf+xml"})
    assert owl.status_code == 201 and triples(url) == 3


def test_a_query_over_the_row_limit_is_a_503_and_the_server_stays_responsive(serve):
    """A cartesian product used to grow the server by gigabytes a second until it died."""
    store = Store()
    store.update("INSERT DATA { " + " ".join(f"<{EX}s{i}> <{EX}p> {i} ." for i in range(300)) + " }")
    url = serve(store, max_rows=10_000)
    product = "SELECT * { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f }"  # 300^3 = 27 million rows
    response = httpx.get(f"{url}/sparql", params={"query": product}, timeout=30)
    assert response.status_code == 503 and "limit is 10,000" in response.text
    pairs = f"INSERT {{ ?a <{EX}q> ?c }} WHERE {{ ?a ?p ?b . ?c ?q ?d }}"  # 90,000 rows
    update = httpx.post(f"{url}/sparql", data={"update": pairs})
    assert update.status_code == 503 and "nothing was changed" in update.text
    assert len(store) == 300
    small = httpx.get(f"{url}/sparql", params={"query": f"ASK {{ <{EX}s1> ?p 1 }}"},
                      headers={"Accept": "application/sparql-results+json"})
    assert small.status_code == 200 and small.json()["boolean"] is True


@pytest.mark.parametrize("target", ["http://127.0.0.1:9/sparql", "http://10.1.2.3/sparql",
                                    "http://169.254.169.254/latest", "http://[::1]:9/sparql"])
def test_service_and_load_do_not_reach_non_public_addresses(url, target):
    """SERVICE used to reach any address: a reader could scan ports by the error text."""
    query = httpx.get(f"{url}/sparql", params={"query": f"SELECT * {{ SERVICE <{target}> {{ ?s ?p ?o }} }}"})
    assert query.status_code == 403 and "refused by policy" in query.text
    load = httpx.post(f"{url}/sparql", data={"update": f"LOAD <{target}> INTO GRAPH <{EX}x>"})
    assert load.status_code == 400 and "refused by policy" in load.text
    assert triples(url) == 2


def test_service_to_allowed_servers_and_its_nesting_limit(serve):
    """An allowed server that calls back through SERVICE stops at the depth limit
    instead of tying up every worker."""
    store = Store()
    store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> 1 }}")
    url = serve(store, outbound_allowed=("127.0.0.0/8",))
    accept = {"Accept": "application/sparql-results+json"}

    def through(server: str, levels: int) -> str:
        inner = "?s ?p ?o"
        for _ in range(levels):
            inner = f"SERVICE <{server}/sparql> {{ {inner} }}"
        return f"SELECT * {{ {inner} }}"

    once = httpx.get(f"{url}/sparql", params={"query": through(url, 1)}, headers=accept, timeout=30)
    assert once.status_code == 200 and len(once.json()["results"]["bindings"]) == 1
    twice = httpx.get(f"{url}/sparql", params={"query": through(url, 2)}, headers=accept, timeout=30)
    assert twice.status_code == 200 and len(twice.json()["results"]["bindings"]) == 1
    # the third server in the chain refuses; the remote's text is not passed on
    deep = httpx.get(f"{url}/sparql", params={"query": through(url, 3)}, timeout=30)
    assert deep.status_code == 502 and "remote endpoint failed: it answered HTTP 502" in deep.text
    called = httpx.get(f"{url}/sparql", params={"query": through(url, 1)},
                       headers={"X-Rivulet-Service-Depth": "2"})
    assert called.status_code == 403 and "nest deeper than 2" in called.text
    off = serve(Store(), service=False)
    refused = httpx.get(f"{off}/sparql", params={"query": through(url, 1)})
    assert refused.status_code == 403 and "turned off" in refused.text


@pytest.mark.parametrize("name", ["a%0D%0AX-Injected:%201", "a%20b", "a%3Eb", "%C3%A9t%C3%A9", "x" * 201])
def test_stream_names_are_plain_url_segments(url, name):
    """A CRLF in a stream name used to declare the stream and drop the connection."""
    response = httpx.put(f"{url}/streams/{name}", json={})
    assert response.status_code == 400 and "stream name" in response.text
    assert httpx.get(f"{url}/streams").json()["streams"] == []


def test_the_time_limit_stops_a_long_filter_inside_its_step(serve):
    """The limit used to be checked only between operators: one FILTER over many
    rows ran to its end (68 s under --timeout 10 in the probe)."""
    store = Store()
    store.add([(IRI(f"{EX}s{i}"), IRI(f"{EX}v"), Literal(f"value {i}")) for i in range(150_000)])
    url = serve(store, query_timeout=0.2)
    costly = ('SELECT ?s WHERE { ?s ?p ?o FILTER(STRLEN(CONCAT(UCASE(STR(?o)), LCASE(STR(?o)), '
              'STRBEFORE(STR(?o), " "), REPLACE(STR(?o), "[0-9]", "#"))) > 5) }')
    response = httpx.get(f"{url}/sparql", params={"query": costly}, timeout=120)
    assert response.status_code == 503 and "time limit" in response.text


def test_the_host_header_never_names_what_the_server_creates(url, serve):
    """Host: evil.example used to become the Location and the IRI of a created graph."""
    forged = {"Host": "evil.example", "Content-Type": "application/n-triples"}
    created = httpx.post(f"{url}/store", content=f"<{EX}a> <{EX}p> \"7\" .\n", headers=forged)
    assert created.status_code == 201
    location = created.headers["location"]
    assert "evil.example" not in location and location.startswith(url + "/store/")
    graphs = httpx.get(f"{url}/sparql", params={"query": "SELECT DISTINCT ?g { GRAPH ?g { ?s ?p ?o } }"},
                       headers={"Accept": "text/csv"}).text
    assert "evil.example" not in graphs and location in graphs
    public = serve(Store(), base_url="https://data.example.org/rivulet")
    behind_proxy = httpx.post(f"{public}/store", content=f"<{EX}a> <{EX}p> \"7\" .\n", headers=forged)
    assert behind_proxy.headers["location"].startswith("https://data.example.org/rivulet/store/")


def test_a_backtracking_regex_is_stopped_by_the_time_limit(serve):
    """A single REGEX match used to run to its end whatever the limit
    (exponential in the text's length for this pattern)."""
    url = serve(Store(), query_timeout=0.5)
    text = "a" * 80 + "!"
    for call in ('FILTER REGEX(?x, "^(a|aa)+$")', 'BIND(REPLACE(?x, "^(a|aa)+$", "b") AS ?y)'):
        query = f'SELECT * {{ BIND("{text}" AS ?x) {call} }}'
        response = httpx.get(f"{url}/sparql", params={"query": query}, timeout=60)
        assert response.status_code == 503 and "time limit" in response.text
    plain = httpx.get(f"{url}/sparql", params={"query": 'ASK { FILTER REGEX("aab", "^(a|aa)+b$") }'},
                      headers={"Accept": "application/sparql-results+json"})
    assert plain.status_code == 200 and plain.json()["boolean"] is True


def test_values_xml_cannot_carry_are_refused_in_xml_and_kept_in_other_formats(url):
    """A control character used to be written raw into SPARQL XML and RDF/XML,
    which every XML parser then rejected."""
    stored = httpx.post(f"{url}/sparql", data={"update": f'INSERT DATA {{ <{EX}c> <{EX}p> "a\\u0001b" }}'})
    assert stored.status_code == 204
    select = f"SELECT ?o {{ <{EX}c> <{EX}p> ?o }}"
    many = f"SELECT ?o {{ <{EX}c> <{EX}p> ?o . VALUES ?n {{ {' '.join(map(str, range(400)))} }} }}"
    for query in (select, many):  # many: the streamed path, refused before its first byte
        xml = httpx.get(f"{url}/sparql", params={"query": query},
                        headers={"Accept": "application/sparql-results+xml"})
        assert xml.status_code == 406 and "U+0001" in xml.text
    json = httpx.get(f"{url}/sparql", params={"query": select},
                     headers={"Accept": "application/sparql-results+json"})
    assert json.json()["results"]["bindings"][0]["o"]["value"] == "a\x01b"
    construct = f"CONSTRUCT WHERE {{ <{EX}c> ?p ?o }}"
    rdfxml = httpx.get(f"{url}/sparql", params={"query": construct},
                       headers={"Accept": "application/rdf+xml"})
    assert rdfxml.status_code == 406 and "U+0001" in rdfxml.text
    ntriples = httpx.get(f"{url}/sparql", params={"query": construct},
                         headers={"Accept": "application/n-triples"})
    assert ntriples.status_code == 200
    [read] = pyoxigraph.parse(ntriples.content, format=pyoxigraph.RdfFormat.N_TRIPLES)
    assert read.object.value == "a\x01b"


def test_a_failed_load_names_the_status_not_the_remote_body(serve):
    """LOAD used to echo the fetched body (and any exception text) in its error."""
    url = serve(Store(), outbound_allowed=("127.0.0.0/8",))
    missing = f"{url}/store?graph={EX}no-such-graph"
    response = httpx.post(f"{url}/sparql", data={"update": f"LOAD <{missing}>"})
    assert response.status_code == 400
    assert "remote endpoint failed: it answered HTTP 404" in response.text
    assert "no-such-graph>" not in response.text.split("failed:", 1)[1]
