"""Numbers with value IDs in stored graphs: a checkpoint keeps them beside its
CSR arrays, and a restart answers as before."""

from __future__ import annotations

from engine.durability import DataDirectory
from engine.rdf import VALUE_BASE, XSD, Literal

EX = "http://example.org/"


def contents(store) -> set[tuple]:
    rows = store.query("SELECT * { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }").rows()
    return {tuple(map(str, row)) for row in rows}


def test_value_ids_survive_a_checkpoint_and_a_restart(tmp_path):
    data = DataDirectory.open(tmp_path, checkpoint_mb=1000)
    rows = " ".join(f'<{EX}r{i}> <{EX}v> {i}, "{i}.50"^^<{XSD}decimal>, "0{i}"^^<{XSD}integer> .'
                    for i in range(50))
    data.store.update(f"INSERT DATA {{ {rows} GRAPH <{EX}g> {{ <{EX}a> <{EX}ok> true }} }}")
    assert data.store.terms.lookup(Literal("7", XSD + "integer")) >= VALUE_BASE
    assert data.store.terms.lookup(Literal("07", XSD + "integer")) < VALUE_BASE  # not canonical: kept
    before = contents(data.store)
    data.checkpoint()
    data.lock.release()  # a crash: nothing closed
    again = DataDirectory.open(tmp_path)
    assert contents(again.store) == before
    assert again.recovery.checkpoint_lsn > 0 and again.recovery.records_replayed == 0
    big = again.store.query(f"SELECT (COUNT(*) AS ?n) {{ ?r <{EX}v> ?x FILTER(?x > 40) }}")
    assert int(next(big.rows())[0].lexical) == 3 * 9 + 1  # 41..49 three ways, and "40.50"
    again.store.update(f"DELETE DATA {{ <{EX}r1> <{EX}v> 1 }}")
    assert len(contents(again.store)) == len(before) - 1
