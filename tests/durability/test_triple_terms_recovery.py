"""RDF 1.2 triple terms in a data directory: written by updates, loads and
stream items, they come back from the write-ahead log and from a checkpoint
as the same terms (their spelling nests terms with spaces and quotes)."""

from __future__ import annotations

from engine.durability import DataDirectory
from engine.rdf import IRI, Literal, TripleTerm

EX = "http://example.org/"
INNER = TripleTerm(IRI(EX + "bob"), IRI(EX + "knows"), Literal('carol "the" )>> one\there', lang="en--ltr"))
NESTED = TripleTerm(IRI(EX + "dan"), IRI(EX + "heard"), INNER)


def crash(data: DataDirectory) -> None:
    data.lock.release()


def triple_terms(data: DataDirectory) -> set:
    rows = data.store.query("SELECT ?s ?o { ?s ?p ?o FILTER(isTRIPLE(?o)) }").rows()
    return {tuple(row) for row in rows}


def test_triple_terms_survive_the_log_and_a_checkpoint(tmp_path):
    data = DataDirectory.open(tmp_path, checkpoint_mb=1000)
    data.store.update(f"INSERT DATA {{ <{EX}alice> <{EX}says> <<( <{EX}bob> <{EX}knows> "
                      f"\"carol \\\"the\\\" )>> one\\there\"@en--ltr )>> }}")
    data.store.add([(IRI(EX + "erin"), IRI(EX + "says"), NESTED)])
    expected = {(IRI(EX + "alice"), INNER), (IRI(EX + "erin"), NESTED)}
    assert triple_terms(data) == expected
    crash(data)
    reopened = DataDirectory.open(tmp_path)
    assert triple_terms(reopened) == expected
    reopened.checkpoint()
    crash(reopened)
    again = DataDirectory.open(tmp_path)
    assert triple_terms(again) == expected and again.recovery.checkpoint_lsn > 0
    nested = f"<<( ?x <{EX}heard> <<( ?y ?z ?o )>> )>>"
    found = again.store.query(f"SELECT ?who WHERE {{ ?who <{EX}says> {nested} }}")
    assert [tuple(row) for row in found.rows()] == [(IRI(EX + "erin"),)]
