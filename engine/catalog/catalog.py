"""The catalog: everything durable that is not triples, in a SQL database.

Streams, continuous queries, the names of the named graphs and the list of
checkpoints live here rather than in the store's files because they change
by the row, need transactions (a checkpoint's bookkeeping must land whole or
not at all), and may be shared with tools that speak SQL. The store writes a
checkpoint's files first, then :meth:`Catalog.record_checkpoint` makes it
count: a crash in between leaves a directory no row names, never a row that
names a missing directory.

Every method runs one transaction and returns plain frozen rows; database
errors come out as :class:`CatalogError`, with the URL's password hidden.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import delete, insert, or_, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from engine.catalog.connection import error_text, hide_password, open_engine, upgrade_to_head
from engine.catalog.models import Checkpoint, Graph, Query, Stream, Token
from engine.catalog.rows import CatalogError, CheckpointRow, QueryRow, StreamRow

#: the catalog's file inside a data directory (see :meth:`Catalog.for_directory`)
CATALOG_FILE = "catalog.sqlite"

#: every table, in the order a copy inserts them
TABLES = (Stream, Query, Graph, Checkpoint, Token)

#: a stream's progress at a checkpoint: (watermark in ms or None, triples so far)
StreamProgress = tuple[int | None, int]
#: a query's progress at a checkpoint: (next window index or None: the next instant over the
#: query's clock unit, its STEP with one STEP; sequence, policy state, events)
QueryProgress = tuple[int | None, int, bytes | None, bytes | None]


class Catalog:
    """The catalog at a SQLAlchemy URL, migrated to the current schema when opened.

    ``sqlite:///PATH`` is the embedded default; ``postgresql+psycopg://...``
    (or plain ``postgresql://``) puts it on a server.
    """

    def __init__(self, url: str) -> None:
        self._engine = open_engine(url)
        try:
            upgrade_to_head(self._engine)
        except BaseException:
            self._engine.dispose()
            raise
        self._sessions = sessionmaker(self._engine, expire_on_commit=False)

    @classmethod
    def for_directory(cls, data_dir: Path) -> Catalog:
        """The SQLite catalog kept beside a store's files, in ``<data_dir>/catalog.sqlite``."""
        return cls(f"sqlite:///{Path(data_dir).resolve() / CATALOG_FILE}")

    @property
    def url(self) -> str:
        """The catalog's URL with the password hidden: safe to log."""
        return hide_password(self._engine.url)

    def close(self) -> None:
        """Close every pooled connection; the catalog cannot be used afterwards."""
        self._engine.dispose()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self, doing: str) -> Iterator[Session]:
        """One committed-or-rolled-back transaction; database errors become CatalogError."""
        try:
            with self._sessions.begin() as session:
                yield session
        except SQLAlchemyError as error:
            raise CatalogError(f"catalog {self.url}: {doing} failed: {error_text(error, self._engine.url)}") \
                from error

    # streams

    def save_stream(self, name: str, definition: dict[str, Any], lsn: int) -> None:
        """Declare a stream at ``lsn``, or replace the definition of the
        declaration of ``name`` in force then; a redeclaration keeps the first
        ``declared_lsn`` (and the progress), since replaying the log declares
        streams again."""
        text = json.dumps(definition, sort_keys=True, separators=(",", ":"))
        with self._transaction(f"saving stream {name!r}") as session:
            row = self._stream_at(session, name, lsn)
            if row is None:
                session.add(Stream(name=name, definition=text, declared_lsn=lsn, triples_total=0))
            else:
                row.definition = text

    def drop_stream(self, name: str, lsn: int) -> None:
        """Mark the declaration of ``name`` in force before ``lsn`` dropped at
        ``lsn``; the row stays until a checkpoint at or after that LSN.
        Marking it again (a replay of the log) changes nothing."""
        with self._transaction(f"dropping stream {name!r}") as session:
            row = self._stream_at(session, name, lsn - 1)
            if row is None:
                raise CatalogError(f"catalog {self.url}: no stream {name!r} to drop")
            row.dropped_lsn = lsn

    @staticmethod
    def _stream_at(session: Session, name: str, lsn: int) -> Stream | None:
        """The row of the declaration of ``name`` in force at ``lsn`` (declared
        at or before it, not dropped by then), or None."""
        return session.scalars(
            select(Stream).where(Stream.name == name, Stream.declared_lsn <= lsn,
                                 or_(Stream.dropped_lsn.is_(None), Stream.dropped_lsn > lsn))
            .order_by(Stream.declared_lsn.desc()).limit(1)).first()

    def streams(self, include_dropped: bool = False) -> list[StreamRow]:
        """The declared streams, oldest declaration first; dropped ones only when asked."""
        statement = select(Stream).order_by(Stream.declared_lsn, Stream.name)
        if not include_dropped:
            statement = statement.where(Stream.dropped_lsn.is_(None))
        with self._transaction("reading streams") as session:
            return [
                StreamRow(row.name, json.loads(row.definition), row.declared_lsn, row.watermark_ms,
                          row.triples_total, row.dropped_lsn)
                for row in session.scalars(statement)
            ]

    # queries

    def save_query(self, name: str, text: str, base: str | None, lsn: int) -> None:
        """Register a query. A name saved again is a new registration: its text, LSN and progress
        start over, and a pending drop is forgotten."""
        with self._transaction(f"saving query {name!r}") as session:
            row = session.get(Query, name)
            if row is None:
                session.add(Query(name=name, text=text, base=base, registered_lsn=lsn, sequence=0))
                return
            row.text, row.base, row.registered_lsn, row.dropped_lsn = text, base, lsn, None
            row.next_index, row.sequence, row.policy_state, row.events = None, 0, None, None

    def drop_query(self, name: str, lsn: int) -> None:
        """Mark a query unregistered at ``lsn``; the row stays until a checkpoint at or after that LSN."""
        with self._transaction(f"dropping query {name!r}") as session:
            row = session.get(Query, name)
            if row is None:
                raise CatalogError(f"catalog {self.url}: no query {name!r} to drop")
            row.dropped_lsn = lsn

    def queries(self, include_dropped: bool = False) -> list[QueryRow]:
        """The registered queries, oldest registration first; dropped ones only when asked."""
        statement = select(Query).order_by(Query.registered_lsn, Query.name)
        if not include_dropped:
            statement = statement.where(Query.dropped_lsn.is_(None))
        with self._transaction("reading queries") as session:
            return [
                QueryRow(row.name, row.text, row.base, row.registered_lsn, row.dropped_lsn, row.next_index,
                         row.sequence, row.policy_state, row.events)
                for row in session.scalars(statement)
            ]

    def forget_log_from(self, lsn: int) -> tuple[list[str], list[str], list[str], list[str]]:
        """Forget what log records at or after ``lsn`` did here, since the log no
        longer holds them (they were never acknowledged, or ``rivulet recover``
        cut them): streams declared and queries registered at or after it go,
        streams and queries dropped at or after it are declared and registered
        again. Returns the names of (streams removed, queries removed, queries
        undropped, streams undropped)."""
        with self._transaction(f"forgetting the log from LSN {lsn}") as session:
            streams = list(session.scalars(select(Stream.name).where(Stream.declared_lsn >= lsn)))
            queries = list(session.scalars(select(Query.name).where(Query.registered_lsn >= lsn)))
            undropped = list(session.scalars(select(Query.name).where(
                Query.dropped_lsn >= lsn, Query.registered_lsn < lsn)))
            redeclared = list(session.scalars(select(Stream.name).where(
                Stream.dropped_lsn >= lsn, Stream.declared_lsn < lsn)))
            session.execute(delete(Stream).where(Stream.declared_lsn >= lsn))
            session.execute(delete(Query).where(Query.registered_lsn >= lsn))
            session.execute(update(Query).where(Query.dropped_lsn >= lsn).values(dropped_lsn=None))
            session.execute(update(Stream).where(Stream.dropped_lsn >= lsn).values(dropped_lsn=None))
            return sorted(streams), sorted(queries), sorted(undropped), sorted(redeclared)

    # checkpoints

    def record_checkpoint(self, lsn: int, directory: str, triples: int, graphs: list[str],
                          streams: Mapping[str, StreamProgress],
                          queries: Mapping[str, QueryProgress]) -> None:
        """Make a checkpoint count, all in one transaction: its row, the graph names, each stream's
        and query's progress, and the purge of streams and queries dropped at or before ``lsn``.

        A query registered after ``lsn`` is a newer registration than the one the
        progress was taken from, so its row is left alone. A stream or query the
        catalog does not hold is an error (the whole checkpoint is rolled back).
        """
        with self._transaction(f"recording checkpoint {lsn}") as session:
            session.add(Checkpoint(lsn=lsn, directory=directory, created_at=time.time(), triples=triples))
            session.flush()
            session.execute(delete(Graph))
            if graphs:
                session.execute(insert(Graph), [{"name": name} for name in sorted(set(graphs))])
            for name, (watermark_ms, triples_total) in streams.items():
                stream = self._stream_at(session, name, lsn)
                if stream is None:
                    raise CatalogError(f"catalog {self.url}: checkpoint {lsn} names stream {name!r}, which "
                                       "the catalog does not hold")
                stream.watermark_ms, stream.triples_total = watermark_ms, triples_total
            for name, (next_index, sequence, policy_state, events) in queries.items():
                query = self._row(session, Query, name, lsn)
                if query.registered_lsn <= lsn:
                    query.next_index, query.sequence = next_index, sequence
                    query.policy_state, query.events = policy_state, events
            session.flush()
            session.execute(delete(Query).where(Query.dropped_lsn <= lsn))
            session.execute(delete(Stream).where(Stream.dropped_lsn <= lsn))

    def _row(self, session: Session, model: type[Query], name: str, lsn: int) -> Any:
        row = session.get(model, name)
        if row is None:
            raise CatalogError(f"catalog {self.url}: checkpoint {lsn} names {model.__tablename__} "
                               f"entry {name!r}, which the catalog does not hold")
        return row

    def graphs(self) -> list[str]:
        """The named graphs' names as of the last checkpoint, sorted."""
        with self._transaction("reading graphs") as session:
            return list(session.scalars(select(Graph.name).order_by(Graph.name)))

    def last_checkpoint(self) -> CheckpointRow | None:
        """The checkpoint with the highest LSN, None before the first."""
        with self._transaction("reading the last checkpoint") as session:
            row = session.scalars(select(Checkpoint).order_by(Checkpoint.lsn.desc()).limit(1)).first()
            return None if row is None else _checkpoint_row(row)

    def checkpoints(self) -> list[CheckpointRow]:
        """Every recorded checkpoint, lowest LSN first."""
        with self._transaction("reading checkpoints") as session:
            rows = session.scalars(select(Checkpoint).order_by(Checkpoint.lsn))
            return [_checkpoint_row(row) for row in rows]

    def forget_checkpoints_before(self, lsn: int) -> list[str]:
        """Delete the checkpoints below ``lsn`` and return their directories, lowest LSN first,
        for the caller to remove (after this commit, so no row ever names a removed directory)."""
        with self._transaction(f"forgetting checkpoints before {lsn}") as session:
            older = Checkpoint.lsn < lsn
            directories = list(session.scalars(
                select(Checkpoint.directory).where(older).order_by(Checkpoint.lsn)))
            session.execute(delete(Checkpoint).where(older))
            return directories


    # copies

    def export_rows(self) -> dict[str, list[dict[str, Any]]]:
        """Every row of every table, as column -> value, read in one transaction
        (on PostgreSQL at REPEATABLE READ, so all from one snapshot): a
        consistent copy of the catalog (``rivulet backup``)."""
        with self._transaction("reading every row") as session:
            if self._engine.dialect.name == "postgresql":
                session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            return {model.__tablename__: [{column.key: getattr(row, column.key)
                                           for column in model.__mapper__.column_attrs}
                                          for row in session.scalars(select(model))]
                    for model in TABLES}

    def import_rows(self, rows: Mapping[str, list[dict[str, Any]]]) -> None:
        """Insert rows as :meth:`export_rows` gives them, all in one transaction
        (into an empty catalog: a key already there is an error)."""
        with self._transaction("writing copied rows") as session:
            for model in TABLES:
                if rows.get(model.__tablename__):
                    session.execute(insert(model), rows[model.__tablename__])


def _checkpoint_row(row: Checkpoint) -> CheckpointRow:
    return CheckpointRow(row.lsn, row.directory, row.created_at, row.triples)
