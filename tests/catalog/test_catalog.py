"""The catalog on SQLite and PostgreSQL: schema by migrations, rows in and out, atomic checkpoints.

Each test that takes ``catalog_url`` runs on both backends (see conftest.py).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, event, inspect, text

from engine.catalog import Catalog, CatalogError, CheckpointRow, QueryRow, StreamRow
from engine.catalog.connection import alembic_config, migrations_directory, open_engine, upgrade_to_head
from engine.catalog.models import Base

REPO = Path(__file__).resolve().parents[2]
TABLES = {"streams", "queries", "graphs", "checkpoints", "tokens"}
#: the newest migration
HEAD = "0002"


@pytest.fixture
def catalog(catalog_url: str) -> Iterator[Catalog]:
    opened = Catalog(catalog_url)
    yield opened
    opened.close()


@pytest.fixture
def engine(catalog_url: str) -> Iterator[Engine]:
    """A separate engine on the catalog's database, to look at it from outside the Catalog."""
    opened = open_engine(catalog_url)
    yield opened
    opened.dispose()


def _version(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return list(connection.scalars(text("SELECT version_num FROM alembic_version")))


def _with_a_dropped_query_and_progress(catalog: Catalog) -> None:
    """A catalog with two streams, a live query, a query dropped at LSN 20, and checkpoint 10."""
    catalog.save_stream("gauges", {"iri": "http://example.org/gauges"}, 1)
    catalog.save_stream("boats", {"iri": "http://example.org/boats"}, 2)
    catalog.save_query("levels", "SELECT * WHERE { ?s ?p ?o }", "http://example.org/", 3)
    catalog.save_query("old", "ASK {}", None, 4)
    catalog.record_checkpoint(10, "/data/cp10", 100, ["http://example.org/g1"],
                              {"gauges": (1_000, 5), "boats": (None, 0)},
                              {"levels": (2, 7, b"state-10", b"events-10"), "old": (None, 1, None, None)})
    catalog.drop_query("old", 20)


def _everything(catalog: Catalog) -> tuple:
    return catalog.checkpoints(), catalog.graphs(), catalog.streams(), catalog.queries(include_dropped=True)


# the schema


def test_migrations_create_the_tables_with_their_columns(catalog, engine):
    schema = inspect(engine)
    assert TABLES | {"alembic_version"} == set(schema.get_table_names())
    assert [column["name"] for column in schema.get_columns("queries")] == [
        "name", "text", "base", "registered_lsn", "dropped_lsn", "next_index", "sequence",
        "policy_state", "events"]
    assert schema.get_pk_constraint("checkpoints")["constrained_columns"] == ["lsn"]
    assert {column["name"]: column["nullable"] for column in schema.get_columns("streams")} == {
        "name": False, "definition": False, "declared_lsn": False, "watermark_ms": True,
        "triples_total": False, "dropped_lsn": True}
    assert schema.get_pk_constraint("streams")["constrained_columns"] == ["name", "declared_lsn"]
    assert _version(engine) == [HEAD]


def test_the_models_describe_the_migrated_schema(catalog, engine):
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection, opts={"compare_type": True}),
                                       Base.metadata)
    assert differences == []


def test_rerunning_the_migrations_changes_nothing(catalog_url, catalog, engine):
    catalog.save_stream("gauges", {"iri": "g"}, 1)
    statements: list[str] = []
    event.listen(engine, "before_cursor_execute",
                 lambda _conn, _cursor, statement, *_rest: statements.append(statement.upper()))
    upgrade_to_head(engine)
    upgrade_to_head(engine)
    assert statements, "the migrations did not even read the version table"
    assert [sql for sql in statements if sql.lstrip().startswith(("CREATE", "ALTER", "DROP"))] == []
    assert _version(engine) == [HEAD]
    with Catalog(catalog_url) as reopened:
        assert [row.name for row in reopened.streams()] == ["gauges"]


def test_the_downgrade_drops_every_table(catalog, engine):
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "base")
    assert set(inspect(engine).get_table_names()) == {"alembic_version"}
    assert _version(engine) == []


def test_a_catalog_of_a_newer_schema_is_refused_rather_than_used(catalog_url, catalog, engine):
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(CatalogError, match="cannot migrate catalog .*9999"):
        Catalog(catalog_url)


def test_the_command_line_environment_takes_the_url_from_rivulet_catalog(tmp_path, monkeypatch):
    monkeypatch.setenv("RIVULET_CATALOG", f"sqlite:///{tmp_path / 'from-env.sqlite'}")
    command.upgrade(alembic_config(), "head")
    tables = sqlite3.connect(tmp_path / "from-env.sqlite").execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    assert {name for (name,) in tables} == TABLES | {"alembic_version"}


def test_the_alembic_command_migrates_the_database_given_by_x_url(tmp_path):
    database = tmp_path / "cli.sqlite"
    environment = {name: value for name, value in os.environ.items() if name != "RIVULET_CATALOG"}
    done = subprocess.run(
        [sys.executable, "-m", "alembic", "-x", f"url=sqlite:///{database}", "upgrade", "head"],
        cwd=REPO, env=environment, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    versions = sqlite3.connect(database).execute("SELECT version_num FROM alembic_version").fetchall()
    assert versions == [(HEAD,)]


def test_a_checkout_finds_the_top_level_migrations_folder():
    assert migrations_directory() == REPO / "migrations"
    assert (migrations_directory() / "env.py").is_file()
    assert not (REPO / "engine" / "catalog" / "migrations").exists(), "migrations/ stays at the top level"


# streams and queries


def test_streams_are_listed_by_declaration_and_a_redeclaration_keeps_the_first_lsn(catalog):
    catalog.save_stream("boats", {"iri": "http://example.org/boats", "window": [1, 2]}, 7)
    catalog.save_stream("gauges", {"iri": "http://example.org/gauges"}, 3)
    catalog.save_stream("boats", {"iri": "http://example.org/boats", "window": [3]}, 9)
    assert catalog.streams() == [
        StreamRow("gauges", {"iri": "http://example.org/gauges"}, 3, None, 0),
        StreamRow("boats", {"iri": "http://example.org/boats", "window": [3]}, 7, None, 0),
    ]


def test_a_dropped_stream_stays_until_a_checkpoint_and_its_name_may_be_declared_again(catalog):
    catalog.save_stream("s", {"iri": "http://example.org/s1"}, 3)
    catalog.save_stream("t", {"iri": "http://example.org/t"}, 4)
    catalog.drop_stream("s", 6)
    catalog.drop_stream("s", 6)  # a replay of the log marks it again: nothing changes
    assert [row.name for row in catalog.streams()] == ["t"]
    catalog.save_stream("s", {"iri": "http://example.org/s2"}, 8)
    # a replay of the first declaration (and of a redeclaration before the drop) finds its own row
    catalog.save_stream("s", {"iri": "http://example.org/s1", "timing": ["p"]}, 3)
    catalog.save_stream("s", {"iri": "http://example.org/s1", "timing": ["q"]}, 5)
    assert catalog.streams(include_dropped=True) == [
        StreamRow("s", {"iri": "http://example.org/s1", "timing": ["q"]}, 3, None, 0, 6),
        StreamRow("t", {"iri": "http://example.org/t"}, 4, None, 0),
        StreamRow("s", {"iri": "http://example.org/s2"}, 8, None, 0),
    ]
    # checkpoint 7 saw the first "s" dropped, so its progress goes to "t" only; the new "s" is after it
    catalog.record_checkpoint(7, "/data/cp7", 0, [], {"t": (100, 2)}, {})
    assert [(row.name, row.declared_lsn, row.watermark_ms) for row in catalog.streams(include_dropped=True)] \
        == [("t", 4, 100), ("s", 8, None)]
    with pytest.raises(CatalogError, match="no stream 'u' to drop"):
        catalog.drop_stream("u", 9)


def test_a_checkpoint_between_a_drop_and_the_next_declaration_records_the_old_streams_progress(catalog):
    catalog.save_stream("s", {"iri": "http://example.org/s1"}, 3)
    catalog.drop_stream("s", 6)
    catalog.save_stream("s", {"iri": "http://example.org/s2"}, 8)
    catalog.record_checkpoint(5, "/data/cp5", 0, [], {"s": (1_000, 9)}, {})
    assert [(row.declared_lsn, row.dropped_lsn, row.watermark_ms, row.triples_total)
            for row in catalog.streams(include_dropped=True)] == [(3, 6, 1_000, 9), (8, None, None, 0)]


def test_forgetting_the_log_undrops_a_stream_and_removes_a_later_declaration_of_its_name(catalog):
    catalog.save_stream("s", {"iri": "http://example.org/s1"}, 3)
    catalog.drop_stream("s", 6)
    catalog.save_stream("s", {"iri": "http://example.org/s2"}, 8)
    assert catalog.forget_log_from(6) == (["s"], [], [], ["s"])
    assert catalog.streams(include_dropped=True) == [
        StreamRow("s", {"iri": "http://example.org/s1"}, 3, None, 0)]


def test_a_catalog_of_the_first_schema_is_migrated_with_its_streams(catalog_url, engine):
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0001")
        connection.execute(text("INSERT INTO streams (name, definition, declared_lsn, watermark_ms, "
                                "triples_total) VALUES ('s', '{}', 3, 1000, 5)"))
    with Catalog(catalog_url) as migrated:
        assert migrated.streams() == [StreamRow("s", {}, 3, 1000, 5)]
        migrated.drop_stream("s", 4)
        migrated.save_stream("s", {"iri": "x"}, 5)
        assert [row.dropped_lsn for row in migrated.streams(include_dropped=True)] == [4, None]
    with engine.begin() as connection:  # back to the first schema: the dropped row goes
        command.downgrade(alembic_config(connection), "0001")
        assert list(connection.execute(text("SELECT name, declared_lsn FROM streams"))) == [("s", 5)]


def test_queries_are_listed_by_registration_and_dropped_ones_only_when_asked(catalog):
    catalog.save_query("later", "ASK {}", None, 8)
    catalog.save_query("first", "SELECT * WHERE { ?s ?p ?o }", "http://example.org/", 2)
    catalog.save_query("gone", "ASK {}", None, 5)
    catalog.drop_query("gone", 6)
    assert [row.name for row in catalog.queries()] == ["first", "later"]
    assert catalog.queries(include_dropped=True) == [
        QueryRow("first", "SELECT * WHERE { ?s ?p ?o }", "http://example.org/", 2, None, None, 0, None, None),
        QueryRow("gone", "ASK {}", None, 5, 6, None, 0, None, None),
        QueryRow("later", "ASK {}", None, 8, None, None, 0, None, None),
    ]


def test_saving_a_query_again_is_a_new_registration(catalog):
    _with_a_dropped_query_and_progress(catalog)
    catalog.save_query("old", "SELECT ?x WHERE { ?x ?y ?z }", None, 30)
    catalog.save_query("levels", "ASK { ?a ?b ?c }", None, 31)
    assert catalog.queries() == [
        QueryRow("old", "SELECT ?x WHERE { ?x ?y ?z }", None, 30, None, None, 0, None, None),
        QueryRow("levels", "ASK { ?a ?b ?c }", None, 31, None, None, 0, None, None),
    ]


def test_dropping_an_unknown_query_is_an_error(catalog):
    with pytest.raises(CatalogError, match="no query 'nothing'"):
        catalog.drop_query("nothing", 3)


# checkpoints


def test_a_checkpoint_records_the_progress_of_streams_and_queries_and_the_graph_names(catalog):
    _with_a_dropped_query_and_progress(catalog)
    assert catalog.streams() == [
        StreamRow("gauges", {"iri": "http://example.org/gauges"}, 1, 1_000, 5),
        StreamRow("boats", {"iri": "http://example.org/boats"}, 2, None, 0),
    ]
    (levels,) = catalog.queries()
    assert (levels.next_index, levels.sequence, levels.policy_state, levels.events) == (
        2, 7, b"state-10", b"events-10")
    assert catalog.graphs() == ["http://example.org/g1"]
    catalog.record_checkpoint(11, "/data/cp11", 90, ["http://example.org/g3", "http://example.org/g2"],
                              {}, {})
    assert catalog.graphs() == ["http://example.org/g2", "http://example.org/g3"]
    assert catalog.last_checkpoint().triples == 90


def test_a_checkpoint_purges_the_queries_dropped_at_or_before_it(catalog):
    _with_a_dropped_query_and_progress(catalog)
    catalog.record_checkpoint(19, "/data/cp19", 100, [], {}, {"levels": (3, 8, None, None)})
    assert [row.name for row in catalog.queries(include_dropped=True)] == ["levels", "old"]
    catalog.record_checkpoint(20, "/data/cp20", 100, [], {}, {"levels": (4, 9, None, None)})
    assert [(row.name, row.sequence) for row in catalog.queries(include_dropped=True)] == [("levels", 9)]


def test_progress_taken_before_a_query_was_registered_again_is_not_applied_to_it(catalog):
    _with_a_dropped_query_and_progress(catalog)
    catalog.save_query("levels", "ASK { ?a ?b ?c }", None, 40)
    catalog.record_checkpoint(35, "/data/cp35", 100, [], {}, {"levels": (9, 99, b"stale", b"stale")})
    (levels,) = catalog.queries()
    assert (levels.registered_lsn, levels.next_index, levels.sequence, levels.policy_state) \
        == (40, None, 0, None)


@pytest.mark.parametrize("failure", ["constraint", "unknown query", "raised inside"])
def test_a_checkpoint_that_fails_half_way_leaves_nothing_behind(catalog, monkeypatch, failure):
    _with_a_dropped_query_and_progress(catalog)
    before = _everything(catalog)
    queries = {"levels": (5, 50, b"state-30", b"events-30")}
    if failure == "constraint":  # the database refuses a negative sequence, after the other writes ran
        queries["old"] = (None, -1, None, None)
    elif failure == "unknown query":
        queries["never-registered"] = (None, 0, None, None)
    else:
        def boom(*_args):
            raise CatalogError("the disk went away")
        monkeypatch.setattr(Catalog, "_row", boom)
    with pytest.raises(CatalogError):
        catalog.record_checkpoint(30, "/data/cp30", 120, ["http://example.org/g9"], {"gauges": (9_000, 9)},
                                  queries)
    assert _everything(catalog) == before
    assert catalog.last_checkpoint().lsn == 10
    assert [row.name for row in catalog.queries(include_dropped=True)] == ["levels", "old"]


def test_a_checkpoint_may_not_be_recorded_twice(catalog):
    catalog.record_checkpoint(10, "/data/cp10", 1, [], {}, {})
    with pytest.raises(CatalogError, match="recording checkpoint 10 failed"):
        catalog.record_checkpoint(10, "/data/other", 2, [], {}, {})
    assert [row.directory for row in catalog.checkpoints()] == ["/data/cp10"]


def test_the_last_checkpoint_is_the_highest_lsn_whatever_the_order_of_recording(catalog):
    assert catalog.last_checkpoint() is None
    assert catalog.checkpoints() == []
    for lsn in (30, 10, 20):
        catalog.record_checkpoint(lsn, f"/data/cp{lsn}", lsn * 2, [], {}, {})
    last = catalog.last_checkpoint()
    assert (last.lsn, last.directory, last.triples) == (30, "/data/cp30", 60)
    assert [row.lsn for row in catalog.checkpoints()] == [10, 20, 30]
    assert all(isinstance(row, CheckpointRow) and row.created_at > 1e9 for row in catalog.checkpoints())


def test_forgetting_checkpoints_returns_their_directories_for_removal(catalog):
    for lsn in (10, 20, 30):
        catalog.record_checkpoint(lsn, f"/data/cp{lsn}", 0, [], {}, {})
    assert catalog.forget_checkpoints_before(30) == ["/data/cp10", "/data/cp20"]
    assert [row.lsn for row in catalog.checkpoints()] == [30]
    assert catalog.forget_checkpoints_before(30) == []
    assert catalog.last_checkpoint().lsn == 30


def test_a_reopened_catalog_sees_everything_committed(catalog_url):
    with Catalog(catalog_url) as first:
        _with_a_dropped_query_and_progress(first)
        expected = (first.streams(), first.queries(include_dropped=True), first.checkpoints(), first.graphs())
    with Catalog(catalog_url) as again:
        assert (again.streams(), again.queries(include_dropped=True), again.checkpoints(), again.graphs()) \
            == expected
        assert again.queries()[0].events == b"events-10"
        assert again.queries(include_dropped=True)[1].dropped_lsn == 20


# opening


def test_the_catalog_of_a_data_directory_is_a_durable_sqlite_file(tmp_path):
    with Catalog.for_directory(tmp_path) as catalog:
        catalog.save_stream("gauges", {}, 1)
        assert catalog.url == f"sqlite:///{tmp_path.resolve() / 'catalog.sqlite'}"
    assert sqlite3.connect(tmp_path / "catalog.sqlite").execute("PRAGMA journal_mode").fetchone() == ("wal",)
    engine = open_engine(f"sqlite:///{tmp_path / 'catalog.sqlite'}")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
    engine.dispose()


@pytest.fixture
def closed_port():
    """A loopback port held bound, not listening, for the test: connections are refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


@pytest.mark.parametrize("url, says", [
    ("mysql://rivulet:s3cret@db.example.org/rivulet", "'mysql' is not supported"),
    ("postgresql+psycopg://rivulet:s3cret@127.0.0.1:{port}/rivulet", "cannot open catalog"),
    ("postgresql://rivulet:s3cret@127.0.0.1:{port}/rivulet", "cannot open catalog"),
    ("sqlite://", "names no file"),
    ("not a url at all :s3cret@", "is not a database URL"),
])
def test_a_url_that_cannot_be_used_is_a_catalog_error_without_the_password(url, says, closed_port):
    url = url.format(port=closed_port)
    with pytest.raises(CatalogError, match=says) as raised:
        Catalog(url)
    assert "s3cret" not in str(raised.value)
    if "@127.0.0.1" in url:
        assert "rivulet:***@127.0.0.1" in str(raised.value)


def test_a_sqlite_file_in_a_missing_directory_is_a_catalog_error(tmp_path):
    with pytest.raises(CatalogError, match="cannot open catalog sqlite:///"):
        Catalog(f"sqlite:///{tmp_path / 'missing' / 'catalog.sqlite'}")
