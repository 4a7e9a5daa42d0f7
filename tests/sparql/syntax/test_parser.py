"""Unit tests of the SPARQL parser: algebra shapes of the 18.2 translation,
terms and IRIs, property paths, updates, and error positions."""

from __future__ import annotations

import pytest

from engine.rdf import (
    IRI,
    RDF,
    RDF_TYPE,
    XSD_BOOLEAN,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    BNode,
    Literal,
    Variable,
)
from engine.sparql.algebra import (
    BGP,
    Aggregate,
    BinaryExpr,
    CallExpr,
    Clear,
    Create,
    DeleteData,
    DeleteWhere,
    Distinct,
    Drop,
    ExistsExpr,
    Extend,
    Filter,
    FunctionExpr,
    Graph,
    GroupBy,
    InExpr,
    InsertData,
    Join,
    LeftJoin,
    Load,
    Minus,
    Modify,
    OrderBy,
    PathAlternative,
    PathLink,
    PathNegated,
    PathPattern,
    PathRepeat,
    Project,
    Quad,
    Service,
    Slice,
    TermExpr,
    Transfer,
    TriplePattern,
    UnaryExpr,
    Union_,
    Values,
    VarExpr,
)
from engine.sparql.syntax import SparqlSyntaxError, parse_query, parse_update

EX = "http://example.org/"
PRE = f"PREFIX : <{EX}>\n"


def v(name: str) -> Variable:
    return Variable(name)


def ex(local: str) -> IRI:
    return IRI(EX + local)


def where(text: str):
    """The WHERE pattern of ``SELECT * { text }`` (under the Project)."""
    pattern = parse_query(PRE + "SELECT * { " + text + " }").pattern
    assert isinstance(pattern, Project)
    return pattern.pattern


def error_of(text: str, update: bool = False) -> SparqlSyntaxError:
    with pytest.raises(SparqlSyntaxError) as info:
        (parse_update if update else parse_query)(text)
    return info.value


# ------------------------------------------------------------ graph patterns


def test_basic_select_is_project_over_bgp() -> None:
    query = parse_query(PRE + "SELECT ?s WHERE { ?s :p ?o . ?o a :C }")
    assert query.form == "SELECT"
    assert query.variables == (v("s"),)
    assert query.pattern == Project(
        BGP((TriplePattern(v("s"), ex("p"), v("o")), TriplePattern(v("o"), IRI(RDF_TYPE), ex("C")))),
        (v("s"),),
    )


def test_filter_applies_to_whole_group_and_bgp_continues_across_it() -> None:
    pattern = where("?s :p ?o FILTER(?o > 1) ?s :q ?z")
    assert isinstance(pattern, Filter)
    assert pattern.condition == BinaryExpr(">", VarExpr(v("o")), TermExpr(Literal("1", XSD_INTEGER)))
    assert isinstance(pattern.pattern, BGP) and len(pattern.pattern.triples) == 2


def test_several_filters_are_a_conjunction() -> None:
    pattern = where("?s :p ?o FILTER(?a) FILTER(?b)")
    assert pattern.condition == BinaryExpr("&&", VarExpr(v("a")), VarExpr(v("b")))


def test_optional_filter_becomes_leftjoin_condition() -> None:
    pattern = where("?s :p ?o OPTIONAL { ?s :q ?z FILTER(?z = ?o) }")
    assert isinstance(pattern, LeftJoin)
    assert pattern.condition == BinaryExpr("=", VarExpr(v("z")), VarExpr(v("o")))
    assert pattern.right == BGP((TriplePattern(v("s"), ex("q"), v("z")),))


def test_filter_of_nested_group_in_optional_stays_inside() -> None:
    pattern = where("?s :p ?o OPTIONAL { { ?s :q ?z FILTER(?o) } }")
    assert isinstance(pattern, LeftJoin) and pattern.condition is None
    assert isinstance(pattern.right, Filter)


def test_optional_on_empty_group_keeps_empty_left() -> None:
    pattern = where("OPTIONAL { ?s :p ?o }")
    assert isinstance(pattern, LeftJoin) and pattern.left == BGP(())


def test_bind_extends_what_precedes_it() -> None:
    pattern = where("?s :p ?o BIND(?o + 1 AS ?n) ?s :q ?n")
    assert isinstance(pattern, Join)
    assert isinstance(pattern.left, Extend) and pattern.left.var == v("n")
    assert pattern.left.pattern == BGP((TriplePattern(v("s"), ex("p"), v("o")),))
    assert pattern.right == BGP((TriplePattern(v("s"), ex("q"), v("n")),))


def test_union_minus_graph_values() -> None:
    pattern = where("{ ?s :p ?o } UNION { ?s :q ?o } MINUS { ?s :r ?o } GRAPH ?g { ?s ?p ?o }")
    assert isinstance(pattern, Join) and isinstance(pattern.right, Graph)
    assert pattern.right.name == v("g")
    assert isinstance(pattern.left, Minus) and isinstance(pattern.left.left, Union_)
    values = where("VALUES (?a ?b) { (1 UNDEF) (:x 'y') }")
    assert values == Values(
        (v("a"), v("b")), ((Literal("1", XSD_INTEGER), None), (ex("x"), Literal("y")))
    )


def test_exists_and_in() -> None:
    pattern = where("?s :p ?o FILTER NOT EXISTS { ?s :q ?o } FILTER(?o NOT IN (1, 2))")
    first, second = pattern.condition.left, pattern.condition.right
    assert isinstance(first, ExistsExpr) and first.negated
    assert second == InExpr(
        VarExpr(v("o")), (TermExpr(Literal("1", XSD_INTEGER)), TermExpr(Literal("2", XSD_INTEGER))), True
    )


def test_blank_nodes_become_hidden_variables() -> None:
    query = parse_query(PRE + "SELECT * { _:a :p [ :q ?x ] . _:a :r ?y }")
    triples = query.pattern.pattern.triples
    hidden = {t.subject for t in triples}
    assert all(isinstance(h, Variable) and h.name.startswith(".b") for h in hidden)
    assert triples[0].subject == triples[2].subject  # same label, same variable
    assert query.variables == (v("x"), v("y"))


def test_select_star_order_of_first_appearance() -> None:
    query = parse_query(PRE + "SELECT * { ?b :p ?a OPTIONAL { ?c :q ?a } BIND(1 AS ?d) }")
    assert query.variables == (v("b"), v("a"), v("c"), v("d"))


def test_subquery_scope_is_its_projection() -> None:
    query = parse_query(PRE + "SELECT * { ?s :p ?o { SELECT ?s { ?s :q ?hidden } LIMIT 2 } }")
    assert query.variables == (v("s"), v("o"))
    sub = query.pattern.pattern.right
    assert isinstance(sub, Slice) and sub.limit == 2 and isinstance(sub.pattern, Project)


def test_service_keeps_text_with_prologue() -> None:
    pattern = where("SERVICE SILENT <http://remote/sparql> { ?s :p ?o }")
    assert isinstance(pattern, Service) and pattern.silent
    assert pattern.endpoint == IRI("http://remote/sparql")
    assert pattern.query_text == f"PREFIX : <{EX}>\nSELECT * WHERE {{ ?s :p ?o }}"
    assert parse_query(pattern.query_text).variables == (v("s"), v("o"))


# -------------------------------------------------- aggregates and modifiers


def test_group_by_with_aggregates_and_modifier_order() -> None:
    query = parse_query(
        PRE + "SELECT DISTINCT ?s (COUNT(?o) AS ?n) { ?s :p ?o } GROUP BY ?s "
        "HAVING (COUNT(?o) > 1) ORDER BY DESC(?n) LIMIT 5 OFFSET 2"
    )
    sliced = query.pattern
    assert isinstance(sliced, Slice) and (sliced.offset, sliced.limit) == (2, 5)
    assert isinstance(sliced.pattern, Distinct)
    project = sliced.pattern.pattern
    assert isinstance(project, Project) and project.vars == (v("s"), v("n"))
    order = project.pattern
    assert isinstance(order, OrderBy) and order.conditions == ((VarExpr(v("n")), False),)
    extend = order.pattern
    agg = Variable(".agg0")
    assert isinstance(extend, Extend) and extend.expr == VarExpr(agg)
    having = extend.pattern
    assert isinstance(having, Filter)
    assert having.condition == BinaryExpr(">", VarExpr(agg), TermExpr(Literal("1", XSD_INTEGER)))
    group_by = having.pattern
    assert isinstance(group_by, GroupBy)
    assert group_by.keys == ((VarExpr(v("s")), v("s")),)
    assert group_by.aggregates == ((agg, Aggregate("COUNT", VarExpr(v("o")))),)


def test_aggregate_without_group_by_has_empty_keys() -> None:
    query = parse_query("SELECT (COUNT(*) AS ?c) (GROUP_CONCAT(DISTINCT ?x; SEPARATOR='|') AS ?g) {}")
    group_by = query.pattern.pattern.pattern.pattern
    assert isinstance(group_by, GroupBy) and group_by.keys == ()
    assert [a for _, a in group_by.aggregates] == [
        Aggregate("COUNT", None),
        Aggregate("GROUP_CONCAT", VarExpr(v("x")), True, "|"),
    ]


def test_group_by_expression_binds_variable() -> None:
    query = parse_query("SELECT ?k (SUM(?x) AS ?t) { ?s ?p ?x } GROUP BY (STR(?s) AS ?k)")
    group_by = query.pattern.pattern.pattern
    assert group_by.keys == ((CallExpr("STR", (VarExpr(v("s")),)), v("k")),)


def test_trailing_values_joins_before_projection() -> None:
    query = parse_query("SELECT * { ?s ?p ?o } VALUES ?x { 1 }")
    assert query.variables == (v("s"), v("p"), v("o"), v("x"))
    assert isinstance(query.pattern.pattern, Join)


# -------------------------------------------------------------- query forms


def test_construct_template_keeps_blank_nodes() -> None:
    query = parse_query(PRE + "CONSTRUCT { ?s :p [ :q ?o ] } WHERE { ?s :r ?o }")
    assert query.form == "CONSTRUCT"
    node = query.template[0].object
    assert isinstance(node, BNode) and query.template[1].subject == node


def test_construct_where_short_form() -> None:
    query = parse_query(PRE + "CONSTRUCT WHERE { ?s :p ?o }")
    assert query.template == (TriplePattern(v("s"), ex("p"), v("o")),)
    assert query.pattern == BGP(query.template)


def test_describe_and_ask_and_dataset() -> None:
    query = parse_query(PRE + "DESCRIBE * FROM :g FROM NAMED :h WHERE { ?s :p ?o }")
    assert query.describe == (v("s"), v("o"))
    assert query.dataset.default == (ex("g"),) and query.dataset.named == (ex("h"),)
    assert parse_query("DESCRIBE <http://x/>").describe == (IRI("http://x/"),)
    assert parse_query("ASK {}").form == "ASK"


# --------------------------------------------------------- terms and IRIs


def test_iri_resolution_against_base() -> None:
    query = parse_query(
        "BASE <http://a/b/c/d> PREFIX p: <e/> SELECT * { <../x> p:y <#z> }", base="http://ignored/"
    )
    triple = query.pattern.pattern.triples[0]
    assert triple == TriplePattern(IRI("http://a/b/x"), IRI("http://a/b/c/e/y"), IRI("http://a/b/c/d#z"))
    assert query.base == "http://a/b/c/d"
    relative = parse_query("SELECT * { <x> ?p ?o }", base="http://host/dir/file")
    assert relative.pattern.pattern.triples[0].subject == IRI("http://host/dir/x")


def test_literals() -> None:
    triples = where(
        "?s :p 'a\\tb', \"\"\"multi\nline\"\"\", 'x'@en-GB, '5'^^:t, -1, +2.50, 1e3, .5E-1, true, FALSE"
    ).triples
    objects = [t.object for t in triples]
    assert objects == [
        Literal("a\tb"),
        Literal("multi\nline"),
        Literal("x", lang="en-GB"),
        Literal("5", EX + "t"),
        Literal("-1", XSD_INTEGER),
        Literal("+2.50", XSD_DECIMAL),
        Literal("1e3", XSD_DOUBLE),
        Literal(".5E-1", XSD_DOUBLE),
        Literal("true", XSD_BOOLEAN),
        Literal("false", XSD_BOOLEAN),
    ]


def test_codepoint_escapes_are_processed_everywhere() -> None:
    triple = where("?s <http://x/\\u00e9> '\\U0001F46A' ").triples[0]
    assert triple.predicate == IRI("http://x/\u00e9")
    assert triple.object == Literal("\U0001f46a")


def test_prefixed_name_escapes() -> None:
    triple = where(":a\\~b :c%3D :d\\.e").triples[0]
    assert triple == TriplePattern(ex("a~b"), ex("c%3D"), ex("d.e"))


def test_collection_expands_to_rdf_list() -> None:
    triples = where("?s :p (1 ?x)").triples
    head = triples[0].object
    assert triples[1] == TriplePattern(head, IRI(RDF + "first"), Literal("1", XSD_INTEGER))
    assert triples[-1].object == IRI(RDF + "nil")
    assert len(triples) == 5


def test_expressions_precedence_and_calls() -> None:
    pattern = where("FILTER(1 + 2 * 3 = 7 || !BOUND(?x) && xsd:integer(?y))".replace("xsd:", ":"))
    cond = pattern.condition
    assert cond.op == "||"
    assert cond.left == BinaryExpr(
        "=",
        BinaryExpr(
            "+",
            TermExpr(Literal("1", XSD_INTEGER)),
            BinaryExpr("*", TermExpr(Literal("2", XSD_INTEGER)), TermExpr(Literal("3", XSD_INTEGER))),
        ),
        TermExpr(Literal("7", XSD_INTEGER)),
    )
    assert cond.right == BinaryExpr(
        "&&",
        UnaryExpr("!", CallExpr("BOUND", (VarExpr(v("x")),))),
        FunctionExpr(EX + "integer", (VarExpr(v("y")),)),
    )


def test_builtin_synonyms_are_normalised() -> None:
    cond = where("FILTER(isURI(URI(?x)))").condition
    assert cond == CallExpr("ISIRI", (CallExpr("IRI", (VarExpr(v("x")),)),))


# ------------------------------------------------------------------- paths


def test_simple_paths_become_triples() -> None:
    triples = where("?s ^:p ?o . ?a :q/:r ?b . ?c a ?d").triples
    assert triples[0] == TriplePattern(v("o"), ex("p"), v("s"))
    joint = triples[1].object
    assert isinstance(joint, Variable) and joint.name.startswith(".b")
    assert triples[1:3] == (TriplePattern(v("a"), ex("q"), joint), TriplePattern(joint, ex("r"), v("b")))
    assert triples[3] == TriplePattern(v("c"), IRI(RDF_TYPE), v("d"))


def test_complex_paths_become_path_patterns() -> None:
    pattern = where("?s (:p|:q)* ?o")
    assert pattern == PathPattern(
        v("s"), PathRepeat(PathAlternative((PathLink(ex("p")), PathLink(ex("q")))), 0, None), v("o")
    )
    negated = where("?s !(:p|^:q|a) ?o")
    assert negated.path == PathNegated((ex("p"), IRI(RDF_TYPE)), (ex("q"),))
    sequence = where("?s :p/:q+ ?o")
    assert isinstance(sequence, Join)
    assert isinstance(sequence.left, BGP) and isinstance(sequence.right, PathPattern)


# ----------------------------------------------------------------- updates


def test_insert_data_keeps_blank_nodes_and_graphs() -> None:
    update = parse_update(PRE + "INSERT DATA { _:b :p 1 . GRAPH :g { :s :p [] } }")
    (op,) = update.operations
    assert isinstance(op, InsertData)
    assert op.quads[0] == Quad(BNode("b"), ex("p"), Literal("1", XSD_INTEGER), None)
    assert op.quads[1].graph == ex("g") and isinstance(op.quads[1].object, BNode)


def test_modify_with_using_and_several_operations() -> None:
    update = parse_update(
        PRE + "WITH :g DELETE { ?s :p ?o } INSERT { ?s :q ?o } USING :u USING NAMED :n "
        "WHERE { ?s :p ?o } ;\nPREFIX e: <http://e/> DELETE WHERE { ?s e:p ?o } ; DELETE DATA { :a :b :c } ;"
    )
    modify, delete_where, delete_data = update.operations
    assert isinstance(modify, Modify) and modify.with_graph == ex("g")
    assert modify.delete == (Quad(v("s"), ex("p"), v("o")),)
    assert modify.insert == (Quad(v("s"), ex("q"), v("o")),)
    assert modify.using.default == (ex("u"),) and modify.using.named == (ex("n"),)
    assert modify.where == BGP((TriplePattern(v("s"), ex("p"), v("o")),))
    assert delete_where == DeleteWhere((Quad(v("s"), IRI("http://e/p"), v("o")),))
    assert isinstance(delete_data, DeleteData)


def test_graph_management_operations() -> None:
    update = parse_update(
        "LOAD SILENT <http://x/d> INTO GRAPH <http://x/g> ; CLEAR DEFAULT ; DROP GRAPH <http://x/g> ;"
        " CREATE GRAPH <http://x/h> ; COPY DEFAULT TO <http://x/h> ;"
        " MOVE SILENT GRAPH <http://x/a> TO DEFAULT"
    )
    assert update.operations == (
        Load(IRI("http://x/d"), IRI("http://x/g"), True),
        Clear("DEFAULT"),
        Drop(IRI("http://x/g")),
        Create(IRI("http://x/h")),
        Transfer("COPY", "DEFAULT", IRI("http://x/h")),
        Transfer("MOVE", IRI("http://x/a"), "DEFAULT", True),
    )
    assert parse_update("# nothing\n").operations == ()


# ------------------------------------------------------------------ errors


def test_error_carries_line_and_column() -> None:
    err = error_of("SELECT *\nWHERE {\n  ?s ?p ?o\n  OPTIONAL { ?s ?q ?r \n}")
    assert (err.line, err.column) == (5, 2)
    assert err.message == "expected a graph pattern or '}' but found end of input"
    assert str(err) == f"line 5, column 2: {err.message}"
    err = error_of("SELECT * {\n  ?s ?p ?o .\n  FILTER ?o\n}")
    assert (err.line, err.column) == (3, 10)
    assert "found '?o'" in str(err)


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("SELECT ?o { ?s ?p ?o } GROUP BY ?s", 1, 8, "not a GROUP BY key"),
        ("SELECT * { ?s ?p ?o } GROUP BY ?s", 1, 8, "SELECT *"),
        ("SELECT ((?a + ?b) AS ?c) (COUNT(*) AS ?n) {} GROUP BY (?a + ?b)", 1, 22, "not grouped"),
        ("SELECT (1 AS ?x) (2 AS ?x) {}", 1, 24, "already in scope"),
        ("SELECT (1 AS ?x) { ?x ?p ?o }", 1, 14, "already in scope"),
        ("SELECT * {\n ?s ?p ?o BIND(1 AS ?o) }", 2, 21, "already in scope"),
        ("SELECT * { _:a ?p ?o OPTIONAL { _:a ?q ?r } }", 1, 33, "_:a"),
        ("SELECT * { FILTER(COUNT(?x) > 1) }", 1, 19, "aggregate COUNT"),
        ("SELECT (SUM(MAX(?x)) AS ?y) {}", 1, 13, "aggregate MAX"),
        ("SELECT * { ?s ?p ex:o }", 1, 18, "undeclared prefix"),
        ("SELECT * { VALUES (?a ?b) { (1) } }", 1, 29, "VALUES row"),
        ("SELECT * { ?s ?p 'bad\\q' }", 1, 18, "escape"),
        ("SELECT * { ?s ?p '\\uD800' }", 1, 19, "code point"),
    ],
)
def test_static_errors(text: str, line: int, column: int, fragment: str) -> None:
    err = error_of(text)
    assert (err.line, err.column) == (line, column)
    assert fragment in err.message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("INSERT DATA { ?s <http://p> <http://o> }", "variables are not allowed"),
        ("DELETE DATA { _:b <http://p> <http://o> }", "blank nodes are not allowed"),
        ("DELETE WHERE { [] <http://p> ?o }", "blank nodes are not allowed"),
        ("DELETE { ?s <http://p> [] } WHERE { ?s ?p ?o }", "blank nodes are not allowed"),
        ("INSERT DATA { _:b <http://p> 1 } ; INSERT DATA { _:b <http://p> 2 }", "_:b"),
        ("CLEAR GRAPH <http://g> ;;", "update operation"),
        ("CREATE GRAPH <http://g> LOAD <http://x>", "';'"),
        ("INSERT WHERE { ?s ?p ?o }", "'{'"),
    ],
)
def test_update_errors(text: str, fragment: str) -> None:
    assert fragment in error_of(text, update=True).message


def test_insert_template_labels_are_local_to_each_operation() -> None:
    update = parse_update("INSERT { _:b <http://p> 1 } WHERE {} ; INSERT { _:b <http://p> 2 } WHERE {}")
    assert len(update.operations) == 2
