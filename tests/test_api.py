"""The Python API as a user sees it: load, query in every form, update, federation."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from engine.api import Store
from engine.rdf import IRI, Literal
from engine.sparql.exec import ServiceError, UpdateError
from engine.sparql.results import write_select
from engine.sparql.syntax import SparqlSyntaxError

DATA = b"""
@prefix ex: <http://example.org/> .
ex:alice ex:knows ex:bob , ex:carol ; ex:age 42 ; ex:name "Alice" .
ex:bob ex:knows ex:carol ; ex:age 17 ; ex:name "Bob" .
ex:carol ex:age 30 ; ex:address [ ex:city "Paris" ] .
"""
PREFIX = "PREFIX ex: <http://example.org/>\n"


@pytest.fixture
def store():
    s = Store()
    s.load(DATA, format="turtle")
    return s


def values(result, var):
    index = result.variables.index(var)
    return sorted(str(row[index].value if isinstance(row[index], IRI) else row[index].lexical)
                  for row in result.rows())


def test_select_join_filter_order(store):
    result = store.query(PREFIX + """SELECT ?x ?age WHERE { ?x ex:knows ?y . ?x ex:age ?age
                                      FILTER(?age > 20) } ORDER BY ?x""")
    assert result.variables == ["x", "age"]
    rows = list(result.rows())
    assert [r[0].value for r in rows] == ["http://example.org/alice"] * 2


def test_optional_keeps_rows_without_a_match(store):
    result = store.query(PREFIX + "SELECT ?x ?y WHERE { ?x ex:age ?a OPTIONAL { ?x ex:knows ?y } }")
    rows = list(result.rows())
    assert len(rows) == 4
    assert (IRI("http://example.org/carol"), None) in rows


def test_aggregate_and_group(store):
    result = store.query(PREFIX + "SELECT ?x (COUNT(?y) AS ?n) WHERE { ?x ex:knows ?y } GROUP BY ?x")
    counts = {row[0].value.rsplit("/", 1)[1]: row[1].lexical for row in result.rows()}
    assert counts == {"alice": "2", "bob": "1"}


def test_ask_construct_describe(store):
    assert store.query(PREFIX + "ASK { ex:bob ex:knows ex:carol }").boolean is True
    assert store.query(PREFIX + "ASK { ex:carol ex:knows ex:bob }").boolean is False
    built = list(store.query(PREFIX + "CONSTRUCT { ?y ex:knownBy ?x } WHERE { ?x ex:knows ?y }").triples())
    assert len(built) == 3
    described = list(store.query(PREFIX + "DESCRIBE ex:carol").triples())
    # carol's own triples plus the blank node's city, followed through the bnode
    assert Literal("Paris") in {t[2] for t in described}
    assert len(described) == 3


def test_property_path(store):
    result = store.query(PREFIX + "SELECT ?y WHERE { ex:alice ex:knows+ ?y }")
    assert values(result, "y") == ["http://example.org/bob", "http://example.org/carol"]


def test_syntax_error_has_position(store):
    with pytest.raises(SparqlSyntaxError) as err:
        store.query("SELECT ?x WHERE {\n  ?x ?p \n}")
    assert err.value.line == 3


def test_update_is_atomic(store):
    before = len(store)
    with pytest.raises(UpdateError):
        # the first operation would succeed; the second fails (graph exists), so nothing changes
        store.update(PREFIX + "INSERT DATA { ex:dave ex:age 1 } ; CREATE GRAPH <http://g> ; "
                     "CREATE GRAPH <http://g>")
    assert len(store) == before
    assert store.named_graphs() == []
    store.update(PREFIX + "INSERT DATA { GRAPH <http://g> { ex:dave ex:age 1 } }")
    assert store.named_graphs() == [IRI("http://g")]
    assert store.query(PREFIX + "ASK { GRAPH ?g { ex:dave ex:age 1 } }").boolean


def test_delete_insert_where(store):
    store.update(PREFIX + "DELETE { ?x ex:age ?a } INSERT { ?x ex:age ?b } "
                 "WHERE { ?x ex:age ?a BIND(?a + 1 AS ?b) }")
    result = store.query(PREFIX + "SELECT ?a WHERE { ex:bob ex:age ?a }")
    assert [r[0].lexical for r in result.rows()] == ["18"]


def test_a_query_reads_one_snapshot(store):
    result = store.query(PREFIX + "SELECT ?x WHERE { ?x ex:age ?a }")
    store.update(PREFIX + "INSERT DATA { ex:erin ex:age 5 }")
    assert len(result) == 3
    assert len(store.query(PREFIX + "SELECT ?x WHERE { ?x ex:age ?a }")) == 4


def test_plans_are_cached_by_text(store):
    text = PREFIX + "SELECT * WHERE { ?s ?p ?o }"
    assert store.prepare(text) is store.prepare(text)


def test_query_local_terms_do_not_grow_the_dictionary(store):
    size = len(store.terms)
    store.query('SELECT ?v WHERE { BIND("never stored" AS ?v) FILTER(?v != <http://nowhere>) }')
    assert len(store.terms) == size


@pytest.fixture
def remote_endpoint():
    """A real HTTP SPARQL endpoint on loopback, answering from its own store."""
    remote = Store()
    remote.load(b'<http://example.org/bob> <http://example.org/email> "bob@example.org" .', format="nt")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            result = remote.query(parse_qs(body)["query"][0])
            payload = b"".join(write_select("json", result.variables, result.rows()))
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/sparql"
    server.shutdown()


def test_service_joins_remote_solutions(store, remote_endpoint):
    result = store.query(PREFIX + f"""SELECT ?x ?mail WHERE {{
        ex:alice ex:knows ?x .
        SERVICE <{remote_endpoint}> {{ ?x ex:email ?mail }} }}""")
    rows = list(result.rows())
    assert rows == [(IRI("http://example.org/bob"), Literal("bob@example.org"))]


def test_service_silent_survives_a_dead_endpoint(store):
    query = PREFIX + ("SELECT ?x WHERE { ex:bob ex:knows ?x "
                      "SERVICE SILENT <http://127.0.0.1:9/none> { ?x ?p ?o } }")
    assert len(store.query(query)) == 1
    with pytest.raises(ServiceError):
        store.query(query.replace("SILENT ", ""))


def test_limit_without_order_stops_early_but_answers_right():
    store = Store()
    store.add([(IRI(f"http://ex/s{i}"), IRI("http://ex/v"), Literal(str(i), "http://www.w3.org/2001/XMLSchema#integer"))
               for i in range(5000)])
    result = store.query("SELECT ?s ?v WHERE { ?s <http://ex/v> ?v FILTER(?v >= 4990) } LIMIT 5 OFFSET 2")
    rows = list(result.rows())
    assert len(rows) == 5 and all(int(v.lexical) >= 4990 for _, v in rows)
    empty = store.query("SELECT ?s WHERE { ?s <http://ex/v> ?v FILTER(?v > 9999) } LIMIT 5")
    assert empty.variables == ["s"] and len(empty) == 0
    everything = store.query("SELECT * WHERE { ?s ?p ?v } LIMIT 10000")
    assert len(everything) == 5000


def test_expressions_evaluate_once_per_distinct_input_and_stay_per_row_where_needed():
    store = Store()
    store.add([(IRI(f"http://ex/s{i}"), IRI("http://ex/name"), Literal(f"n{i % 3}")) for i in range(300)])
    upper = store.query('SELECT ?s ?u WHERE { ?s <http://ex/name> ?n BIND(UCASE(?n) AS ?u) '
                        'FILTER(REGEX(?n, "^n[01]$")) }')
    assert len(upper) == 200
    assert {row[1].lexical for row in upper.rows()} == {"N0", "N1"}
    # BNODE() is row-scoped: 300 rows, 300 different blank nodes
    fresh = store.query("SELECT (BNODE() AS ?b) WHERE { ?s <http://ex/name> ?n }")
    assert len({row[0] for row in fresh.rows()}) == 300


def test_and_or_filters_keep_sparql_error_semantics():
    store = Store()
    xsd_int = "http://www.w3.org/2001/XMLSchema#integer"
    store.add([(IRI(f"http://ex/s{i}"), IRI("http://ex/v"), Literal(str(i), xsd_int)) for i in range(10)]
              + [(IRI("http://ex/t"), IRI("http://ex/v"), Literal("text"))])
    def count(condition: str) -> int:
        return len(store.query(f"SELECT ?s WHERE {{ ?s <http://ex/v> ?v FILTER({condition}) }}"))
    assert count("?v > 2 && ?v < 6") == 3
    assert count("?v < 2 || ?v > 7") == 4
    # "text" < 5 is an error: error || true is true, error && true is an error (not true)
    assert count("?v < 5 || true") == 11
    assert count("?v < 5 && true") == 5
