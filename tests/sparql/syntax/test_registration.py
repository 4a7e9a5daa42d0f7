"""Tests of continuous-query registrations: C-SPARQL and RSP-QL heads, window
clauses and durations, the algebra of WINDOW patterns, the CSRBench and LSBench
queries, and errors with their positions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.rdf import IRI, Variable
from engine.sparql.algebra import BGP, Join, Project, TriplePattern, Window
from engine.sparql.syntax import (
    BARE_NAME_NAMESPACE,
    ContinuousQuery,
    SparqlSyntaxError,
    WindowSpec,
    is_registration,
    parse_query,
    parse_registration,
)

SHARED = Path("/work/shared")
CSRBENCH = SHARED / "conformance/csrbench/queries.properties"
STREAM = IRI("http://example.org/stream")
EX = "http://example.org/"


def error_of(text: str) -> SparqlSyntaxError:
    with pytest.raises(SparqlSyntaxError) as info:
        parse_registration(text)
    return info.value


def time_window(stream: str, range_ms: int, step_ms: int, name: str | None = None) -> WindowSpec:
    return WindowSpec(IRI(stream), IRI(name) if name else None, range_ms, step_ms, None)


# ------------------------------------------------------------ is_registration


@pytest.mark.parametrize(
    "text",
    [
        "REGISTER QUERY q AS SELECT",
        "  # a comment\n\tregister stream <s> AS",
        "PREFIX ex: <http://ex.org/>\nBASE <http://b/>\nPREFIX : <x>\nREGISTER RSTREAM",
        "prefix ex:<http://ex.org/>REGISTER QUERY",
    ],
)
def test_is_registration(text: str) -> None:
    assert is_registration(text)


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * WHERE { ?s ?p ?o }",
        "PREFIX register: <http://ex.org/> SELECT * { register:a ?p ?o }",
        "REGISTERED QUERY",
        "# REGISTER QUERY q\nSELECT * {}",
        "",
    ],
)
def test_is_not_registration(text: str) -> None:
    assert not is_registration(text)


# ------------------------------------------------------------------ CSRBench


def csrbench_queries() -> dict[int, dict[str, str]]:
    """``srb.queryN.key = value`` entries; a value continues on lines after a
    trailing backslash (the file leaves blanks after some of them)."""
    entries: dict[int, dict[str, str]] = {}
    pending = ""
    for line in CSRBENCH.read_text().splitlines():
        line = pending + line.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        match = re.match(r"srb\.query(\d+)\.([\w.]+)\s*=\s*(.*)", line)
        if match:
            entries.setdefault(int(match.group(1)), {})[match.group(2)] = match.group(3)
    return entries


@pytest.mark.parametrize("number", range(1, 8))
def test_csrbench_queries(number: int) -> None:
    entry = csrbench_queries()[number]
    plain = entry["booleanquery"]
    size, slide = int(entry["window.size"]), int(entry["window.slide"])
    assert "WHERE" in plain
    window = f"FROM STREAM <{STREAM.value}> [RANGE {size // 1000}s STEP {slide}ms] "
    text = f"REGISTER QUERY q{number} AS " + plain.replace("WHERE", window + "WHERE", 1)
    registration = parse_registration(text)
    assert registration == ContinuousQuery(
        f"q{number}", "csparql", "RSTREAM", None, (time_window(STREAM.value, size, slide),),
        parse_query(plain), text,
    )
    assert registration.query.dataset is None


# ------------------------------------------------------------------- LSBench

LSBENCH_PREFIXES = """PREFIX sib:  <http://www.ins.cwi.nl/sib/vocabulary/>
PREFIX sibu: <http://www.ins.cwi.nl/sib/user/>
PREFIX sibp: <http://www.ins.cwi.nl/sib/person/>
PREFIX sioc: <http://rdfs.org/sioc/ns#>
PREFIX foaf: <http://xmlns.com/foaf/0.1/>
"""

#: (name, projection, streams, pattern) of LSBench L1-L6
LSBENCH = [
    ("query1_single_user_actions", "?p ?o", ["poststream", "gpsstream"], "sibu:u6496 ?p ?o ."),
    (
        "query2_group_post", "?post", ["poststream"],
        "?user sioc:account_of sibp:p864 . ?user sioc:creator_of ?post .",
    ),
    (
        "query3_group_friend_post", "?friend ?post", ["poststream"],
        "?user sioc:account_of sibp:p3514 . ?user foaf:knows ?friend . ?friend sioc:creator_of ?post .",
    ),
    (
        "query4_posts_same_tag", "?post1 ?post2 ?tag", ["poststream"],
        "?post1 sib:hashtag ?tag . ?user sioc:creator_of ?post1 . ?user sioc:creator_of ?post2 . "
        "?post2 sib:hashtag ?tag . FILTER (?post1 != ?post2)",
    ),
    (
        "query5_photo_friend_like", "?friend1 ?friend2 ?photo", ["photostream", "photolikestream"],
        "?photo sib:usertag ?friend1 . ?friend1 foaf:knows ?friend2 . ?friend2 sib:like ?photo .",
    ),
    (
        "query6_post_complex", "?user ?friend ?post ?channel", ["poststream", "postlikestream"],
        "?channel sioc:container_of ?post . ?user sioc:subscriber_of ?channel . "
        "?user foaf:knows ?friend . ?friend sib:like ?post .",
    ),
]


@pytest.mark.parametrize(("name", "projection", "streams", "where"), LSBENCH)
def test_lsbench_csparql(name: str, projection: str, streams: list[str], where: str) -> None:
    windows = "\n".join(f"FROM STREAM <{EX}{s}> [RANGE 1s STEP 100ms]" for s in streams)
    text = (
        f"{LSBENCH_PREFIXES}REGISTER QUERY {name} AS\n\nSELECT {projection}\n{windows}\n"
        f"FROM <{EX}stored>\n\nWHERE\n{{\n  {where}\n}}\n"
    )
    registration = parse_registration(text)
    assert registration.name == name
    assert registration.windows == tuple(time_window(EX + s, 1000, 100) for s in streams)
    plain = f"{LSBENCH_PREFIXES}SELECT {projection} FROM <{EX}stored> WHERE {{ {where} }}"
    assert registration.query == parse_query(plain)
    assert registration.query.dataset is not None
    assert registration.query.dataset.default == (IRI(EX + "stored"),)


def test_lsbench_query2_rspql_joins_stored_data_with_a_window() -> None:
    registration = parse_registration(
        f"{LSBENCH_PREFIXES}PREFIX : <{EX}>\n"
        "REGISTER RSTREAM :query2 AS\n"
        "SELECT ?post\n"
        "FROM NAMED WINDOW :w ON :poststream [RANGE PT1S STEP PT0.1S]\n"
        "WHERE {\n"
        "  ?user sioc:account_of sibp:p864 .\n"
        "  WINDOW :w { ?user sioc:creator_of ?post . }\n"
        "}"
    )
    head = (registration.name, registration.language, registration.report)
    assert head == (EX + "query2", "rspql", "RSTREAM")
    assert registration.output_stream is None
    assert registration.windows == (time_window(EX + "poststream", 1000, 100, EX + "w"),)
    assert registration.query.dataset is None
    user, post = Variable("user"), Variable("post")
    sioc = "http://rdfs.org/sioc/ns#"
    stored = BGP((TriplePattern(user, IRI(sioc + "account_of"), IRI("http://www.ins.cwi.nl/sib/person/p864")),))
    window = Window(IRI(EX + "w"), BGP((TriplePattern(user, IRI(sioc + "creator_of"), post),)))
    assert registration.query.pattern == Project(Join(stored, window), (post,))


def test_lsbench_query6_rspql_two_windows() -> None:
    registration = parse_registration(
        f"{LSBENCH_PREFIXES}PREFIX : <{EX}>\n"
        "REGISTER ISTREAM <http://example.org/q6> AS\n"
        "SELECT ?user ?friend ?post ?channel\n"
        "FROM NAMED WINDOW :posts ON :poststream [RANGE PT1S STEP PT0.1S]\n"
        "FROM NAMED WINDOW :likes ON :postlikestream [RANGE PT1S TUMBLING]\n"
        "WHERE {\n"
        "  WINDOW :posts { ?channel sioc:container_of ?post . }\n"
        "  ?user sioc:subscriber_of ?channel . ?user foaf:knows ?friend .\n"
        "  WINDOW :likes { ?friend sib:like ?post }\n"
        "}"
    )
    assert registration.report == "ISTREAM"
    assert registration.windows == (
        time_window(EX + "poststream", 1000, 100, EX + "posts"),
        time_window(EX + "postlikestream", 1000, 1000, EX + "likes"),
    )
    where = registration.query.pattern.pattern  # type: ignore[union-attr]
    assert isinstance(where, Join) and isinstance(where.right, Window)
    assert where.right.name == IRI(EX + "likes")
    assert isinstance(where.left, Join) and isinstance(where.left.left, Window)
    assert where.left.left.name == IRI(EX + "posts")
    assert isinstance(where.left.right, BGP) and len(where.left.right.triples) == 2


# ------------------------------------------------------------ forms and heads


def test_register_stream_construct_resolves_a_bare_name() -> None:
    text = (
        "REGISTER STREAM hot AS CONSTRUCT { ?s <http://ex.org/hot> true }\n"
        "FROM STREAM <http://ex.org/temps> [RANGE 5m TUMBLING]\n"
        "WHERE { ?s <http://ex.org/temp> ?t FILTER(?t > 30) }"
    )
    registration = parse_registration(text)
    head = (registration.name, registration.report, registration.query.form)
    assert head == ("hot", "RSTREAM", "CONSTRUCT")
    assert registration.output_stream == IRI(BARE_NAME_NAMESPACE + "hot")
    assert registration.windows == (time_window("http://ex.org/temps", 300_000, 300_000),)
    assert parse_registration(text, base="http://ex.org/streams/").output_stream == IRI(
        "http://ex.org/streams/hot"
    )


def test_register_query_has_no_output_stream_even_for_construct() -> None:
    registration = parse_registration(
        "REGISTER QUERY <http://ex.org/q> AS CONSTRUCT { ?s ?p ?o } "
        "FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }"
    )
    assert (registration.name, registration.output_stream) == ("http://ex.org/q", None)


def test_rspql_construct_registers_its_output_stream() -> None:
    registration = parse_registration(
        "PREFIX : <http://ex.org/> REGISTER DSTREAM :out AS CONSTRUCT { ?s :seen true } "
        "FROM NAMED WINDOW :w ON :s [RANGE PT1H STEP PT30M] WHERE { WINDOW :w { ?s ?p ?o } }"
    )
    assert (registration.report, registration.output_stream) == ("DSTREAM", IRI("http://ex.org/out"))
    assert registration.windows[0].range_ms == 3_600_000


def test_prefixes_after_as_count_windows_stored_graphs_and_ask() -> None:
    registration = parse_registration(
        "register query my-query as\n"
        "PREFIX ex: <http://ex.org/>\n"
        "ASK FROM STREAM ex:a [TRIPLES 100] FROM NAMED ex:g FROM STREAM ex:b [RANGE TRIPLES 7] "
        "FROM ex:d WHERE { ?s ?p ?o }"
    )
    assert (registration.name, registration.query.form) == ("my-query", "ASK")
    assert registration.windows == (
        WindowSpec(IRI("http://ex.org/a"), None, None, None, 100),
        WindowSpec(IRI("http://ex.org/b"), None, None, None, 7),
    )
    dataset = registration.query.dataset
    assert dataset is not None
    assert (dataset.default, dataset.named) == ((IRI("http://ex.org/d"),), (IRI("http://ex.org/g"),))
    assert registration.query.prefixes == {"ex": "http://ex.org/"}


@pytest.mark.parametrize(
    ("window", "range_ms", "step_ms"),
    [
        ("RANGE 10s STEP 1s", 10_000, 1_000),
        ("RANGE 1s STEP 100ms", 1_000, 100),
        ("range 2H step 30M", 7_200_000, 1_800_000),
        ("RANGE 1d STEP 1h", 86_400_000, 3_600_000),
        ("RANGE 10 s STEP 1 ms", 10_000, 1),
        ("RANGE PT10S STEP PT1S", 10_000, 1_000),
        ("RANGE PT0.5S STEP PT0.25S", 500, 250),
        ("RANGE P1DT1H1M1.5S TUMBLING", 90_061_500, 90_061_500),
        ("RANGE pt15m TUMBLING", 900_000, 900_000),
    ],
)
def test_durations(window: str, range_ms: int, step_ms: int) -> None:
    registration = parse_registration(
        f"REGISTER QUERY q AS SELECT * FROM STREAM <http://ex.org/s> [{window}] WHERE {{ ?s ?p ?o }}"
    )
    assert registration.windows[0] == time_window("http://ex.org/s", range_ms, step_ms)


def test_csparql_timestamp_function_takes_three_arguments() -> None:
    registration = parse_registration(
        "REGISTER QUERY ts AS PREFIX f: <http://larkc.eu/csparql/sparql/jena/ext#>\n"
        "SELECT ?s (f:timestamp(?s, ?p, ?o) AS ?t) FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s]\n"
        "WHERE { ?s ?p ?o }"
    )
    extend = registration.query.pattern.pattern  # type: ignore[union-attr]
    assert extend.expr.iri == "http://larkc.eu/csparql/sparql/jena/ext#timestamp"
    assert [arg.var.name for arg in extend.expr.args] == ["s", "p", "o"]


# --------------------------------------------------------------------- errors

Q = "REGISTER QUERY q AS SELECT * "
W = "FROM STREAM <http://ex.org/s> "
RSP = "PREFIX : <http://ex.org/> REGISTER RSTREAM :q AS SELECT * "


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        (Q + "FROM <http://ex.org/g>\nWHERE { ?s ?p ?o }", 1, 21, "at least one FROM STREAM"),
        ("REGISTER STREAM s AS SELECT * " + W + "[RANGE 1s STEP 1s] {}", 1, 22, "needs a CONSTRUCT"),
        ("REGISTER QUERY q AS\n  DESCRIBE ?s " + W + "[RANGE 1s STEP 1s] {}", 2, 3, "DESCRIBE"),
        (Q + W + "[RANGE 10x STEP 1s] {}", 1, 67, "a duration"),
        (Q + W + "[RANGE 10sec STEP 1s] {}", 1, 67, "'10sec'"),
        (Q + W + "[RANGE 1.5s STEP 1s] {}", 1, 67, "whole numbers"),
        (Q + W + "[RANGE 10s STEP 0ms] {}", 1, 76, "greater than zero"),
        (Q + W + "[RANGE -1s STEP 1s] {}", 1, 67, "a duration"),
        (Q + W + "[RANGE PT STEP PT1S] {}", 1, 67, "invalid ISO-8601"),
        (Q + W + "[RANGE P1Y STEP PT1S] {}", 1, 67, "a duration"),
        (Q + W + "[RANGE PT0.0001S STEP PT1S] {}", 1, 67, "whole number of milliseconds"),
        (Q + W + "[RANGE 10s] {}", 1, 70, "STEP or TUMBLING"),
        (Q + W + "[TRIPLES 0] {}", 1, 69, "at least one triple"),
        (Q + W + "WHERE {}", 1, 60, "a window like"),
        ("REGISTER QUERY AS SELECT", 1, 19, "'AS'"),
        ("REGISTER VIEW v AS SELECT", 1, 10, "QUERY, STREAM, RSTREAM"),
        (
            RSP + "FROM NAMED WINDOW :w ON :s [RANGE PT1S STEP PT1S]\n"
            "FROM NAMED WINDOW :w ON :t [RANGE PT1S STEP PT1S] {}",
            2, 19, "declared twice",
        ),
        (
            RSP + "FROM NAMED WINDOW :w ON :s [RANGE PT1S STEP PT1S]\nWHERE {\n  WINDOW :v { ?s ?p ?o } }",
            3, 10, "no window <http://ex.org/v>",
        ),
        (RSP + W + "[RANGE 1s STEP 1s] {}", 1, 64, "FROM STREAM is C-SPARQL"),
        (Q + "FROM NAMED WINDOW <http://ex.org/w> ON <http://ex.org/s> [RANGE 1s STEP 1s] {}", 1, 41, "RSP"),
        (Q + W + "[RANGE 1s STEP 1s] { WINDOW <http://ex.org/w> {} }", 1, 81, "WINDOW patterns are RSP-QL"),
        (
            RSP + "FROM NAMED WINDOW :w ON :s [RANGE PT1S STEP PT1S] { WINDOW :w { WINDOW :w {} } }",
            1, 123, "nested",
        ),
        ("SELECT * WHERE {}", 1, 1, "'REGISTER'"),
    ],
)
def test_errors(text: str, line: int, column: int, fragment: str) -> None:
    err = error_of(text)
    assert fragment in err.message
    assert (err.line, err.column) == (line, column), err


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] WHERE {}",
        "SELECT * FROM NAMED WINDOW <http://ex.org/w> ON <http://ex.org/s> [RANGE PT1S STEP PT1S] {}",
        "SELECT * WHERE { WINDOW <http://ex.org/w> { ?s ?p ?o } }",
        "REGISTER QUERY q AS SELECT * FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] {}",
    ],
)
def test_plain_sparql_rejects_stream_syntax(text: str) -> None:
    with pytest.raises(SparqlSyntaxError):
        parse_query(text)
