"""FILTER (?a = ?b) / (?a != ?b): the by-ID path gives what SPARQL's value
comparison gives, and literals (equal values, other spellings) still compare
by value."""

from engine.api import Store
from engine.rdf import IRI, XSD, Literal

EX = "http://example.org/"


def store_with(objects) -> Store:
    store = Store()
    store.add([(IRI(EX + f"s{i}"), IRI(EX + "p"), o) for i, o in enumerate(objects)])
    return store


def pairs(store: Store, op: str) -> set:
    result = store.query(f"SELECT ?a ?b WHERE {{ ?x <{EX}p> ?a . ?y <{EX}p> ?b FILTER (?a {op} ?b) }}")
    return {(row[0], row[1]) for row in result.rows()}


def test_iris_and_blank_nodes_compare_by_identity():
    objects = [IRI(EX + "a"), IRI(EX + "b"), IRI(EX + "a")]
    store = store_with(objects)
    assert pairs(store, "!=") == {(IRI(EX + "a"), IRI(EX + "b")), (IRI(EX + "b"), IRI(EX + "a"))}
    assert pairs(store, "=") == {(IRI(EX + "a"), IRI(EX + "a")), (IRI(EX + "b"), IRI(EX + "b"))}


def test_literals_with_equal_values_are_equal_whatever_their_spelling():
    one, also_one = Literal("1", XSD + "integer"), Literal("01", XSD + "integer")
    store = store_with([one, also_one, IRI(EX + "a")])
    equal = pairs(store, "=")
    assert (one, also_one) in equal and (also_one, one) in equal
    assert (one, also_one) not in pairs(store, "!=")
