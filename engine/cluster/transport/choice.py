"""Which transport carries a coordinator's in-place reads.

RDMA when this machine has a usable device and every shard offers an RDMA
handshake address; TCP otherwise, which works everywhere. Falling back is
normal (most machines have no RDMA NIC), so it is said once per process at
INFO, not per query and not as a warning.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from engine.cluster.transport.base import RangeReader, TransportUnavailable
from engine.cluster.transport.rdma_device import Verbs, probe_rdma
from engine.cluster.transport.rdma_reader import RdmaRangeReader
from engine.cluster.transport.tcp import TcpRangeReader

log = logging.getLogger("rivulet.cluster")

PREFERENCES = ("auto", "tcp", "rdma")

_fallback_logged = False
_fallback_lock = threading.Lock()


def open_reader(
    preference: str, addresses: dict[int, dict[str, Any]], verbs: Verbs | None = None
) -> RangeReader:
    """A reader for the shards at ``addresses`` (shard -> {"tcp": (host, port),
    "rdma": (host, port), the latter optional}).

    ``"tcp"`` and ``"rdma"`` are demands: ``"rdma"`` raises
    :class:`TransportUnavailable` with the reason when it cannot be had.
    ``"auto"`` takes RDMA when it can and TCP otherwise. ``verbs`` replaces
    pyverbs (tests pass a fake).
    """
    if preference not in PREFERENCES:
        raise ValueError(f"transport must be one of {', '.join(PREFERENCES)}, got {preference!r}")
    if preference == "tcp":
        return _tcp(addresses)
    reason = rdma_unavailable(addresses, verbs)
    if reason is None:
        rdma_addresses = {shard: tuple(a["rdma"]) for shard, a in addresses.items()}
        try:
            return RdmaRangeReader(rdma_addresses, verbs=verbs)
        except TransportUnavailable as exc:  # the probe passed, but the port or PD failed
            if preference == "rdma":
                raise
            reason = str(exc)
    if preference == "rdma":
        raise TransportUnavailable(f"RDMA transport unavailable: {reason}")
    _log_fallback_once(reason)
    return _tcp(addresses)


def rdma_unavailable(addresses: dict[int, dict[str, Any]], verbs: Verbs | None = None) -> str | None:
    """Why RDMA cannot serve these shards (None if it can)."""
    reason = probe_rdma(verbs)
    if reason is not None:
        return reason
    missing = sorted(shard for shard, a in addresses.items() if not a.get("rdma"))
    if missing:
        return f"shard(s) {', '.join(map(str, missing))} offer no RDMA address"
    return None


def describe_transports(verbs: Verbs | None = None, reader: RangeReader | None = None) -> dict[str, Any]:
    """What a node reports (logs, /metrics, benchmarks): which transports this
    machine can use, why RDMA cannot if so, and what ``reader`` uses."""
    reason = probe_rdma(verbs)
    return {
        "tcp": {"available": True},
        "rdma": {"available": reason is None, "reason": reason},
        "auto": "rdma" if reason is None else "tcp",
        "in_use": getattr(reader, "name", None),
    }


def _tcp(addresses: dict[int, dict[str, Any]]) -> TcpRangeReader:
    missing = sorted(shard for shard, a in addresses.items() if not a.get("tcp"))
    if missing:
        raise ValueError(f"shard(s) {', '.join(map(str, missing))} have no TCP address")
    return TcpRangeReader({shard: tuple(a["tcp"]) for shard, a in addresses.items()})


def _log_fallback_once(reason: str) -> None:
    global _fallback_logged
    with _fallback_lock:
        if _fallback_logged:
            return
        _fallback_logged = True
    log.info("RDMA transport unavailable (%s); in-place reads use TCP", reason)


def _forget_fallback_log() -> None:
    """Let the next fallback log again (tests only: the line is once per process)."""
    global _fallback_logged
    with _fallback_lock:
        _fallback_logged = False
