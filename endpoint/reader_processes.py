"""``rivulet serve --processes N --data-dir DIR``: one writer, N-1 readers, one port.

The process the operator started is the writer: it opens the data directory
(recovery, the directory lock, the log, checkpoints, streams, continuous
queries and their event streams, exactly as with one process), binds the
public port, and starts N-1 reader processes that accept connections on
the same listening socket (the kernel hands each new connection to one of
the processes waiting on it). A reader maps the newest checkpoint, applies
the log after it and keeps following it (:mod:`engine.durability.log_follower`),
answers reads itself and forwards everything else to the writer over a Unix
socket only the writer listens on (:mod:`endpoint.reader_front`).

The writer watches its readers: one that ends while the server runs (one
that fell behind two checkpoints stops itself, see the follower) is started
again from the newest checkpoint. On SIGTERM the writer stops its readers
(each within the grace period) before it closes the data directory; a reader
whose writer is gone (killed) stops too.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import select
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from endpoint.app import create_app
from endpoint.connection_balance import CLOSED, ConnectionBalance, ConnectionCounts
from endpoint.http_protocol import http_protocol
from endpoint.reader_front import ReaderFront, WriterFront
from endpoint.settings import Settings
from endpoint.shutdown import serve_until_stopped

log = logging.getLogger("rivulet.endpoint")

#: seconds between two looks at the readers (a reader that ended is started again)
WATCH_SECONDS = 0.5
#: seconds a reader has to stop after the writer's grace period before it is killed
STOP_SECONDS = 5.0
#: a reader that ends sooner than this after its start is started again only after a pause,
#: doubled at each such end up to RESTART_PAUSE_MAX (one that cannot start must not spin)
QUICK_END_SECONDS = 30.0
RESTART_PAUSE_MAX = 60.0


def bind_public(host: str, port: int) -> socket.socket:
    """The listening socket every process accepts on (as uvicorn binds it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY on accepted sockets only then (else Nagle delays answers)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise SystemExit(f"rivulet serve: cannot listen on {host}:{port}: {exc}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def bind_private(directory: Path) -> tuple[socket.socket, str]:
    """The writer's Unix socket, where readers forward what they do not answer."""
    path = str(directory / "writer.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    os.chmod(path, 0o600)
    sock.listen(2048)
    return sock, path


class Readers:
    """The reader processes, started with ``config`` and kept running."""

    def __init__(self, count: int, config: dict, public: socket.socket, counts: object) -> None:
        self.count = count
        self.config = config
        self.public = public
        #: open connections per process (shared memory; :mod:`endpoint.connection_balance`)
        self.counts = counts
        # a fork server imports the modules once, then forks each reader (and each restart) from
        # that clean process: the writer's threads and event loop are never forked
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(["endpoint.reader_processes", "endpoint.serve",
                                              "engine.durability.log_follower"])
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self._started_at: list[float] = [0.0] * count
        #: per reader, the pause before its next start, and when that start is due
        self._pause: list[float] = [0.0] * count
        self._due: list[float] = [0.0] * count
        self._stopping = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="rivulet-readers", daemon=True)

    def start(self) -> None:
        self._processes = [self._start_one(k) for k in range(self.count)]
        self._watcher.start()

    def _start_one(self, index: int):
        self._started_at[index] = time.monotonic()
        process = self._context.Process(target=reader_main,
                                        args=(self.config, self.public, index + 1, self.counts),
                                        name=f"rivulet-reader-{index + 1}", daemon=True)
        process.start()
        return process

    def _watch(self) -> None:
        while not self._stopping.wait(WATCH_SECONDS):
            for index, process in enumerate(self._processes):
                if process.is_alive() or self._stopping.is_set():
                    continue
                now = time.monotonic()
                if self._due[index] == 0.0:  # just found ended
                    quick = now - self._started_at[index] < QUICK_END_SECONDS
                    self._pause[index] = min(max(2 * self._pause[index], 1.0), RESTART_PAUSE_MAX) if quick \
                        else 0.0
                    self._due[index] = now + self._pause[index]
                    log.warning("reader process %d ended (exit code %s); starting it again from the newest "
                                "checkpoint in %g s", index + 1, process.exitcode, self._pause[index])
                if now >= self._due[index]:
                    self._due[index] = 0.0
                    self._processes[index] = self._start_one(index)

    def stop(self, grace: float) -> None:
        """SIGTERM to each reader; one still running after the grace period is killed."""
        self._stopping.set()
        for process in self._processes:
            if process.is_alive():
                process.terminate()
        for process in self._processes:
            process.join(grace + STOP_SECONDS)
            if process.is_alive():
                process.kill()
                process.join()


def serve_writer_and_readers(args, settings: Settings, data, common: dict, closing) -> int:
    """Serve the data directory ``data`` with this process as the writer and
    ``args.processes - 1`` readers on the public port (see the module docstring)."""
    from endpoint.serve import CATALOG_VARIABLE

    private_dir = Path(tempfile.mkdtemp(prefix="rivulet-writer-"))
    public = bind_public(args.host, args.port)
    private, private_path = bind_private(private_dir)
    config = {
        "data_dir": str(Path(args.data_dir).resolve()),
        "catalog": args.catalog or os.environ.get(CATALOG_VARIABLE) or None,
        "settings": {**asdict(settings), "read_only": True},
        "service_endpoints": dict(data.store.service_endpoints),
        "writer_socket": private_path,
        "writer_pid": os.getpid(),
        "args": {name: getattr(args, name) for name in (
            "host", "port", "access_log", "request_timeout", "send_timeout", "keep_alive_timeout",
            "log_format", "grace_period", "timeout", "max_rows")},
    }
    # every process but a starting one counts as full until it opens its hand-off socket
    counts = multiprocessing.get_context("forkserver").RawArray("q", [CLOSED] * args.processes)
    balance = ConnectionBalance(ConnectionCounts(counts), 0, private_dir)
    balance.open()
    readers = Readers(args.processes - 1, config, public, counts)
    readers.start()
    log.info("serving with %d reader processes following the log of %s", args.processes - 1, args.data_dir)

    def stopped() -> None:
        readers.stop(args.grace_period)
        closing()
        shutil.rmtree(private_dir, ignore_errors=True)

    app = WriterFront(create_app(data.store, settings, data.engine), data.wal)
    common = {**common, "http": http_protocol(args.request_timeout, args.send_timeout, balance)}
    try:
        serve_until_stopped(app, args.grace_period, stopped, sockets=[public, private], balance=balance,
                            **common)
    finally:
        stopped()
    return 0


def reader_main(config: dict, public: socket.socket, number: int, counts: object) -> None:
    """A reader process: follow the log, serve reads on ``public`` (and the
    connections the other processes hand to it, ``counts`` saying who has how many)."""
    from endpoint.log_format import configure_logging
    from endpoint.serve import uvicorn_options, window_limits
    from engine.durability.log_follower import FellBehind, LogFollower

    options = config["args"]
    uvicorn_logging = configure_logging(options["log_format"])
    follower = LogFollower.open(Path(config["data_dir"]), config["catalog"],
                                window_limits(_Options(options)))
    follower.store.service_endpoints.update(config["service_endpoints"])
    given = config["settings"]
    settings = Settings(**{**given, "cors_origins": tuple(given["cors_origins"]),
                           "outbound_allowed": tuple(given["outbound_allowed"])})
    log.info("reader process %d: at log position %d of %s", number, follower.applied, config["data_dir"])

    writer_gone = process_ended(config["writer_pid"])

    def follow() -> None:
        try:
            follower.follow(should_stop=writer_gone)
        except FellBehind as exc:
            log.warning("reader process %d fell behind the log (%s): it stops and starts again", number, exc)
        except Exception:
            log.exception("reader process %d stopped following the log", number)
        if not follower.stopped:  # the writer is gone, or this reader cannot go on: stop serving
            os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=follow, name="rivulet-follower", daemon=True).start()
    local = create_app(follower.store, settings, follower.engine)
    app = ReaderFront(local, follower, config["writer_socket"], settings.max_body_bytes,
                      settings.query_timeout)
    balance = ConnectionBalance(ConnectionCounts(counts), number, Path(config["writer_socket"]).parent)
    balance.open()
    served = {**uvicorn_options(_Options(options), uvicorn_logging),
              "http": http_protocol(options["request_timeout"], options["send_timeout"], balance)}
    serve_until_stopped(app, options["grace_period"], follower.close, sockets=[public], balance=balance,
                        **served)


def process_ended(pid: int) -> Callable[[], bool]:
    """A test of whether process ``pid`` has ended (killed included). Not
    the parent process: readers are forked by the fork server, which lives
    as long as they do. A pidfd becomes readable when the process ends, even
    before its parent reaps it; without one, signal 0 says whether the pid exists."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        def gone() -> bool:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            return False  # it exists (PermissionError too: another user's process has it)
        return gone
    return lambda: bool(select.select([handle], [], [], 0)[0])


class _Options:
    """Attribute access to the options a reader was given (what ``args`` is in the writer)."""

    def __init__(self, values: dict) -> None:
        self.__dict__.update(values)
