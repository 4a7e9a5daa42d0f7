"""Running a step in place: the coordinator reads the owners' neighbour lists itself.

For a bound key ``v`` in a role, the shard's CSR arrays (``engine.store.csr``)
give its pairs at ``vertex_offsets[v // shards]`` and each pair's neighbours
at ``pair_offsets``; three batched reads (offsets, pairs, neighbours), each
one round trip to all the owning shards at once, find every edge of every
key without running code on any shard. That beats a fork-join when a round
trip of the transport (TCP here, an RDMA READ where a device exists) costs a
third of a call through Ray, and the step is small: :meth:`InPlaceReads.prefers`
compares the two with the latencies measured when the cluster starts.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np

from engine.cluster.shard_calls import ShardUnavailable
from engine.cluster.transport.base import RangeReader, Slices
from engine.store.graph import Matches

log = logging.getLogger("rivulet.cluster")

#: in-place reads take three round trips
ROUNDS = 3
#: steps with more keys than this fork-join (their answers dwarf the call)
MAX_KEYS = 256


class InPlaceReads:
    """In-place steps over ``reader``; ``regions[shard]`` names the regions
    each shard publishes, with their lengths."""

    def __init__(self, reader: RangeReader, shards: int, regions: dict[int, dict[str, int]],
                 read_latency: float, fork_latency: float,
                 locate: Callable[[], dict[int, dict]] | None = None, chosen: bool = False) -> None:
        self.reader = reader
        #: the operator named the transport: small steps run in place whatever the latencies
        self.chosen = chosen
        #: the shards' current addresses (a restarted shard serves on a new port)
        self.locate = locate
        self.shards = shards
        self.regions = regions
        self.read_latency = read_latency
        self.fork_latency = fork_latency
        #: steps run in place and by fork-join since start (reported in /metrics and benchmarks)
        self.steps = {"in_place": 0, "fork_join": 0}

    def prefers(self, graph_id: int, role: str, keys: int) -> bool:
        """Whether a step with ``keys`` bound keys costs less in place."""
        if keys > MAX_KEYS or (not self.chosen and ROUNDS * self.read_latency >= self.fork_latency):
            self.steps["fork_join"] += 1
            return False
        self.steps["in_place"] += 1
        return True

    def _gather(self, requests: dict[int, list[Slices]]) -> dict[int, list[np.ndarray]]:
        """One round trip; a shard that refuses the connection may have been
        restarted elsewhere: ask where it is now, once, then give up with a
        retryable error (reads change nothing, so a retry is always safe)."""
        if not requests:
            return {}
        try:
            return self.reader.gather(requests)
        except ConnectionError as first:
            if self.locate is None or not hasattr(self.reader, "update_address"):
                raise ShardUnavailable(str(first)) from None
            for shard, addresses in self.locate().items():
                if self.reader.name in addresses:
                    self.reader.update_address(shard, tuple(addresses[self.reader.name]))
            try:
                return self.reader.gather(requests)
            except ConnectionError as again:
                raise ShardUnavailable(str(again)) from None

    def match(self, graph_id: int, role: str, key: np.ndarray, p: np.ndarray | None,
              other: np.ndarray | None, by_shard: dict[int, np.ndarray]) -> list[Matches]:
        """The step's matches, columns in the role's order (key, p, other),
        with the input rows of ``by_shard``."""
        prefix = f"g{graph_id}/{role}/"
        local: dict[int, np.ndarray] = {}
        offsets_req: dict[int, list[Slices]] = {}
        for k, rows in by_shard.items():
            n_vertices = self.regions[k].get(prefix + "vertex_offsets", 1) - 1
            local[k] = np.asarray(key[rows], dtype=np.int64) // self.shards
            inside = np.minimum(local[k], max(n_vertices - 1, 0))
            local[k] = np.where(local[k] < n_vertices, local[k], -1)
            offsets_req[k] = [Slices(prefix + "vertex_offsets", inside, inside + 2)] if n_vertices > 0 else []
        offsets = self._gather({k: r for k, r in offsets_req.items() if r})
        pairs_req: dict[int, list[Slices]] = {}
        ranges: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for k in by_shard:
            if k not in offsets:
                continue
            pair_bounds = offsets[k][0].astype(np.int64).reshape(-1, 2)
            lo = np.where(local[k] >= 0, pair_bounds[:, 0], 0)
            hi = np.where(local[k] >= 0, pair_bounds[:, 1], 0)
            ranges[k] = lo, hi
            pairs_req[k] = [Slices(prefix + "pair_predicates", lo, hi),
                            Slices(prefix + "pair_offsets", lo, hi + 1)]
        pairs = self._gather(pairs_req) if pairs_req else {}
        neighbour_req: dict[int, list[Slices]] = {}
        chosen: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for k, (lo, hi) in ranges.items():
            predicates = pairs[k][0].astype(np.int64)
            bounds = pairs[k][1].astype(np.int64)
            # row i's pairs are lo[i]..hi[i]; its pair_offsets slice has one more entry
            sizes = hi - lo
            row_of_pair = np.repeat(np.arange(len(lo), dtype=np.int64), sizes)
            within = np.arange(len(predicates), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            at = np.repeat(np.cumsum(sizes + 1) - (sizes + 1), sizes) + within
            first, last = bounds[at], bounds[at + 1]
            keep = np.ones(len(predicates), dtype=bool)
            if p is not None:
                keep = predicates == p[by_shard[k]][row_of_pair]
            chosen[k] = row_of_pair[keep], predicates[keep]
            neighbour_req[k] = [Slices(prefix + "neighbours", first[keep], last[keep])]
            ranges[k] = first[keep], last[keep]
        neighbours = self._gather({k: r for k, r in neighbour_req.items() if len(r[0].starts)})
        found: list[Matches] = []
        for k, (rows_of_pair, predicates) in chosen.items():
            if k not in neighbours:
                continue
            first, last = ranges[k]
            counts = last - first
            row = np.repeat(rows_of_pair, counts)
            nbr = neighbours[k][0].astype(np.int64)
            rows = by_shard[k][row]
            pred = np.repeat(predicates, counts)
            if other is not None:
                keep = nbr == other[rows]
                rows, pred, nbr = rows[keep], pred[keep], nbr[keep]
            found.append((rows, key[rows], pred, nbr))
        return found


def measure(call, repeats: int = 20) -> float:
    """Median seconds of ``call()`` (after one warm-up call)."""
    call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return float(np.median(times))

