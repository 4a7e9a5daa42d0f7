"""The coordinator's end of in-place reads with one-sided RDMA READs.

A reader connects to each shard's handshake listener
(:mod:`engine.cluster.transport.rdma_server`) once, then reads slices of the
shard's registered regions straight from its memory: no shard CPU runs per
read. Everything that happens per gather is here: checking slices against the
region table before posting (a bad READ would break the queue pair), laying
the reads out in a registered receive buffer, posting them in batches,
polling completions, and reconnecting a shard whose queue pair failed.
"""

from __future__ import annotations

import contextlib
import random
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.cluster.transport.base import RegionError, RegionInfo, Slices, TransportUnavailable
from engine.cluster.transport.rdma_device import Endpoint, Verbs, load_pyverbs, probe_rdma
from engine.cluster.transport.rdma_handshake import (
    HS_CONNECT,
    HS_OK,
    HS_REGIONS,
    recv_handshake,
    send_handshake,
)
from engine.cluster.transport.wire import RequestRefused, as_int64, check_bounds, unpack_regions

#: Receive buffer registered per shard connection: the most one gather may read
#: from one shard. Pinned memory, so it is bounded rather than grown.
DEFAULT_BUFFER_BYTES = 32 << 20
#: Work requests posted per batch (the send queue's depth); more slices are
#: read in several batches, each waiting for the previous one's completion.
DEFAULT_MAX_OUTSTANDING = 256

_WC_NAMES = {
    0: "success",
    1: "local length error",
    2: "local QP operation error",
    4: "local protection error",
    5: "work request flushed",
    8: "local access error",
    9: "remote invalid request",
    10: "remote access error",
    11: "remote operation error",
    12: "transport retry counter exceeded",
    13: "RNR retry counter exceeded",
}


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


class _LinkFailed(Exception):
    """A shard's QP reported an error (it is now unusable) or stayed silent."""

    def __init__(self, shard: int, message: str, *, access: bool = False) -> None:
        super().__init__(message)
        self.shard = shard
        self.access = access


@dataclass
class _Link:
    """One shard: the handshake socket, our QP, its CQ, the receive buffer."""

    shard: int
    sock: socket.socket
    qp: Any
    cq: Any
    mr: Any
    regions: dict[str, RegionInfo]
    batch: int = 0

    def close(self) -> None:
        for obj in (self.qp, self.cq, self.mr):
            with contextlib.suppress(Exception):
                obj.close()
        with contextlib.suppress(OSError):
            self.sock.close()


@dataclass
class _Plan:
    """One shard's part of a gather: the READs to post and how to cut the buffer."""

    link: _Link
    local: np.ndarray  # byte offsets in the receive buffer
    remote: np.ndarray  # remote virtual addresses
    rkeys: np.ndarray
    lengths: np.ndarray  # bytes
    layout: list[tuple[np.dtype, int, int]]  # per request: dtype, count, buffer offset
    size: int  # bytes used in the buffer
    next: int = 0  # first READ not yet posted
    waiting: int | None = None  # wr_id of the signalled READ of the batch in flight
    failure: _LinkFailed | None = field(default=None)


class RdmaRangeReader:
    """Reads slices of shards' regions with one-sided RDMA READs.

    Per shard, a connection is set up on first use: a TCP handshake, an RC QP,
    a CQ and a registered receive buffer of ``buffer_bytes``. A gather checks
    every slice against the region table *before* posting (an out-of-bounds READ
    would put the QP in the error state), then posts one READ per non-empty
    slice, to every shard before polling any, in batches of at most
    ``max_outstanding`` with only the last signalled, and polls the CQs.

    A failed completion (stale rkey after a withdraw, a restarted shard) breaks
    that shard's QP: the reader reconnects once, with a fresh region table, and
    reads again. Gathers are serialised by a lock (they share the buffers);
    each takes microseconds on a real NIC. Results are read-only arrays.
    """

    name = "rdma"

    def __init__(
        self,
        addresses: dict[int, tuple[str, int]],
        *,
        verbs: Verbs | None = None,
        device: str | None = None,
        ib_port: int = 1,
        gid_index: int = 0,
        buffer_bytes: int = DEFAULT_BUFFER_BYTES,
        max_outstanding: int = DEFAULT_MAX_OUTSTANDING,
        timeout: float = 5.0,
    ) -> None:
        if not 1 <= max_outstanding <= 16384:
            raise ValueError(f"max_outstanding must be 1 to 16384, got {max_outstanding}")
        if buffer_bytes < 4096:
            raise ValueError(f"buffer_bytes must be at least 4096, got {buffer_bytes}")
        if verbs is None:
            reason = probe_rdma(None, device=device, ib_port=ib_port)
            if reason is not None:
                raise TransportUnavailable(reason)
            verbs = load_pyverbs()
        self._verbs = verbs
        self._endpoint = Endpoint(verbs, device, ib_port, gid_index)
        self._addresses = {s: tuple(a) for s, a in addresses.items()}
        self.buffer_bytes = buffer_bytes
        self.max_outstanding = max_outstanding
        self.timeout = timeout
        self._links: dict[int, _Link] = {}
        self._lock = threading.RLock()
        self._closed = False

    # public

    def gather(self, requests: dict[int, list[Slices]]) -> dict[int, list[np.ndarray]]:
        """Read every shard's slices at once; a shard whose QP failed is
        reconnected and read again, once, before its failure is raised."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the reader is closed")
            results, failures = self._gather_once(requests)
            if failures:
                for shard in failures:
                    self._drop(shard)
                again, failures = self._gather_once({s: requests[s] for s in failures})
                results.update(again)
                if failures:
                    failure = failures[min(failures)]
                    self._drop(failure.shard)
                    if failure.access:
                        raise RegionError(failure.shard, f"RDMA READ refused after reconnecting: {failure}")
                    raise ConnectionError(f"shard {failure.shard}: {failure}")
            return {shard: results[shard] for shard in requests}

    def regions(self, shard: int) -> list[RegionInfo]:
        """The shard's region table, fetched afresh."""
        with self._lock:
            return list(self._refresh(self._link(shard)).values())

    def update_address(self, shard: int, address: tuple[str, int]) -> None:
        """Point ``shard`` at a new handshake address (restarted shard)."""
        with self._lock:
            self._addresses[shard] = tuple(address)
            self._drop(shard)

    def close(self) -> None:
        """Destroy every QP, CQ and buffer, then the PD and the device context."""
        with self._lock:
            self._closed = True
            for shard in list(self._links):
                self._drop(shard)
            self._endpoint.close()

    def __enter__(self) -> RdmaRangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # connections

    def _link(self, shard: int) -> _Link:
        link = self._links.get(shard)
        if link is None:
            link = self._links[shard] = self._connect(shard)
        return link

    def _drop(self, shard: int) -> None:
        link = self._links.pop(shard, None)
        if link is not None:
            link.close()

    def _connect(self, shard: int) -> _Link:
        address = self._addresses.get(shard)
        if address is None:
            raise ValueError(f"no RDMA address for shard {shard} (known: {sorted(self._addresses)})")
        host, port = address
        try:
            sock = socket.create_connection(address, timeout=self.timeout)
        except OSError as exc:
            why = f"shard {shard} RDMA handshake at {host}:{port} is unreachable: {exc}"
            raise ConnectionError(why) from exc
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        v, e, ep = self._verbs, self._verbs.enums, self._endpoint
        made: list[Any] = []
        try:
            cq = v.cq.CQ(ep.ctx, self.max_outstanding + 1)
            made.append(cq)
            mr = v.mr.MR(ep.pd, self.buffer_bytes, e.IBV_ACCESS_LOCAL_WRITE)
            made.append(mr)
            qp, attr = ep.new_qp(cq, self.max_outstanding, 0)
            made.append(qp)
            psn = random.getrandbits(24)
            send_handshake(sock, HS_CONNECT, ep.peer(int(qp.qp_num), psn), answer=False)
            answer = recv_handshake(sock, answer=True)
            if answer is None:
                raise ConnectionError("the shard closed the handshake")
            status, peer, body = answer
            if status != HS_OK:
                raise ConnectionError(f"handshake refused: {body.decode('utf-8', 'replace')}")
            regions = {info.name: info for info in unpack_regions(body)}
            ep.connect(qp, attr, peer, psn)
        except Exception as exc:
            for obj in reversed(made):
                with contextlib.suppress(Exception):
                    obj.close()
            sock.close()
            if isinstance(exc, ConnectionError):
                raise ConnectionError(f"shard {shard} at {host}:{port}: {exc}") from exc
            why = f"shard {shard} at {host}:{port}: cannot connect a queue pair: {exc}"
            raise ConnectionError(why) from exc
        return _Link(shard, sock, qp, cq, mr, regions)

    def _refresh(self, link: _Link) -> dict[str, RegionInfo]:
        try:
            send_handshake(link.sock, HS_REGIONS, None, answer=False)
            answer = recv_handshake(link.sock, answer=True)
        except (OSError, ValueError) as exc:
            self._drop(link.shard)
            raise ConnectionError(f"shard {link.shard}: region table request failed: {exc}") from exc
        if answer is None or answer[0] != HS_OK:
            self._drop(link.shard)
            raise ConnectionError(f"shard {link.shard}: region table request refused")
        link.regions = {info.name: info for info in unpack_regions(answer[2])}
        return link.regions

    # gathering

    def _plan(self, shard: int, slices: list[Slices]) -> _Plan:
        """Check every slice against the table and lay the reads out in the
        buffer (each request's data 8-byte aligned), refusing what does not fit."""
        link = self._link(shard)
        local, remote, rkeys, lengths, layout = [], [], [], [], []
        offset = 0
        for req in slices:
            info = link.regions.get(req.region) or self._refresh(link).get(req.region)
            if info is None:
                raise RegionError(shard, f"region {req.region!r} is not published")
            starts, stops = as_int64(req.starts, "starts"), as_int64(req.stops, "stops")
            try:
                count = check_bounds(req.region, info.length, starts, stops)
            except RequestRefused as exc:
                raise RegionError(shard, str(exc)) from None
            dtype = np.dtype(info.dtype)
            nbytes = count * dtype.itemsize
            if offset + nbytes > self.buffer_bytes:
                raise RegionError(
                    shard,
                    f"gather needs over {offset + nbytes} bytes, more than the {self.buffer_bytes} byte RDMA "
                    "receive buffer; split it or raise buffer_bytes",
                )
            sizes = (stops - starts) * dtype.itemsize
            keep = sizes > 0
            local.append((offset + np.cumsum(sizes) - sizes)[keep])
            remote.append((info.address + starts * dtype.itemsize)[keep])
            rkeys.append(np.full(int(keep.sum()), info.rkey, dtype=np.int64))
            lengths.append(sizes[keep])
            layout.append((dtype, count, offset))
            offset += nbytes + (-nbytes % 8)
        return _Plan(link, _cat(local), _cat(remote), _cat(rkeys), _cat(lengths), layout, offset)

    def _gather_once(
        self, requests: dict[int, list[Slices]]
    ) -> tuple[dict[int, list[np.ndarray]], dict[int, _LinkFailed]]:
        plans = {shard: self._plan(shard, slices) for shard, slices in requests.items()}
        for plan in plans.values():
            self._post_next(plan)
        self._poll(plans)
        results: dict[int, list[np.ndarray]] = {}
        failures: dict[int, _LinkFailed] = {}
        for shard, plan in plans.items():
            if plan.failure is not None:
                failures[shard] = plan.failure
                continue
            data = plan.link.mr.read(plan.size, 0) if plan.size else b""
            arrays = []
            for dtype, count, offset in plan.layout:
                arr = np.frombuffer(data, dtype, count, offset) if count else np.zeros(0, dtype)
                arr.flags.writeable = False
                arrays.append(arr)
            results[shard] = arrays
        return results, failures

    def _post_next(self, plan: _Plan) -> None:
        """Post the next batch as one chained list (one doorbell), the last READ
        signalled; its completion means the whole batch has landed."""
        start = plan.next
        end = min(start + self.max_outstanding, len(plan.lengths))
        if start >= end:
            return
        v, e, link = self._verbs, self._verbs.enums, plan.link
        link.batch += 1
        base, lkey = int(link.mr.buf), link.mr.lkey
        head = None
        for i in range(end - 1, start - 1, -1):
            sge = v.wr.SGE(base + int(plan.local[i]), int(plan.lengths[i]), lkey)
            last = i == end - 1
            wr = v.wr.SendWR(
                wr_id=link.batch if last else 0,
                opcode=e.IBV_WR_RDMA_READ,
                num_sge=1,
                sg=[sge],
                send_flags=e.IBV_SEND_SIGNALED if last else 0,
                next_wr=head,
            )
            wr.set_wr_rdma(int(plan.rkeys[i]), int(plan.remote[i]))
            head = wr
        try:
            link.qp.post_send(head)
        except Exception as exc:  # noqa: BLE001 - e.g. ENOMEM: the send queue is full
            why = f"posting {end - start} RDMA READs failed (send queue depth {self.max_outstanding}): {exc}"
            plan.failure = _LinkFailed(link.shard, why)
            return
        plan.next, plan.waiting = end, link.batch

    def _poll(self, plans: dict[int, _Plan]) -> None:
        """Busy-poll the CQs of the shards with a batch in flight until all are
        read or failed; a shard silent past the timeout fails."""
        deadline = time.monotonic() + self.timeout
        idle = 0
        while True:
            busy = [p for p in plans.values() if p.waiting is not None and p.failure is None]
            if not busy:
                return
            progressed = False
            for plan in busy:
                npolled, wcs = plan.link.cq.poll(1)
                if not npolled:
                    continue
                progressed = True
                wc = wcs[0]
                if wc.status != self._verbs.enums.IBV_WC_SUCCESS:
                    name = _WC_NAMES.get(int(wc.status), "error")
                    access = wc.status == self._verbs.enums.IBV_WC_REM_ACCESS_ERR
                    why = f"RDMA READ completed with status {wc.status} ({name})"
                    plan.failure = _LinkFailed(plan.link.shard, why, access=access)
                elif wc.wr_id == plan.waiting:
                    plan.waiting = None
                    self._post_next(plan)
            if progressed:
                idle = 0
                continue
            idle += 1
            if idle % 64 == 0:
                if time.monotonic() > deadline:
                    for plan in busy:
                        plan.failure = _LinkFailed(
                            plan.link.shard, f"no RDMA completion within {self.timeout} s (shard down?)"
                        )
                    return
                time.sleep(0)  # let other threads (a co-located server, in tests) run
