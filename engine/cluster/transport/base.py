"""The one interface of an in-place read between processes.

A shard publishes *regions*: named, contiguous, read-only NumPy arrays (the
memory-mapped CSR arrays of its stored graphs). A coordinator that runs a
query step in place reads slices of them without running any code on the
shard, as Wukong reads remote neighbour lists with one-sided RDMA READs.
One :meth:`RangeReader.gather` is one round trip per shard, however many
slices it asks for, so a step's reads are batched by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class RegionInfo:
    """What a reader must know of a region to read it: its dtype and length
    (and, for RDMA, where it lives and its remote key)."""

    name: str
    dtype: str
    length: int
    address: int = 0
    rkey: int = 0


@dataclass(frozen=True)
class Slices:
    """One request: the concatenation of ``region[starts[i]:stops[i]]`` for all i."""

    region: str
    starts: np.ndarray
    stops: np.ndarray


class RangeReader(Protocol):
    """Reads slices of the regions that shards publish."""

    #: "tcp", "rdma", ...: reported by the node (logs, /metrics, benchmarks)
    name: str

    def gather(self, requests: dict[int, list[Slices]]) -> dict[int, list[np.ndarray]]:
        """For each shard, the data of each of its requests (a flat array of
        the region's dtype, the slices back to back), the shards read at
        once: the cost is one round trip, not one per shard. A read a shard
        refuses raises :class:`RegionError`; an unreachable one ``ConnectionError``."""
        ...

    def close(self) -> None:
        """Release connections and registrations."""
        ...


class TransportUnavailable(RuntimeError):
    """This transport cannot run here (no device, no library); the message says why."""


class RegionError(ValueError):
    """A shard refused a read: unknown region, slice out of bounds, answer too
    large, malformed request. The request was wrong, not the connection, so the
    connection stays open and usable; ``shard`` says which shard refused."""

    def __init__(self, shard: int | None, message: str) -> None:
        super().__init__(f"shard {shard}: {message}" if shard is not None else message)
        self.shard = shard
        self.reason = message
