"""The client runs in users' programs: importing it loads nothing of the server or the engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: what a program importing the client must not get: the engine, the server and their heavy libraries
SERVER_SIDE = ("engine", "starlette", "uvicorn", "numpy", "rdflib", "pyoxigraph", "sse_starlette")


def test_importing_the_client_loads_nothing_of_the_server():
    probe = ("import sys, endpoint.client; "
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {SERVER_SIDE!r} "
             f"or m.startswith(('endpoint.',)) and not m.startswith('endpoint.client')))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
