"""Alembic's environment for the catalog.

At run time :class:`engine.catalog.Catalog` passes its own connection, already
inside a transaction, in ``config.attributes["connection"]``, so a migration
runs with the catalog's settings (SQLite's WAL and ``BEGIN IMMEDIATE``) and
commits or rolls back whole. From the command line, which needs no
alembic.ini (pyproject.toml's ``[tool.alembic]`` names this folder), the
database comes from ``-x url=...`` or else the ``RIVULET_CATALOG`` variable:

    RIVULET_CATALOG=sqlite:///data/catalog.sqlite alembic upgrade head
    alembic -x url=postgresql+psycopg://rivulet@db/rivulet upgrade head
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection

from engine.catalog.connection import catalog_url, open_engine
from engine.catalog.models import Base

config = context.config
#: the models, for ``alembic revision --autogenerate`` to compare with the database
target_metadata = Base.metadata


def _url() -> str:
    url = (context.get_x_argument(as_dictionary=True).get("url") or os.environ.get("RIVULET_CATALOG")
           or config.get_main_option("sqlalchemy.url"))
    if not url:
        raise SystemExit("no catalog database: pass -x url=URL or set RIVULET_CATALOG")
    return url


def _migrate(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


def run_offline() -> None:
    """Print the SQL instead of running it (``alembic upgrade head --sql``)."""
    context.configure(url=catalog_url(_url()), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    """Migrate the catalog's own connection, or a database named on the command line in one transaction."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _migrate(connection)
        return
    engine = open_engine(_url())
    try:
        with engine.begin() as connection:
            _migrate(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
