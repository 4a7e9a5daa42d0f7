"""A shard's process-level server: its state, files and published regions.

One object per shard, the same whether it runs as a Ray actor
(``engine.cluster.ray_shards``) or in the coordinator's process (tests).
Every method is a call the coordinator makes: commits, the reads of a
fork-join step, checkpoints and reports. Reads name the snapshot version
they read, so a query sees one consistent state across shards.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import numpy as np

from engine.cluster.shard_calls import READ_STEPS
from engine.cluster.shard_files import ShardFiles
from engine.cluster.shard_ops import ShardOp
from engine.cluster.shard_state import loaded_regions
from engine.cluster.shard_streams import WindowSpan
from engine.cluster.store_identity import store_id
from engine.store.graph import Matches

log = logging.getLogger("rivulet.cluster")


class ShardServer:
    """Shard ``shard`` of ``shards``, recovered from ``data_dir`` (and the
    loaded store ``store_dir``, when given)."""

    def __init__(self, shard: int, shards: int, data_dir: str, store_dir: str | None = None,
                 sync: bool = True, checkpoint_mb: float = 64.0, region_host: str | None = "127.0.0.1"
                 ) -> None:
        self.shard, self.shards = shard, shards
        #: the store this shard serves (its data directory's ID), and that directory
        self.store_id, self.data_dir = store_id(Path(data_dir)), data_dir
        self.files, self.state, self.recovery = ShardFiles.recover(
            Path(data_dir), shard, shards, Path(store_dir) if store_dir else None, sync, checkpoint_mb)
        self._commit_lock = threading.Lock()
        self._regions: list = []
        self.addresses: dict[str, tuple[str, int]] = {}
        #: where this shard answers read steps over TCP (None: through Ray only)
        self.step_address: tuple[str, int] | None = None
        if region_host is not None:
            self._publish_regions(region_host)
            self._serve_steps(region_host)

    def _publish_regions(self, host: str) -> None:
        """Serve the loaded base's arrays to in-place readers: over TCP
        always, and over RDMA (registered memory regions, read with
        one-sided READs) where this node has a device."""
        from engine.cluster.transport.rdma_device import probe_rdma
        from engine.cluster.transport.tcp import TcpRegionServer

        regions = loaded_regions(self.files.loaded, self.shard)
        servers = [("tcp", TcpRegionServer(host, 0))]
        if probe_rdma() is None:
            from engine.cluster.transport.rdma_server import RdmaRegionServer

            servers.append(("rdma", RdmaRegionServer(host, 0)))
        for name, server in servers:
            for region, array in regions.items():
                server.publish(region, array)
            server.start()
            self._regions.append(server)
            self.addresses[name] = server.address

    def _serve_steps(self, host: str) -> None:
        """Answer the coordinator's read steps over TCP (cheaper than a Ray call)."""
        from engine.cluster.transport.tcp_steps import TcpStepServer

        server = TcpStepServer(self.serve_step, host, 0)
        self.step_address = server.start()
        self._regions.append(server)

    def serve_step(self, method: str, args: tuple) -> object:
        """One read step sent over TCP; anything else is refused."""
        if method not in READ_STEPS:
            raise PermissionError(f"{method!r} is not a read step ({', '.join(sorted(READ_STEPS))} are)")
        return getattr(self, method)(*args)

    # ------------------------------------------------------------ reports
    def info(self) -> dict:
        regions = loaded_regions(self.files.loaded, self.shard) if self.addresses else {}
        return {"shard": self.shard, "shards": self.shards, "store_id": self.store_id,
                "data_dir": self.data_dir, "version": self.state.version,
                "checkpoint": self.files.checkpointed, "pid": os.getpid(), "addresses": dict(self.addresses),
                "steps": self.step_address,
                "recovery": self.recovery, "regions": {name: len(array) for name, array in regions.items()}}

    def ping(self) -> int:
        return self.state.version

    # ------------------------------------------------------------ writes
    def apply(self, version: int, ops: list[ShardOp], retain: dict[int, int]) -> dict[int, int]:
        """Apply and log commit ``version``; returns triples per graph after
        it. Applied before it is logged: nobody reads ``version`` before
        every shard has answered, and a commit that fails here is never
        logged, so recovery cannot meet it."""
        with self._commit_lock:
            if self.state.apply(version, ops, retain):
                self.files.log_commit(version, ops, retain)
                if self.files.wants_checkpoint():
                    self.files.checkpoint(self.state)
            return self.state.sizes(self.state.version)

    def checkpoint(self) -> int:
        with self._commit_lock:
            return self.files.checkpoint(self.state)

    # ------------------------------------------------------------- reads
    def match(self, version: int, graph_id: int, role: str, s: np.ndarray | None, p: np.ndarray | None,
              o: np.ndarray | None, n_rows: int, cutoffs: dict[int, int] | None) -> Matches:
        return self.state.match(version, graph_id, role, s, p, o, n_rows, cutoffs)

    def count(self, version: int, graph_id: int, role: str, s: int | None, p: int | None, o: int | None,
              cutoffs: dict[int, int] | None) -> int:
        return self.state.count(version, graph_id, role, s, p, o, cutoffs)

    def degree_stats(self, version: int, graph_id: int, p: int | None, cutoffs: dict[int, int] | None
                     ) -> tuple[int, int, int]:
        return self.state.degree_stats(version, graph_id, p, cutoffs)

    def columns(self, version: int, graph_id: int, cutoffs: dict[int, int] | None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.state.columns(version, graph_id, cutoffs)

    def sizes(self, version: int) -> dict[int, int]:
        return self.state.sizes(version)

    # ------------------------------------------------------ window reads
    def window_match(self, version: int, role: str, windows: tuple[tuple[WindowSpan, ...], ...],
                     beside: tuple[int, ...], cutoffs: dict[int, int] | None, s: np.ndarray | None,
                     p: np.ndarray | None, o: np.ndarray | None, n_rows: int) -> Matches:
        """One step of a window's query on this shard's share of the window
        and of the stored graphs beside it (columns in the role's order)."""
        return self.state.window_graph(version, role, windows, beside, cutoffs).match(s, p, o, n_rows)

    def window_count(self, version: int, role: str, windows: tuple[tuple[WindowSpan, ...], ...],
                     beside: tuple[int, ...], cutoffs: dict[int, int] | None, s: int | None, p: int | None,
                     o: int | None) -> int:
        """The planner's count of a pattern's constants in this shard's share."""
        return self.state.window_graph(version, role, windows, beside, cutoffs).count(s, p, o)

    def window_rows(self, stream: int, start: int, end: int, by_sequence: bool
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(seq, ts, s, p, o)`` of this shard's rows of ``stream`` in a time
        (or arrival-number) range: count windows and f:timestamp read them."""
        return self.state.streams.rows(stream, start, end, by_sequence)

    def reset(self, data_dir: str) -> None:
        """Start over empty in ``data_dir`` (tests reuse the shard processes
        of one Ray cluster for many independent stores)."""
        with self._commit_lock:
            self.files.close()
            self.store_id, self.data_dir = store_id(Path(data_dir)), data_dir
            self.files, self.state, self.recovery = ShardFiles.recover(
                Path(data_dir), self.shard, self.shards, None, self.files.wal.sync)

    def close(self) -> None:
        for server in self._regions:
            server.stop()
        self.files.close()
