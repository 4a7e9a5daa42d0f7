"""A throwaway PostgreSQL server for tests, from the machine's own PostgreSQL binaries.

Tests that need a real server (the catalog's, and any later ones) start one
with :func:`running_postgres`: a new cluster in a temporary directory,
listening on 127.0.0.1 on a free port with its Unix socket inside that
directory, ``trust`` authentication, a database made for the tests; stopped
(``pg_ctl stop -m fast``) and deleted on exit. Nothing is installed or
configured system-wide, and no server of the machine is touched.

``initdb`` refuses to run as root, and tests run as root in CI: then the
cluster belongs to the ``postgres`` system user (made by Debian's package) and
the binaries run as that user through ``runuser`` (or ``su``). The binaries
are looked up in ``$RIVULET_PG_BINDIR``, ``pg_config --bindir``, the newest
``/usr/lib/postgresql/*/bin`` (Debian keeps them off ``PATH``), then ``PATH``.
:func:`why_no_postgres` says, before anything is started, why this machine
cannot do it, so fixtures can skip with that reason.
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

SERVER_USER = "postgres"
DATABASE = "rivulet_test"
BINARIES = ("initdb", "pg_ctl", "postgres")
START_SECONDS = 60
STOP_SECONDS = 30
PORT_ATTEMPTS = 3


class PostgresUnavailable(Exception):
    """This machine cannot run a test server; the message says why."""


def _has_binaries(folder: Path) -> bool:
    return all(os.access(folder / name, os.X_OK) for name in BINARIES)


def _candidate_bindirs() -> Iterator[Path]:
    if os.environ.get("RIVULET_PG_BINDIR"):
        yield Path(os.environ["RIVULET_PG_BINDIR"])
    if shutil.which("pg_config"):
        done = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip():
            yield Path(done.stdout.strip())
    debian = [path for path in Path("/usr/lib/postgresql").glob("*/bin") if path.parent.name.isdigit()]
    yield from sorted(debian, key=lambda path: int(path.parent.name), reverse=True)
    if shutil.which("initdb"):
        yield Path(shutil.which("initdb")).resolve().parent


def find_bindir() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, None when this machine has none."""
    return next((folder for folder in _candidate_bindirs() if _has_binaries(folder)), None)


def why_no_postgres() -> str | None:
    """Why :func:`running_postgres` cannot work here, or None when it can."""
    if find_bindir() is None:
        return ("no PostgreSQL server binaries (initdb, pg_ctl, postgres) were found; "
                "install Debian's 'postgresql' package (.ci/run does) or set RIVULET_PG_BINDIR")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return f"running as root, and there is no '{SERVER_USER}' user to run initdb as (it refuses root)"
        if not (shutil.which("runuser") or shutil.which("su")):
            return f"running as root, and neither runuser nor su is there to run initdb as '{SERVER_USER}'"
    return None


def _as_server_user(command: list[str]) -> list[str]:
    """The command as it must be run: as ``postgres`` when we are root, else as it is."""
    if os.geteuid() != 0:
        return command
    if shutil.which("runuser"):
        return ["runuser", "-u", SERVER_USER, "--", *command]
    return ["su", SERVER_USER, "-s", "/bin/sh", "-c", shlex.join(command)]


def _run(command: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(_as_server_user(command), cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _work_directory() -> Path:
    """A new temporary directory the server's user owns (under /tmp when root, which it can reach)."""
    work = Path(tempfile.mkdtemp(prefix="rivulet-pg-", dir="/tmp" if os.geteuid() == 0 else None))
    if os.geteuid() == 0:
        account = pwd.getpwnam(SERVER_USER)
        os.chown(work, account.pw_uid, account.pw_gid)
    return work


def _log_tail(log: Path, lines: int = 20) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


def _start(bindir: Path, work: Path) -> int:
    """Start the cluster in ``work/data`` on a free port (trying another if it was taken meanwhile)."""
    data, log, sockets = work / "data", work / "server.log", work / "sockets"
    failure = ""
    for _ in range(PORT_ATTEMPTS):
        port = _free_port()
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {shlex.quote(str(sockets))}"
        done = _run([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", str(START_SECONDS),
                     "-o", options, "start"], work, START_SECONDS + 10)
        if done.returncode == 0:
            return port
        failure = f"{done.stdout}{done.stderr}\n{_log_tail(log)}"
        if not re.search(r"could not (bind|create listen)|address already in use", failure, re.IGNORECASE):
            break
    raise RuntimeError(f"the test PostgreSQL server did not start:\n{failure}")


def new_database(server_url: str, name: str) -> str:
    """Create database ``name`` on the server of ``server_url`` (a URL :func:`running_postgres`
    gave) and return the new database's URL: a test that needs an empty database gets its own."""
    url = make_url(server_url)
    with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname="postgres",
                         autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return url.set(database=name).render_as_string(hide_password=False)


@contextmanager
def running_postgres(database: str = DATABASE) -> Iterator[str]:
    """A new PostgreSQL server for the duration of the block; yields the SQLAlchemy URL of a
    new, empty database on it (``postgresql+psycopg://postgres@127.0.0.1:PORT/DATABASE``).

    Raises :class:`PostgresUnavailable` when this machine cannot run one (see :func:`why_no_postgres`).
    """
    reason = why_no_postgres()
    if reason:
        raise PostgresUnavailable(reason)
    bindir = find_bindir()
    work = _work_directory()
    started = False
    try:
        (work / "sockets").mkdir()
        if os.geteuid() == 0:
            account = pwd.getpwnam(SERVER_USER)
            os.chown(work / "sockets", account.pw_uid, account.pw_gid)
        done = _run([str(bindir / "initdb"), "-D", str(work / "data"), "-A", "trust", "-U", SERVER_USER,
                     "-E", "UTF8", "--locale=C", "--no-sync"], work, START_SECONDS)
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{done.stdout}{done.stderr}")
        port = _start(bindir, work)
        started = True
        yield new_database(f"postgresql+psycopg://{SERVER_USER}@127.0.0.1:{port}/postgres", database)
    finally:
        if started:
            _run([str(bindir / "pg_ctl"), "-D", str(work / "data"), "-m", "fast", "-w",
                  "-t", str(STOP_SECONDS), "stop"], work, STOP_SECONDS + 10)
        shutil.rmtree(work, ignore_errors=True)
