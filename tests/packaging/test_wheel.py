"""A wheel built from the checkout, installed into a new virtual environment,
serves the console at ``/`` and the demo dataset of ``make run``.

The wheel is built from a copy of the checkout (so the build leaves no
``build/`` or ``*.egg-info`` behind in it) with the setuptools of the running
environment and no build isolation: nothing is downloaded. The new
environment is made without pip and sees the running environment's
site-packages through a ``.pth`` file, for the dependencies only: Rivulet
itself comes from the wheel, which the test checks before serving. The
server runs ``rivulet serve --demo`` from a directory outside the checkout,
without ``PYTHONPATH``, so nothing can be found through the checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
#: what the wheel is built from: the build configuration and the installed folders
SOURCES = ["pyproject.toml", "setup.py", "README.md", "engine", "endpoint", "static", "migrations"]
STATIC = REPO / "static"
BUILD_SECONDS = 120
START_SECONDS = 60

LONGEST_RIVER = """PREFIX ex: <http://example.org/rivers/>
SELECT ?river WHERE { ?river ex:lengthKm ?km } ORDER BY DESC(?km) LIMIT 1"""


def _installed_version(name: str) -> tuple[int, ...] | None:
    """A distribution's version, read from its metadata (importing setuptools here would
    fight pytest's own distutils)."""
    try:
        return tuple(int(part) for part in re.findall(r"\d+", version(name))[:2])
    except PackageNotFoundError:
        return None


def _why_no_build() -> str | None:
    """Why this environment cannot build a wheel offline, or None when it can."""
    pip = _installed_version("pip")
    if pip is None or pip < (22, 3):
        return "pip >= 22.3 (for 'pip --python') is not installed in this environment"
    setuptools = _installed_version("setuptools")
    if setuptools is None:
        return "setuptools is not installed in this environment"
    # setuptools builds wheels itself from 70.1; before that it needs the 'wheel' package
    if setuptools < (70, 1) and _installed_version("wheel") is None:
        return "setuptools < 70.1 and no 'wheel' package: cannot build a wheel (pip install -e '.[dev]')"
    if _installed_version("Cython") is None:
        return "Cython is not installed here: cannot compile the kernels (pip install -e '.[dev]')"
    return None


def _run(command: list[str | Path], **options) -> str:
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                          timeout=BUILD_SECONDS, **options)
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _build_wheel(work: Path) -> Path:
    source = work / "source"
    for name in SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(origin, source / name)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
          "--wheel-dir", work / "dist", source])
    (wheel,) = (work / "dist").glob("rivulet-*.whl")
    return wheel


def _dependency_folders() -> list[str]:
    """The running interpreter's package folders, in its order: its site-packages and any
    folder a ``.pth`` there adds (never the checkout, which is on ``sys.path`` as a source root)."""
    return [folder for folder in sys.path if Path(folder).name in ("site-packages", "dist-packages")]


def _new_environment(work: Path, wheel: Path) -> Path:
    """A new venv holding the wheel; the running environment's packages serve as dependencies."""
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    (purelib / "dependencies.pth").write_text("".join(f"{folder}\n" for folder in _dependency_folders()))
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
          "--quiet", wheel])
    return venv


def _isolated_environment() -> dict[str, str]:
    """The test's environment without the paths that lead back to the checkout."""
    return {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "PYTHONHOME")}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class Installed:
    venv: Path
    url: str


def _wait_until_serving(server: subprocess.Popen, url: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"rivulet serve exited with {server.returncode}:\n{server.stdout.read()}")
        try:
            httpx.get(url + "/sparql", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"rivulet serve did not answer within {START_SECONDS} s")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Iterator[Installed]:
    """The installed wheel's ``rivulet serve --demo`` on a free loopback port."""
    reason = _why_no_build()
    if reason:
        print(f"skipping the wheel test: {reason}")
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("wheel")
    venv = _new_environment(work, _build_wheel(work))
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    port = _free_port()
    server = subprocess.Popen(
        [venv / "bin" / "rivulet", "serve", "--demo", "--host", "127.0.0.1", "--port", str(port)],
        cwd=elsewhere, env=_isolated_environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_serving(server, url)
        yield Installed(venv, url)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


def _checkout_console_files() -> set[str]:
    return {str(path.relative_to(STATIC)) for path in STATIC.rglob("*") if path.is_file()}


def test_the_code_and_the_console_come_from_the_wheel_not_the_checkout(installed):
    where = _run([installed.venv / "bin" / "python", "-c",
                  "import endpoint.console as c, endpoint.demo as d; print(c.__file__); "
                  "print(c.STATIC); print(d.RIVERS)"],
                 cwd=installed.venv, env=_isolated_environment()).split()
    assert all(Path(path).is_relative_to(installed.venv) for path in where), where
    static = Path(where[1])
    assert {str(path.relative_to(static)) for path in static.rglob("*") if path.is_file()} \
        == _checkout_console_files()


def test_installed_server_serves_the_console_page_and_its_modules(installed):
    page = httpx.get(installed.url + "/", timeout=10)
    assert page.status_code == 200
    assert page.content == (STATIC / "index.html").read_bytes()
    assert '<script type="module" src="static/js/main.js">' in page.text
    module = httpx.get(installed.url + "/static/js/main.js", timeout=10)
    assert module.status_code == 200
    assert "javascript" in module.headers["content-type"]
    assert module.content == (STATIC / "js" / "main.js").read_bytes()


def test_installed_server_answers_from_the_demo_dataset(installed):
    response = httpx.get(installed.url + "/sparql", params={"query": LONGEST_RIVER},
                         headers={"Accept": "text/csv"}, timeout=10)
    assert response.status_code == 200
    assert response.text.split() == ["river", "http://example.org/rivers/Danube"]


#: opens a catalog in the installed environment, then names its migrations folder and its tables
CATALOG_PROBE = """
import sqlite3, sys
from pathlib import Path
from engine.catalog import Catalog
from engine.catalog.connection import migrations_directory
Catalog.for_directory(Path(sys.argv[1])).close()
print(migrations_directory())
tables = sqlite3.connect(Path(sys.argv[1]) / "catalog.sqlite").execute(
    "SELECT name FROM sqlite_master WHERE type = 'table'")
print(",".join(sorted(name for (name,) in tables)))
"""


def test_the_installed_catalog_migrates_with_the_wheels_migrations(installed, tmp_path):
    where, tables = _run([installed.venv / "bin" / "python", "-c", CATALOG_PROBE, tmp_path],
                         cwd=installed.venv, env=_isolated_environment()).split()
    assert Path(where).is_relative_to(installed.venv), where
    assert (Path(where) / "script.py.mako").is_file()
    assert tables == "alembic_version,checkpoints,graphs,queries,streams,tokens"
