"""A catalog copied row for row (``rivulet backup``), from SQLite and from PostgreSQL into
a data directory's own SQLite catalog, and a backup of a data directory whose catalog is
on PostgreSQL opened as an ordinary one."""

from __future__ import annotations

from engine.catalog import Catalog
from engine.durability import DataDirectory
from engine.durability.backup import backup
from engine.rdf import IRI
from engine.stream import StreamDefinition
from tests.durability.test_checkpoint_differential import quads

EX = "http://example.org/"
QUERY = (f"REGISTER QUERY counts AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}stream> [RANGE 5s STEP 1s] "
         f"WHERE {{ ?s ?p ?o }}")


def test_every_row_is_copied_as_it_is(catalog_url, tmp_path):
    with Catalog(catalog_url) as source:
        source.save_stream("s", {"iri": f"{EX}s", "timing": []}, 3)
        source.save_query("q", "REGISTER QUERY q AS ...", None, 4)
        source.save_query("gone", "REGISTER QUERY gone AS ...", f"{EX}base", 5)
        source.record_checkpoint(7, "checkpoints/00000000000000000007", 12, [f"<{EX}g>"], {"s": (1234, 5)},
                                 {"q": (3, 2, b"\x00policy\xff", b"events")})
        source.drop_query("gone", 8)
        rows = source.export_rows()
    with Catalog(f"sqlite:///{tmp_path / 'copy.sqlite'}") as target:
        target.import_rows(rows)
        assert target.export_rows() == rows
        assert target.streams() == source_streams(catalog_url)
        assert [q.name for q in target.queries(include_dropped=True)] == ["q", "gone"]
        assert target.last_checkpoint().directory == "checkpoints/00000000000000000007"
        assert target.queries()[0].policy_state == b"\x00policy\xff"


def source_streams(url: str):
    with Catalog(url) as catalog:
        return catalog.streams()


def test_a_backup_of_a_directory_with_its_catalog_elsewhere_opens_on_its_own(catalog_url, tmp_path):
    data = DataDirectory.open(tmp_path / "data", catalog_url)
    data.engine.declare_stream(StreamDefinition("s", IRI(f"{EX}stream")))
    data.engine.register(QUERY)
    data.store.update(f'INSERT DATA {{ <{EX}a> <{EX}p> "stored" . GRAPH <{EX}g> {{ <{EX}a> <{EX}p> 1 }} }}')
    data.engine.ingest("s", [(1_000, [(IRI(f"{EX}x"), IRI(f"{EX}p"), IRI(f"{EX}y"))])])
    data.checkpoint()
    data.store.update(f'INSERT DATA {{ <{EX}b> <{EX}p> "logged after the checkpoint" }}')
    expected = quads(data)
    backup(tmp_path / "data", tmp_path / "copy", catalog_url)
    data.close()
    copy = DataDirectory.open(tmp_path / "copy")  # its own catalog.sqlite
    try:
        assert quads(copy) == expected
        assert list(copy.engine.streams) == ["s"] and list(copy.engine.queries) == ["counts"]
        assert copy.catalog.last_checkpoint().directory.startswith("checkpoints/")
    finally:
        copy.close()
