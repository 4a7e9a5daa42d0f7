"""Opening the catalog's database: URL checks, durable SQLite settings, migrations to head.

SQLite is the embedded default and PostgreSQL is chosen by URL; anything else
is refused up front with a :class:`CatalogError` that names the URL without
its password, rather than with a driver traceback that may carry it.

SQLite gets WAL journaling and ``synchronous=FULL`` on every connection, so a
commit that returned survives a power cut. SQLAlchemy, not the ``sqlite3``
module, emits ``BEGIN IMMEDIATE`` for each transaction: ``sqlite3``'s legacy
mode would run DDL and reads outside any transaction (so a migration would
not be atomic), and taking the write lock at the start means a transaction
that reads then writes never fails half way on a lock upgrade.

The migrations live in the checkout's top-level ``migrations/``; a wheel
installs that folder as ``engine/catalog/migrations`` (the ``package-dir``
mapping in pyproject.toml). :func:`migrations_directory` looks for the
installed copy first: a checkout never has ``engine/catalog/migrations``.
"""

from __future__ import annotations

import re
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

from engine.catalog.rows import CatalogError

#: seconds a PostgreSQL connection attempt may take before the catalog gives up
CONNECT_TIMEOUT = 10
#: seconds a SQLite transaction waits for another one's write lock (a checkpoint's, say) before failing
SQLITE_BUSY_TIMEOUT = 30
#: the key of the PostgreSQL advisory lock that serialises migrations across processes
MIGRATION_LOCK = 0x52495655  # "RIVU"
_USER_PASSWORD = re.compile(r"(://[^:/@]*:)[^@]*@")
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&]*", re.IGNORECASE)


def hide_password(url: str | URL) -> str:
    """The URL as text with its password (in the user part or the query) shown as ``***``."""
    if not isinstance(url, URL):
        try:
            url = make_url(url)
        except (ArgumentError, ValueError):
            return _hide_in_text(url)
    if "password" in url.query:
        url = url.update_query_dict({"password": "***"})
    return url.render_as_string(hide_password=True)


def _hide_in_text(url: str) -> str:
    """A URL SQLAlchemy cannot parse, with whatever sits where a password would be masked."""
    shown = _USER_PASSWORD.sub(r"\1***@", url)
    shown = _QUERY_PASSWORD.sub(r"\1***", shown)
    return shown if "://" in shown else "(not a URL)"


def error_text(error: BaseException, url: URL) -> str:
    """A driver's message for an error, one line, with the URL's password (if any) blanked out."""
    original = getattr(error, "orig", None) or error
    text = " ".join(str(original).split()) or type(original).__name__
    for secret in (url.password, url.query.get("password")):
        if isinstance(secret, str) and secret:
            text = text.replace(secret, "***")
    return text


def catalog_url(url: str) -> URL:
    """The parsed URL, checked to be a durable SQLite file or a PostgreSQL server.

    A bare ``postgresql://`` means psycopg 3 (the driver Rivulet depends on)
    rather than SQLAlchemy's default psycopg2, which is not installed.
    """
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as error:
        raise CatalogError(f"catalog URL {hide_password(url)} is not a database URL") from error
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            raise CatalogError(f"catalog URL {hide_password(parsed)} names no file: "
                               "the catalog must be durable")
        return parsed
    if backend == "postgresql":
        return parsed.set(drivername="postgresql+psycopg") if parsed.drivername == "postgresql" else parsed
    raise CatalogError(
        f"catalog URL {hide_password(parsed)}: '{backend}' is not supported "
        "(use sqlite:///PATH or postgresql+psycopg://USER@HOST:PORT/DATABASE)")


def _make_sqlite_durable(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself, below
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def open_engine(url: str) -> Engine:
    """An engine for a catalog URL (see :func:`catalog_url`); it connects lazily."""
    parsed = catalog_url(url)
    if parsed.get_backend_name() == "postgresql":
        options: dict = {"connect_args": {"connect_timeout": CONNECT_TIMEOUT}, "pool_pre_ping": True}
    else:
        options = {"connect_args": {"timeout": SQLITE_BUSY_TIMEOUT}}
    try:
        engine = create_engine(parsed, **options)
    except (ArgumentError, NoSuchModuleError, ImportError) as error:
        reason = error_text(error, parsed)
        raise CatalogError(f"catalog URL {hide_password(parsed)} cannot be used: {reason}") from error
    if engine.dialect.name == "sqlite":
        _make_sqlite_durable(engine)
    return engine


def migrations_directory() -> Path:
    """The Alembic environment: installed beside this module, else the checkout's ``migrations/``."""
    package = Path(__file__).resolve().parent
    installed = package / "migrations"
    return installed if installed.is_dir() else package.parents[1] / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic configuration built in code (no alembic.ini), optionally bound to a connection."""
    config = Config()
    # the option goes through configparser interpolation: a '%' in the path must be doubled
    config.set_main_option("script_location", str(migrations_directory()).replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade_to_head(engine: Engine) -> None:
    """Apply every migration not yet applied, in one transaction (DDL is transactional on both backends).

    On PostgreSQL an advisory lock makes concurrent first starts take turns; on
    SQLite, ``BEGIN IMMEDIATE`` already does.
    """
    try:
        with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            command.upgrade(alembic_config(connection), "head")
    except SQLAlchemyError as error:
        reason = error_text(error, engine.url)
        raise CatalogError(f"cannot open catalog {hide_password(engine.url)}: {reason}") from error
    except CommandError as error:
        # typically a revision this version does not know: the database was written by a newer Rivulet
        raise CatalogError(f"cannot migrate catalog {hide_password(engine.url)}: {error}") from error
