"""``rivulet serve`` as an operator runs it, a subprocess on a loopback port,
with its standard error kept for the tests that read the server's log."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: seconds to wait for the server to listen, and for it to stop
START_TIMEOUT = 60
STOP_TIMEOUT = 15


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RivuletProcess:
    """``rivulet serve OPTIONS... --port P``; ``url`` once it listens.
    Standard error is read by a thread into ``stderr_lines`` (a full pipe
    would stall the server). ``open_files``: the process's limit of open
    file descriptors (RLIMIT_NOFILE), when given. ``module``: the module run
    with ``python -m`` (the CLI, or a test's wrapper of it that injects a
    fault); ``environment``: the process's variables instead of this one's,
    with ``env`` added to them."""

    def __init__(self, *options: str, command: tuple[str, ...] = ("serve",),
                 open_files: int | None = None, module: str = "endpoint.cli",
                 env: dict[str, str] | None = None, environment: dict[str, str] | None = None) -> None:
        base = os.environ if environment is None else environment
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.stderr_lines: list[str] = []
        self._listening = threading.Event()
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, *command, "--port", str(port), *options],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**base, "PYTHONPATH": str(REPO), **(env or {})},
            preexec_fn=None if open_files is None else lambda: resource.setrlimit(
                resource.RLIMIT_NOFILE, (open_files, open_files)),
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._listening.wait(START_TIMEOUT):
            self.stop()
            raise RuntimeError("rivulet serve did not start:\n" + "".join(self.stderr_lines))

    def _read(self) -> None:
        for line in self.process.stderr:
            self.stderr_lines.append(line)
            if "Uvicorn running" in line:
                self._listening.set()
        self._listening.set()  # the process ended: stop waiting

    def stop(self) -> list[str]:
        """Stop the server as a service manager does (SIGTERM); its whole standard error."""
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=STOP_TIMEOUT)
        self._reader.join(timeout=STOP_TIMEOUT)
        return self.stderr_lines
