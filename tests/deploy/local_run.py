"""Running a manifest's command line on this machine, as its container would run it.

The argv is the manifest's own; only what must differ outside the container
is replaced, each by name (:func:`localised` fails if the option is not
there, so the command cannot drift from what is tested): the program becomes
this environment's ``rivulet``, paths inside the container become temporary
folders, the address becomes 127.0.0.1 and a free port. :class:`LocalServer`
runs it as a child process in its own session, with its output kept in
files, and stops it with SIGTERM as a container engine does.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

#: the ``rivulet`` command of the environment running the tests
RIVULET = Path(sys.executable).parent / "rivulet"
START_SECONDS = 60.0
STOP_SECONDS = 30.0
POLL_SECONDS = 0.1


def free_port() -> int:
    """A port free on loopback now (the child binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def localised(argv: list[str], options: Mapping[str, str],
              paths: Mapping[str, str] | None = None) -> list[str]:
    """``argv`` with this environment's rivulet, each option of ``options`` given the new
    value, and every argument under a container path of ``paths`` moved to the local one."""
    local = [str(RIVULET), *argv[1:]]
    for option, value in options.items():
        assert option in local, f"{option} is not in {argv}"
        local[local.index(option) + 1] = value
    for inside, outside in (paths or {}).items():
        local = [outside + word[len(inside):] if word == inside or word.startswith(inside + "/") else word
                 for word in local]
    return local


def environment(variables: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without any RIVULET_* of its own, plus ``variables``."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("RIVULET_")}
    return {**inherited, **variables}


class LocalServer:
    """A ``rivulet serve`` child process; its stdout and stderr go to files in ``work``."""

    def __init__(self, argv: list[str], env: Mapping[str, str], work: Path, port: int) -> None:
        self.argv = argv
        self.env = dict(env)
        self.work = work
        self.url = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen | None = None
        self.starts = 0

    @property
    def stdout(self) -> Path:
        return self.work / "stdout.log"

    @property
    def stderr(self) -> Path:
        return self.work / "stderr.log"

    def start(self) -> None:
        """Start the server and wait until ``/readyz`` answers 200."""
        self.starts += 1
        with open(self.stdout, "ab") as out, open(self.stderr, "ab") as err:
            self.process = subprocess.Popen(self.argv, env=self.env, cwd=self.work, stdout=out, stderr=err,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + START_SECONDS
        with httpx.Client(timeout=2) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    code = self.process.returncode
                    raise AssertionError(f"the server exited with {code}:\n{self.log_tail()}")
                try:
                    if client.get(f"{self.url}/readyz").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                time.sleep(POLL_SECONDS)
        raise AssertionError(f"/readyz did not answer 200 within {START_SECONDS:.0f} s:\n{self.log_tail()}")

    def stop(self) -> int | None:
        """SIGTERM, as ``docker stop`` and Kubernetes send; SIGKILL if it has not exited in time.
        The exit code, None if it had to be killed."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            return self.process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=STOP_SECONDS)
            return None

    def log_tail(self, lines: int = 30) -> str:
        text = "".join(path.read_text(errors="replace") for path in (self.stdout, self.stderr)
                       if path.exists())
        return "\n".join(text.splitlines()[-lines:])

    def output_lines(self) -> list[str]:
        """Every line the server wrote, standard output then error (a container's log holds both)."""
        return [line for path in (self.stdout, self.stderr) if path.exists()
                for line in path.read_text(errors="replace").splitlines() if line.strip()]
