"""Every catalog test runs twice: on a SQLite file and on a real PostgreSQL server.

The server is started once per session (tests/postgres_server.py) and each
test gets a new database on it, as each gets a new SQLite file, so tests see
an empty catalog and never each other's rows. Without PostgreSQL binaries the
PostgreSQL half skips, saying why (``-ra`` lists the reason).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tests.postgres_server import new_database, running_postgres, why_no_postgres

_databases = itertools.count()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a database on a PostgreSQL server that lives as long as the test session."""
    reason = why_no_postgres()
    if reason:
        print(f"skipping the PostgreSQL tests: {reason}")
        pytest.skip(reason)
    with running_postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def catalog_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """A URL where no catalog exists yet, on each backend in turn."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'catalog.sqlite'}"
    return new_database(request.getfixturevalue("postgres_server"), f"catalog_{next(_databases)}")
