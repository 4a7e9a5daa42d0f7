"""The server's broker connections: a source per stream that declares one, the sinks of queries.

A stream's source is part of its definition, so it lives where the
definition does (the log and the catalog) and a restarted server starts it
again. The connectors follow the engine: :meth:`Connectors.reconcile`
starts the source of every declared stream that has one, restarts it when
its definition changed and stops it when the stream is gone; it runs when a
stream is declared or dropped over HTTP and every second besides (a stream
recovered at start, declared through the Flask blueprint, dropped by its
last query). Sinks are declared per query (``PUT /queries/{name}/sink``)
and kept in ``sinks.json`` in the data directory, with the sequence of the
last window each one published, so that they resume after it.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import orjson

from endpoint.brokers.config import SinkConfig, sink_config, source_config
from endpoint.brokers.query_sink import QuerySink
from endpoint.brokers.stream_source import StreamSource
from endpoint.problems import ProtocolError
from engine.durability.leftovers import SINKS
from engine.stream import StreamEngine

log = logging.getLogger("rivulet.brokers")

#: seconds between two looks at the engine's streams and queries
RECONCILE_S = 1.0


class Connectors:
    """Sources and sinks of one application."""

    def __init__(self, engine: StreamEngine, directory: Path | None = None) -> None:
        self.engine = engine
        #: where sinks are kept (None: in memory only)
        self.directory = directory
        self.sources: dict[str, tuple[dict, StreamSource]] = {}
        self.sinks: dict[str, tuple[dict, QuerySink]] = {}
        self._lock = threading.RLock()
        #: held while sinks.json is written (a sink thread writes it, without the lock above)
        self._file_lock = threading.Lock()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._saved_sinks = self._read_sinks()
        #: sources refused (already logged), by stream
        self._refused: dict[str, dict] = {}

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start what the engine's state asks for, then follow it."""
        self.reconcile()
        self._thread = threading.Thread(target=self._follow, name="rivulet-connectors", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            for _, source in self.sources.values():
                source.stop()
            for _, sink in self.sinks.values():
                sink.stop()
            self._write_sinks()
            self.sources.clear()
            self.sinks.clear()

    def _follow(self) -> None:
        while not self._closed.wait(RECONCILE_S):
            try:
                self.reconcile()
            except Exception:  # keep following; the next round tries again
                log.exception("connectors: reconciling with the engine failed")

    def reconcile(self) -> None:
        """Sources for the streams that declare one, as declared; sinks of the queries still registered."""
        with self._lock:
            if self._closed.is_set():
                return
            wanted = {name: state.definition.source for name, state in list(self.engine.streams.items())
                      if state.definition.source is not None}
            for name, (spec, source) in list(self.sources.items()):
                if wanted.get(name) != spec:
                    dropped = name not in self.engine.streams
                    source.stop(forget=dropped)
                    del self.sources[name]
                    log.info("source of stream %r stopped (%s)", name, "stream dropped" if dropped
                             else "definition changed")
            for name, spec in wanted.items():
                if name not in self.sources:
                    try:
                        config = source_config(name, spec)
                    except ProtocolError as exc:  # checked when declared: only a definition from elsewhere
                        if self._refused.get(name) != spec:
                            log.error("stream %r: its source cannot start: %s", name, exc.message)
                            self._refused[name] = spec
                        continue
                    source = StreamSource(self.engine, name, config)
                    self.sources[name] = (spec, source)
                    source.start()
            for name in list(self.sinks):
                if name not in self.engine.queries:
                    self._remove_sink(name)
            for name, (spec, after) in list(self._saved_sinks.items()):
                if name in self.engine.queries and name not in self.sinks:
                    self._start_sink(name, spec, self._config(name, spec), after)
                    del self._saved_sinks[name]

    # --------------------------------------------------------------- sinks
    def _config(self, name: str, spec: dict) -> SinkConfig:
        return sink_config(name, spec, self.engine.query(name).spec.query.form == "CONSTRUCT")

    def set_sink(self, name: str, spec: object) -> tuple[dict, bool]:
        """Attach (or replace) the sink of query ``name``; ``True`` if new."""
        with self._lock:
            config = self._config(name, spec)
            created = name not in self.sinks
            after = None
            if not created:
                old_spec, old = self.sinks[name]
                after = old.last_sequence if old_spec.get("topic") == spec.get("topic") else None
                old.stop()
            else:
                after = self.engine.query(name).sequence  # from the next window on
            sink = self._start_sink(name, spec, config, after)
            self._write_sinks()
            return sink.to_json(), created

    def _start_sink(self, name: str, spec: dict, config: SinkConfig, after: int | None) -> QuerySink:
        sink = QuerySink(self.engine, name, config, after, on_published=self._write_sinks)
        self.sinks[name] = (spec, sink)
        sink.start()
        return sink

    def sink(self, name: str) -> dict | None:
        with self._lock:
            entry = self.sinks.get(name)
            return None if entry is None else entry[1].to_json()

    def remove_sink(self, name: str) -> bool:
        with self._lock:
            if name not in self.sinks:
                return False
            self._remove_sink(name)
            return True

    def _remove_sink(self, name: str) -> None:
        _, sink = self.sinks.pop(name)
        sink.stop()
        self._write_sinks()

    def _read_sinks(self) -> dict[str, tuple[dict, int | None]]:
        if self.directory is None or not (self.directory / SINKS).exists():
            return {}
        saved = orjson.loads((self.directory / SINKS).read_bytes())
        return {name: (entry["sink"], entry.get("last_sequence")) for name, entry in saved.items()}

    def _write_sinks(self) -> None:
        """Keep the sinks and where each stands (renamed into place: a crash
        leaves the old file or the new one)."""
        if self.directory is None:
            return
        with self._file_lock:
            entries = {name: {"sink": spec, "last_sequence": after}
                       for name, (spec, after) in list(self._saved_sinks.items())}
            entries.update({name: {"sink": spec, "last_sequence": sink.last_sequence}
                            for name, (spec, sink) in list(self.sinks.items())})
            target = self.directory / SINKS
            partial = target.with_name(SINKS + ".partial")
            partial.write_bytes(orjson.dumps(entries))
            os.replace(partial, target)

    # ------------------------------------------------------------ reporting
    def source(self, stream: str) -> dict | None:
        entry = self.sources.get(stream)
        return None if entry is None else entry[1].to_json()
