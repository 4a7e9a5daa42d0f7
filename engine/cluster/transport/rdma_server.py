"""The shard's end of in-place reads with one-sided RDMA READs.

This is what Wukong does: the shard registers its arrays with the NIC once, and
a coordinator reads slices of them with RDMA READs that no shard CPU sees
(:mod:`engine.cluster.transport.rdma_reader`). So the only shard code is
set-up, and it is all here: registering and deregistering regions, and a small
TCP handshake listener that hands a reader the shard's queue-pair number,
LID/GID, PSN and each region's address and remote key, and connects one RC
queue pair per reader.
"""

from __future__ import annotations

import contextlib
import logging
import random
import socket
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.cluster.transport.base import RegionInfo, TransportUnavailable
from engine.cluster.transport.listener import ThreadedListener
from engine.cluster.transport.rdma_device import Endpoint, Peer, Verbs, load_pyverbs, probe_rdma
from engine.cluster.transport.rdma_handshake import (
    HS_CONNECT,
    HS_ERROR,
    HS_OK,
    HS_REGIONS,
    recv_handshake,
    send_handshake,
)
from engine.cluster.transport.wire import check_region, pack_regions

log = logging.getLogger("rivulet.cluster")


@dataclass
class _Registration:
    array: np.ndarray  # kept alive: the NIC reads its memory
    mr: Any
    info: RegionInfo
    in_place: bool


class RdmaRegionServer:
    """Registers regions with the NIC and connects readers' queue pairs.

    Each published array is registered as a memory region with remote-read
    access only, *from its own buffer*: pyverbs' ``MR(pd, length, access,
    address=array.ctypes.data)`` pins the pages of the memory map where they
    are, no copy. (Read-only access matters: the kernel pins a read-only
    ``np.load(mmap_mode='r')`` mapping only if the MR is not writable.) Older
    pyverbs whose ``MR`` takes no ``address`` get one copy per publish into an
    MR-owned buffer (``RegionInfo.address`` is then that buffer). Pinned memory
    counts against ``RLIMIT_MEMLOCK``.

    A reader connects to the handshake listener (:attr:`address`); the server
    creates one RC QP for it, moves it INIT -> RTR -> RTS, answers with its QP
    data and the region table, and destroys the QP when the reader hangs up.
    Withdrawing a region deregisters it: readers still holding its rkey get a
    remote access error and reconnect for a fresh table.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        device: str | None = None,
        ib_port: int = 1,
        gid_index: int = 0,
        verbs: Verbs | None = None,
    ) -> None:
        self._verbs = verbs
        self._device, self._ib_port, self._gid_index = device, ib_port, gid_index
        self._endpoint: Endpoint | None = None
        self._cq: Any = None
        self._regions: dict[str, _Registration] = {}
        self._qps: set[Any] = set()
        self._lock = threading.RLock()
        self._listener = ThreadedListener(host, port, self._handshake, "rdma-handshake")

    # lifecycle

    def _open(self) -> Endpoint:
        if self._endpoint is None:
            if self._verbs is None:
                reason = probe_rdma(None, device=self._device, ib_port=self._ib_port)
                if reason is not None:
                    raise TransportUnavailable(reason)
                self._verbs = load_pyverbs()
            self._endpoint = Endpoint(self._verbs, self._device, self._ib_port, self._gid_index)
            # Responders' CQ: RDMA READs complete only at the requester, so it
            # stays empty; RC QPs must still have one.
            self._cq = self._verbs.cq.CQ(self._endpoint.ctx, 16)
        return self._endpoint

    def start(self) -> tuple[str, int]:
        """Open the device and start the handshake listener; returns its address."""
        with self._lock:
            self._open()
        return self._listener.start()

    @property
    def address(self) -> tuple[str, int]:
        """The handshake listener's address (what shards advertise as "rdma")."""
        return self._listener.address

    def stop(self) -> None:
        """Hang up on readers, destroy their QPs, deregister regions, close the device."""
        self._listener.stop()
        with self._lock:
            for qp in list(self._qps):
                with contextlib.suppress(Exception):
                    qp.close()
            self._qps.clear()
            for reg in self._regions.values():
                if reg.mr is not None:
                    with contextlib.suppress(Exception):
                        reg.mr.close()
            self._regions.clear()
            if self._cq is not None:
                with contextlib.suppress(Exception):
                    self._cq.close()
                self._cq = None
            if self._endpoint is not None:
                self._endpoint.close()
                self._endpoint = None

    def __enter__(self) -> RdmaRegionServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # regions

    def publish(self, name: str, array: np.ndarray) -> RegionInfo:
        """Register ``array`` for remote reads as ``name``; a region of the same
        name is replaced (registered anew, then the old one deregistered)."""
        check_region(name, array)
        with self._lock:
            endpoint = self._open()
            reg = self._register(endpoint, name, array)
            old = self._regions.get(name)
            self._regions[name] = reg
            if old is not None and old.mr is not None:
                old.mr.close()
        return reg.info

    def withdraw(self, name: str) -> None:
        """Deregister ``name``; ``KeyError`` if it is not published."""
        with self._lock:
            reg = self._regions.pop(name)
            if reg.mr is not None:
                reg.mr.close()

    def regions(self) -> list[RegionInfo]:
        """What is published, with each region's address and rkey."""
        with self._lock:
            return [reg.info for reg in self._regions.values()]

    def registered_in_place(self, name: str) -> bool:
        """Whether ``name`` was registered from the array's own memory (no copy)."""
        with self._lock:
            return self._regions[name].in_place

    def _register(self, endpoint: Endpoint, name: str, array: np.ndarray) -> _Registration:
        verbs = endpoint.verbs
        dtype = array.dtype.str
        if array.nbytes == 0:  # nothing to read; a zero-length MR is refused by some drivers
            return _Registration(array, None, RegionInfo(name, dtype, 0), True)
        access = verbs.enums.IBV_ACCESS_REMOTE_READ
        address = array.ctypes.data
        in_place = True
        try:
            mr = verbs.mr.MR(endpoint.pd, array.nbytes, access, address=address)
        except TypeError:  # a pyverbs whose MR cannot take an existing address
            mr = verbs.mr.MR(endpoint.pd, array.nbytes, access)
            mr.write(array.tobytes(), array.nbytes)
            address, in_place = int(mr.buf), False
        return _Registration(array, mr, RegionInfo(name, dtype, len(array), address, int(mr.rkey)), in_place)

    # handshake

    def _handshake(self, sock: socket.socket) -> None:
        """Serve one reader: CONNECT once (its QP lives as long as this
        connection), REGIONS whenever it wants a fresh table."""
        qp = None
        try:
            while True:
                try:
                    message = recv_handshake(sock, answer=False)
                except ValueError as exc:
                    send_handshake(sock, HS_ERROR, None, str(exc).encode(), answer=True)
                    return
                if message is None:
                    return
                kind, peer, _ = message
                if kind == HS_REGIONS:
                    send_handshake(sock, HS_OK, None, pack_regions(self.regions()), answer=True)
                elif kind == HS_CONNECT and qp is None:
                    try:
                        qp, mine = self._accept_qp(peer)
                    except Exception as exc:  # noqa: BLE001 - tell the reader why
                        log.warning("rdma-handshake: cannot connect a queue pair: %s", exc)
                        why = f"cannot connect a queue pair: {exc}"
                        send_handshake(sock, HS_ERROR, None, why.encode(), answer=True)
                        continue
                    send_handshake(sock, HS_OK, mine, pack_regions(self.regions()), answer=True)
                else:
                    why = f"unknown kind {kind}"
                    if kind == HS_CONNECT:
                        why = "this connection already has a queue pair"
                    send_handshake(sock, HS_ERROR, None, why.encode(), answer=True)
        finally:
            if qp is not None:
                with self._lock:
                    self._qps.discard(qp)
                    with contextlib.suppress(Exception):
                        qp.close()

    def _accept_qp(self, peer: Peer) -> tuple[Any, Peer]:
        with self._lock:
            endpoint = self._open()
            qp, attr = endpoint.new_qp(self._cq, 1, endpoint.verbs.enums.IBV_ACCESS_REMOTE_READ)
            try:
                psn = random.getrandbits(24)
                endpoint.connect(qp, attr, peer, psn)
            except Exception:
                qp.close()
                raise
            self._qps.add(qp)
            return qp, endpoint.peer(int(qp.qp_num), psn)
