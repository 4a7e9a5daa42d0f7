"""A throwaway Mosquitto broker for the tests, from Debian's ``mosquitto`` package.

:class:`Mosquitto` writes a config of its own into a temporary directory
(one listener on 127.0.0.1 and a free port; anonymous clients, or only the
users of a password file written with ``mosquitto_passwd``; persistence
only when a test restarts the broker and needs the sessions to survive),
starts the broker, waits until it accepts connections, and can stop it
gracefully (SIGTERM: a persistent broker saves its sessions then), kill
it, and start it again on the same port with the same files. Queued
messages per client are unbounded: Mosquitto drops what passes its default
of 1000 for a client that is away, and a restart test has more than that
waiting for the server it killed.
"""

from __future__ import annotations

import getpass
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tests.endpoint.rivulet_process import free_port

START_SECONDS = 10
STOP_SECONDS = 10


def mosquitto_binary() -> str | None:
    debian = Path("/usr/sbin/mosquitto")
    return shutil.which("mosquitto") or (str(debian) if debian.exists() else None)


def why_no_mosquitto() -> str | None:
    """Why this machine cannot run a test broker (None: it can)."""
    if mosquitto_binary() is None:
        return "no mosquitto binary (Debian's mosquitto package; .ci/run installs it)"
    return None


class Mosquitto:
    """One broker process; ``url`` is its ``mqtt://`` address."""

    def __init__(self, users: dict[str, str] | None = None, persistent: bool = False) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="rivulet-mosquitto-"))
        self.port = free_port()
        self.url = f"mqtt://127.0.0.1:{self.port}"
        lines = [f"listener {self.port} 127.0.0.1", f"user {getpass.getuser()}", "max_queued_messages 0",
                 "max_inflight_messages 0", "log_type error", "log_type warning", "log_type notice"]
        if users:
            passwords = self.directory / "passwords"
            passwords.touch(mode=0o600)
            for user, password in users.items():
                subprocess.run(["mosquitto_passwd", "-b", str(passwords), user, password], check=True,
                               capture_output=True, timeout=STOP_SECONDS)
            lines += ["allow_anonymous false", f"password_file {passwords}"]
        else:
            lines.append("allow_anonymous true")
        if persistent:
            lines += ["persistence true", f"persistence_location {self.directory}/", "autosave_interval 1"]
        (self.directory / "mosquitto.conf").write_text("\n".join(lines) + "\n")
        self.log = self.directory / "mosquitto.log"
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        with open(self.log, "ab") as log:
            config = self.directory / "mosquitto.conf"
            self.process = subprocess.Popen([mosquitto_binary(), "-c", str(config)], stdout=log,
                                            stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"mosquitto did not listen within {START_SECONDS} s: {self.log.read_text()}")

    def stop(self) -> None:
        """SIGTERM, as a service manager stops it (a persistent broker saves its sessions)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_SECONDS)
        self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
