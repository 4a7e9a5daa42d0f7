"""Opening a cluster's store at the coordinator: dictionary, log, shards, transports.

The coordinator holds the term dictionary (the loaded store's, plus the
terms its log spells), numbers commits and runs queries; the shards hold the
triples. One coordinator serves a store: its data directory's lock refuses a
second one, and shards of another store (another data directory) are
refused before anything is written (``engine.cluster.store_identity``).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from engine.api import Store
from engine.cluster.coordinator_log import CoordinatorLog
from engine.cluster.in_place import InPlaceReads, measure
from engine.cluster.shard_calls import ShardCalls, ShardUnavailable
from engine.cluster.sharded_store import ShardedQuadStore
from engine.cluster.step_calls import StepCalls, step_addresses
from engine.cluster.store_identity import check_shards, store_id
from engine.store.compact_dictionary import CompactTermDictionary
from engine.store.layout import TERMS

log = logging.getLogger("rivulet.cluster")

#: seconds a starting coordinator waits for shards that are (re)starting
STARTUP_PATIENCE = 60.0


def open_cluster_store(calls: ShardCalls, data_dir: Path, store_dir: Path | None = None, sync: bool = True,
                       transport: str = "auto", checkpoint_mb: float = 64.0) -> Store:
    """A :class:`~engine.api.Store` whose triples live on the shards ``calls``
    reaches; ``transport`` picks in-place reads ("auto", "tcp", "rdma"), with
    the read steps that fork-join sent over TCP, or neither ("ray": every
    step forks to the shards through Ray). The coordinator's log is
    compacted each ``checkpoint_mb`` MB, as far as every shard has checkpointed.
    Raises :class:`~engine.cluster.store_identity.ForeignShards` if the
    shards serve another data directory's store."""
    infos = _reports_when_up(calls)
    check_shards(store_id(data_dir), data_dir, infos)
    terms = CompactTermDictionary.open(store_dir / TERMS) if store_dir else CompactTermDictionary()
    coordinator_log = CoordinatorLog(data_dir / "coordinator", terms, len(terms), sync,
                                     compact_bytes=int(checkpoint_mb * 2**20))
    calls = _steps_over_tcp(calls, infos, transport)
    in_place = _in_place_reads(calls, infos, transport)
    quad_store = ShardedQuadStore(terms, calls, coordinator_log, in_place)
    fork_join = "over TCP" if calls.reads_over == "tcp" else "through Ray"
    log.info("cluster store: %d shards at version %d; steps fork-join %s%s", calls.shards,
             quad_store.snapshot().version, fork_join,
             f", or in place over {in_place.reader.name}" if in_place is not None else "")
    return Store(quad_store=quad_store)


def _reports_when_up(calls: ShardCalls, patience: float = STARTUP_PATIENCE) -> list[dict]:
    """Every shard's report, waiting for shards Ray is still (re)starting."""
    deadline = time.monotonic() + patience
    while True:
        try:
            return calls.info()
        except ShardUnavailable as exc:
            if time.monotonic() > deadline:
                raise
            log.info("waiting for the shards: %s", exc)
            time.sleep(0.5)


def _steps_over_tcp(calls: ShardCalls, infos: list[dict], transport: str) -> StepCalls:
    """``calls`` with read steps sent over TCP, unless the transport is "ray"
    (or a shard serves no steps)."""
    addresses = step_addresses(infos) if transport != "ray" else None
    if addresses is None:
        return StepCalls(calls)
    from engine.cluster.transport.tcp_steps import TcpStepCaller

    return StepCalls(calls, TcpStepCaller(addresses), lambda: step_addresses(calls.info()) or {})


def _in_place_reads(calls: ShardCalls, infos: list[dict], transport: str) -> InPlaceReads | None:
    if transport == "ray":
        return None
    from engine.cluster.transport.base import Slices
    from engine.cluster.transport.choice import open_reader

    addresses = {info["shard"]: info["addresses"] for info in infos}
    if not all(addresses.values()):
        return None
    reader = open_reader(transport, addresses)
    regions = {info["shard"]: info.get("regions", {}) for info in infos}
    first = np.zeros(1, dtype=np.int64)
    probe = {k: [Slices(name, first, first + 1)] for k, names in regions.items() for name in list(names)[:1]}
    if probe:
        read_latency = measure(lambda: reader.gather(probe))
    else:  # the shards opened no loaded store: no array to read in place, so nothing to time
        read_latency = float("inf")
    fork_latency = measure(lambda: calls.fork({k: ("ping", ()) for k in range(calls.shards)}))
    if probe:
        log.info("in-place read round trip %.0f us (%s), fork-join call %.0f us (ray)", read_latency * 1e6,
                 reader.name, fork_latency * 1e6)
    else:
        log.info("in-place reads: none (no store was loaded into the shards: written data is read by "
                 "fork-join), fork-join call %.0f us (ray)", fork_latency * 1e6)
    return InPlaceReads(reader, calls.shards, regions, read_latency, fork_latency,
                        lambda: {info["shard"]: info["addresses"] for info in calls.info()},
                        chosen=transport != "auto")

