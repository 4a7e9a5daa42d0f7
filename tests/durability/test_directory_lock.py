"""One server at a time in a data directory: a second ``rivulet serve`` on a
directory in use is refused at once with why, and the first goes on."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx

from tests.endpoint.rivulet_process import REPO, RivuletProcess, free_port

EX = "http://example.org/"


def test_a_second_server_on_a_data_directory_in_use_is_refused(tmp_path):
    first = RivuletProcess("--data-dir", str(tmp_path), "--sync", "none")
    try:
        second = subprocess.run(
            [sys.executable, "-m", "endpoint.cli", "serve", "--port", str(free_port()),
             "--data-dir", str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)})
        assert second.returncode == 1
        assert f"{tmp_path} is in use by another process (pid {first.process.pid})" in second.stderr
        assert "Traceback" not in second.stderr
        answer = httpx.post(f"{first.url}/sparql", data={"update": f"INSERT DATA {{ <{EX}a> <{EX}p> 1 }}"},
                            timeout=30)
        assert answer.status_code == 204
    finally:
        first.stop()
