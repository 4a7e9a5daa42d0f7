"""The catalog's tables as SQLAlchemy models.

These describe the schema that ``migrations/`` builds; the migrations are
written by hand and are what creates the tables, and a test compares the two
so they cannot drift apart. Constraint names come from one naming convention
so that they are the same on SQLite and PostgreSQL (and a later migration can
refer to them by name). Counts are never negative: a CHECK says so, so a
corrupt progress record fails its checkpoint instead of being stored.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, CheckConstraint, Double, LargeBinary, MetaData, String, Text, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAME_LENGTH = 200
#: the server-side default of the counters (a module constant: ``Query.text`` shadows ``text`` in its class)
ZERO = text("0")

NAMING_CONVENTION = {
    "pk": "pk_%(table_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ix": "ix_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
}


class Base(DeclarativeBase):
    """The catalog's declarative base, carrying the naming convention."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Stream(Base):
    """A declared stream; ``definition`` is the caller's dict as JSON text (the same on every backend).

    A row is one declaration of a name, from ``declared_lsn`` until
    ``dropped_lsn``: a dropped stream's row stays until a checkpoint at or
    after its drop (a replay of the log still finds it), so a name declared
    again meanwhile has two rows, told apart by their declaration's LSN.
    """

    __tablename__ = "streams"
    __table_args__ = (CheckConstraint("triples_total >= 0", name="triples_total_not_negative"),)

    name: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    definition: Mapped[str] = mapped_column(Text)
    declared_lsn: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    watermark_ms: Mapped[int | None] = mapped_column(BigInteger)
    triples_total: Mapped[int] = mapped_column(BigInteger, default=0, server_default=ZERO)
    dropped_lsn: Mapped[int | None] = mapped_column(BigInteger)


class Query(Base):
    """A registered continuous query; the blobs are opaque to the catalog."""

    __tablename__ = "queries"
    __table_args__ = (
        CheckConstraint("sequence >= 0", name="sequence_not_negative"),
        CheckConstraint("next_index >= 0", name="next_index_not_negative"),
    )

    name: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    base: Mapped[str | None] = mapped_column(Text)
    registered_lsn: Mapped[int] = mapped_column(BigInteger)
    dropped_lsn: Mapped[int | None] = mapped_column(BigInteger)
    next_index: Mapped[int | None] = mapped_column(BigInteger)
    sequence: Mapped[int] = mapped_column(BigInteger, default=0, server_default=ZERO)
    policy_state: Mapped[bytes | None] = mapped_column(LargeBinary)
    events: Mapped[bytes | None] = mapped_column(LargeBinary)


class Graph(Base):
    """The name of a named graph as of the last checkpoint."""

    __tablename__ = "graphs"

    name: Mapped[str] = mapped_column(Text, primary_key=True)


class Checkpoint(Base):
    """A checkpoint taken; ``created_at`` is in seconds since the epoch."""

    __tablename__ = "checkpoints"
    __table_args__ = (CheckConstraint("triples >= 0", name="triples_not_negative"),)

    lsn: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    directory: Mapped[str] = mapped_column(Text)
    created_at: Mapped[float] = mapped_column(Double)
    triples: Mapped[int] = mapped_column(BigInteger)


class Token(Base):
    """An update token, stored only as a hash (schema only for now)."""

    __tablename__ = "tokens"

    name: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(255))
