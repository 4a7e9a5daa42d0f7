"""An in-process fake of the pyverbs subset that the RDMA transport uses.

There is no RDMA device on the test machines, so the real RdmaRegionServer and
RdmaRangeReader run against this fake instead. It is strict where a NIC is,
so that the transport's mistakes fail here rather than on hardware:

- "remote" memory is real memory of this process: an MR registered with an
  address is the array's own buffer, and an RDMA READ is a ``memmove`` from it
  into the reader's MR, after the checks a responder makes: the rkey names a
  live MR of the responder QP's PD with remote-read access, the range lies
  inside it, the QP allows remote reads;
- the local SGE must lie inside a live MR of the requester's PD with
  local-write access (a READ writes locally);
- QPs go RESET -> INIT -> RTR -> RTS in order, RTR checks the address vector
  (LID, GID) and QP number against the peer, a READ checks the PSNs match, a
  QP that is not in RTS refuses post_send, a failed READ puts the QP in ERR
  and flushes what follows;
- only signalled work requests complete (or all, with ``sq_sig_all``); an
  unsignalled one holds its send-queue slot until a later completion is
  polled, and posting past ``max_send_wr`` outstanding fails with ENOMEM;
- a CQ that overflows raises on the next poll.

Enum values are rdma-core's. ``Fabric`` records what happened (reads, posts,
completions, an event log) for tests to assert on.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import itertools
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

ENUMS = SimpleNamespace(
    IBV_ACCESS_LOCAL_WRITE=1,
    IBV_ACCESS_REMOTE_WRITE=2,
    IBV_ACCESS_REMOTE_READ=4,
    IBV_ACCESS_REMOTE_ATOMIC=8,
    IBV_QPT_RC=2,
    IBV_QPT_UC=3,
    IBV_QPT_UD=4,
    IBV_QPS_RESET=0,
    IBV_QPS_INIT=1,
    IBV_QPS_RTR=2,
    IBV_QPS_RTS=3,
    IBV_QPS_SQD=4,
    IBV_QPS_SQE=5,
    IBV_QPS_ERR=6,
    IBV_WR_RDMA_WRITE=0,
    IBV_WR_SEND=2,
    IBV_WR_RDMA_READ=4,
    IBV_SEND_FENCE=1,
    IBV_SEND_SIGNALED=2,
    IBV_WC_SUCCESS=0,
    IBV_WC_LOC_PROT_ERR=4,
    IBV_WC_WR_FLUSH_ERR=5,
    IBV_WC_REM_ACCESS_ERR=10,
    IBV_WC_RETRY_EXC_ERR=12,
    IBV_WC_RDMA_READ=2,
    IBV_PORT_DOWN=1,
    IBV_PORT_ACTIVE=4,
    IBV_MTU_1024=3,
    IBV_MTU_4096=5,
)
E = ENUMS
MAX_RD_ATOM = 16


class FakeVerbsError(Exception):
    """What pyverbs raises (PyverbsRDMAError): a message and an errno."""

    def __init__(self, message: str, error_code: int = errno.EINVAL) -> None:
        super().__init__(f"{message} (errno {error_code})")
        self.error_code = error_code


@dataclass
class Fabric:
    """Every fake object of one "network", and what happened on it."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    qps: dict[int, FakeQP] = field(default_factory=dict)
    mrs: dict[int, FakeMR] = field(default_factory=dict)
    contexts: int = 0
    reads: int = 0  # RDMA READs executed successfully
    bytes_read: int = 0
    posts: int = 0  # post_send calls that were accepted
    failed_completions: int = 0
    events: list[tuple[str, int]] = field(default_factory=list)  # ("post" | "poll", qp_num)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(0x100))

    def new_id(self) -> int:
        return next(self._ids)


@dataclass
class Config:
    fabric: Fabric
    devices: tuple[str, ...]
    port_state: int
    open_error: str | None


def make_verbs(
    fabric: Fabric | None = None,
    *,
    devices: tuple[str, ...] = ("fake_rxe0",),
    port_state: int = E.IBV_PORT_ACTIVE,
    open_error: str | None = None,
    mr_takes_address: bool = True,
) -> SimpleNamespace:
    """A ``verbs`` namespace shaped like the pyverbs modules. ``mr_takes_address``
    False gives an MR without the ``address`` parameter (older pyverbs)."""
    config = Config(fabric or Fabric(), tuple(devices), port_state, open_error)
    mr_class = FakeMR if mr_takes_address else FakeMRWithoutAddress
    return SimpleNamespace(
        fabric=config.fabric,
        device=SimpleNamespace(
            get_device_list=lambda: [SimpleNamespace(name=n.encode()) for n in config.devices],
            Context=functools.partial(FakeContext, config),
        ),
        pd=SimpleNamespace(PD=FakePD),
        mr=SimpleNamespace(MR=mr_class),
        cq=SimpleNamespace(CQ=FakeCQ),
        qp=SimpleNamespace(QP=FakeQP, QPCap=QPCap, QPInitAttr=QPInitAttr, QPAttr=QPAttr),
        wr=SimpleNamespace(SendWR=SendWR, SGE=SGE),
        addr=SimpleNamespace(GID=GID, GlobalRoute=GlobalRoute, AHAttr=AHAttr),
        enums=ENUMS,
    )


# --- device, PD, MR -----------------------------------------------------------------------


class FakeContext:
    def __init__(self, config: Config, name: str = "") -> None:
        if name not in config.devices:
            raise FakeVerbsError(f"device {name} not found", errno.ENODEV)
        if config.open_error:
            raise FakeVerbsError(config.open_error, errno.EACCES)
        self.config = config
        self.fabric = config.fabric
        with self.fabric.lock:
            self.fabric.contexts += 1
            n = self.fabric.contexts
        self.lid = n  # distinct per context, so a wrong address vector is caught
        self.gid = f"fe80:0000:0000:0000:0000:0000:0000:{n:04x}"
        self.closed = False

    def query_port(self, port: int) -> SimpleNamespace:
        self._check()
        if port != 1:
            raise FakeVerbsError(f"port {port} does not exist")
        state = self.config.port_state
        return SimpleNamespace(state=state, lid=self.lid, active_mtu=E.IBV_MTU_4096, link_layer=1)

    def query_gid(self, port: int, index: int) -> GID:
        self._check()
        if port != 1 or index != 0:
            raise FakeVerbsError(f"no GID at port {port} index {index}")
        return GID(self.gid)

    def _check(self) -> None:
        if self.closed:
            raise FakeVerbsError("context is closed")

    def close(self) -> None:
        self.closed = True


class FakePD:
    def __init__(self, ctx: FakeContext) -> None:
        ctx._check()
        self.ctx = ctx
        self.fabric = ctx.fabric
        self.closed = False

    def close(self) -> None:
        self.closed = True


class FakeMR:
    """``MR(pd, length, access, address=None)``: registers ``address`` (user
    memory, not copied) or a buffer of its own."""

    def __init__(self, pd: FakePD, length: int = 0, access: int = 0, address: int | None = None) -> None:
        if pd.closed:
            raise FakeVerbsError("PD is closed")
        if length <= 0:
            raise FakeVerbsError(f"cannot register {length} bytes")
        writable = E.IBV_ACCESS_REMOTE_WRITE | E.IBV_ACCESS_REMOTE_ATOMIC
        if access & writable and not access & E.IBV_ACCESS_LOCAL_WRITE:
            raise FakeVerbsError("remote write/atomic access requires local write")
        self.pd = pd
        self.length = length
        self.access = access
        self.user_memory = bool(address)
        if address:
            self._buffer = None
            self.buf = int(address)
        else:
            self._buffer = ctypes.create_string_buffer(length)
            self.buf = ctypes.addressof(self._buffer)
        self.fabric = pd.fabric
        with self.fabric.lock:
            self.lkey = self.rkey = self.fabric.new_id()
            self.fabric.mrs[self.rkey] = self
        self.closed = False

    def covers(self, address: int, length: int) -> bool:
        return self.buf <= address and address + length <= self.buf + self.length

    def read(self, length: int, offset: int) -> bytes:
        if self.closed or offset < 0 or length < 0 or offset + length > self.length:
            raise FakeVerbsError(f"read of {length} bytes at {offset} outside the MR")
        return ctypes.string_at(self.buf + offset, length)

    def write(self, data: bytes, length: int, offset: int = 0) -> None:
        if self.user_memory:
            raise FakeVerbsError("the fake does not write into registered user memory")
        if self.closed or offset < 0 or offset + length > self.length or length > len(data):
            raise FakeVerbsError(f"write of {length} bytes at {offset} outside the MR")
        ctypes.memmove(self.buf + offset, data, length)

    def close(self) -> None:
        with self.fabric.lock:
            self.fabric.mrs.pop(self.rkey, None)
            self.closed = True


class FakeMRWithoutAddress(FakeMR):
    """An MR constructor without ``address``, as in older pyverbs."""

    def __init__(self, pd: FakePD, length: int = 0, access: int = 0) -> None:
        super().__init__(pd, length, access)


# --- plain attribute objects (cdef classes in pyverbs: no stray attributes) ----------------


class QPCap:
    __slots__ = ("max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data")

    def __init__(
        self, max_send_wr=1, max_recv_wr=10, max_send_sge=1, max_recv_sge=1, max_inline_data=0
    ) -> None:
        self.max_send_wr, self.max_recv_wr = max_send_wr, max_recv_wr
        self.max_send_sge, self.max_recv_sge = max_send_sge, max_recv_sge
        self.max_inline_data = max_inline_data


class QPInitAttr:
    __slots__ = ("qp_type", "qp_context", "send_cq", "recv_cq", "srq", "cap", "sq_sig_all")

    def __init__(
        self, qp_type=E.IBV_QPT_UD, qp_context=None, scq=None, rcq=None, srq=None, cap=None, sq_sig_all=1
    ) -> None:
        self.qp_type, self.qp_context, self.srq = qp_type, qp_context, srq
        self.send_cq, self.recv_cq = scq, rcq
        self.cap = cap or QPCap()
        self.sq_sig_all = sq_sig_all


class QPAttr:
    __slots__ = (
        "qp_state", "cur_qp_state", "port_num", "path_mtu", "pkey_index", "qp_access_flags", "dest_qp_num",
        "rq_psn", "sq_psn", "max_dest_rd_atomic", "max_rd_atomic", "min_rnr_timer", "timeout", "retry_cnt",
        "rnr_retry", "ah_attr", "qkey",
    )  # fmt: skip

    def __init__(
        self, qp_state=E.IBV_QPS_INIT, cur_qp_state=E.IBV_QPS_RESET, port_num=1, path_mtu=E.IBV_MTU_1024
    ) -> None:
        self.qp_state, self.cur_qp_state = qp_state, cur_qp_state
        self.port_num, self.path_mtu = port_num, path_mtu
        self.pkey_index = self.qp_access_flags = self.dest_qp_num = self.rq_psn = self.sq_psn = 0
        self.max_dest_rd_atomic = self.max_rd_atomic = self.min_rnr_timer = 0
        self.timeout = self.retry_cnt = self.rnr_retry = self.qkey = 0
        self.ah_attr = None


_GID_RE = re.compile(r"^[0-9a-fA-F]{4}(:[0-9a-fA-F]{4}){7}$")


class GID:
    __slots__ = ("gid",)

    def __init__(self, val: str | None = None) -> None:
        if val is not None and not _GID_RE.match(val):
            raise FakeVerbsError(f"Invalid GID value ({val})")
        self.gid = val or "0000:0000:0000:0000:0000:0000:0000:0000"

    def __str__(self) -> str:
        return self.gid


class GlobalRoute:
    __slots__ = ("dgid", "flow_label", "sgid_index", "hop_limit", "traffic_class")

    def __init__(
        self, dgid: GID | None = None, flow_label=0, sgid_index=0, hop_limit=1, traffic_class=0
    ) -> None:
        if not isinstance(dgid, GID):
            raise FakeVerbsError("GlobalRoute needs a GID")
        self.dgid = dgid.gid
        self.flow_label, self.sgid_index, self.hop_limit, self.traffic_class = (
            flow_label, sgid_index, hop_limit, traffic_class
        )


class AHAttr:
    __slots__ = ("dlid", "sl", "src_path_bits", "static_rate", "is_global", "port_num", "gr")

    def __init__(
        self, dlid=0, sl=0, src_path_bits=0, static_rate=0, is_global=0, port_num=1, gr=None
    ) -> None:
        if is_global and gr is None:
            raise FakeVerbsError("Global AH Attr is created but gr parameter is None")
        self.dlid, self.sl, self.src_path_bits, self.static_rate = dlid, sl, src_path_bits, static_rate
        self.is_global, self.port_num, self.gr = is_global, port_num, gr


class SGE:
    __slots__ = ("addr", "length", "lkey")

    def __init__(self, addr: int, length: int, lkey: int) -> None:
        if not 0 <= length < 1 << 32:
            raise FakeVerbsError(f"SGE length {length} does not fit 32 bits")
        self.addr, self.length, self.lkey = addr, length, lkey


class SendWR:
    __slots__ = (
        "wr_id", "opcode", "num_sge", "imm_data", "sg", "send_flags", "next_wr", "rkey", "remote_addr"
    )  # fmt: skip

    def __init__(
        self, wr_id=0, opcode=E.IBV_WR_SEND, num_sge=0, imm_data=0, sg=None, send_flags=E.IBV_SEND_SIGNALED,
        next_wr=None,
    ) -> None:  # fmt: skip
        if num_sge < 1 or sg is None:
            raise FakeVerbsError("A WR needs at least one SGE")
        self.wr_id, self.opcode, self.num_sge, self.imm_data = wr_id, opcode, num_sge, imm_data
        self.sg = list(sg)[:num_sge]
        self.send_flags, self.next_wr = send_flags, next_wr
        self.rkey = self.remote_addr = 0

    def set_wr_rdma(self, rkey: int, addr: int) -> None:
        self.rkey, self.remote_addr = rkey, addr


# --- CQ and QP ----------------------------------------------------------------------------


@dataclass
class WC:
    wr_id: int
    status: int
    opcode: int
    byte_len: int
    qp_num: int
    seq: int  # position in the QP's send queue (the fake's own bookkeeping)


class FakeCQ:
    def __init__(
        self, ctx: FakeContext, cqe: int = 100, cq_context=None, channel=None, comp_vector=0
    ) -> None:
        ctx._check()
        if cqe < 1:
            raise FakeVerbsError(f"cannot create a CQ of {cqe} entries")
        self.fabric = ctx.fabric
        self.cqe = cqe
        self.queue: deque[WC] = deque()
        self.overrun = False
        self.closed = False

    def push(self, wc: WC) -> None:
        if len(self.queue) >= self.cqe:
            self.overrun = True
        else:
            self.queue.append(wc)

    def poll(self, num_entries: int = 1) -> tuple[int, list[WC]]:
        with self.fabric.lock:
            if self.closed:
                raise FakeVerbsError("CQ is closed")
            if self.overrun:
                raise FakeVerbsError("CQ overrun: more completions than entries", errno.EOVERFLOW)
            wcs = [self.queue.popleft() for _ in range(min(num_entries, len(self.queue)))]
            for wc in wcs:
                self.fabric.events.append(("poll", wc.qp_num))
                qp = self.fabric.qps.get(wc.qp_num)
                if qp is not None:
                    qp.retire(wc.seq)
            return len(wcs), wcs

    def close(self) -> None:
        self.closed = True


class FakeQP:
    """An RC queue pair that executes RDMA READs when they are posted."""

    def __init__(self, pd: FakePD, init_attr: QPInitAttr, qp_attr: QPAttr | None = None) -> None:
        if init_attr.qp_type != E.IBV_QPT_RC:
            raise FakeVerbsError("the fake supports RC QPs only", errno.EOPNOTSUPP)
        if not isinstance(init_attr.send_cq, FakeCQ) or init_attr.send_cq.closed:
            raise FakeVerbsError("a QP needs a live send CQ")
        self.pd, self.fabric, self.cq = pd, pd.fabric, init_attr.send_cq
        self.max_send_wr = init_attr.cap.max_send_wr
        self.sq_sig_all = init_attr.sq_sig_all
        self.state = E.IBV_QPS_RESET
        self.access = self.dest_qp_num = self.rq_psn = self.sq_psn = 0
        self.outstanding: deque[int] = deque()  # send-queue positions not yet retired
        self._seq = itertools.count()
        with self.fabric.lock:
            self.qp_num = self.fabric.new_id()
            self.fabric.qps[self.qp_num] = self
        if qp_attr is not None:
            self.to_init(qp_attr)  # pyverbs: an RC QP given a QPAttr comes back in INIT

    @property
    def qp_state(self) -> int:
        return self.state

    def to_init(self, attr: QPAttr) -> None:
        if self.state not in (E.IBV_QPS_RESET, E.IBV_QPS_INIT):
            raise FakeVerbsError(f"cannot go to INIT from state {self.state}")
        if attr.port_num != 1:
            raise FakeVerbsError(f"port {attr.port_num} does not exist")
        self.access = attr.qp_access_flags
        self.state = E.IBV_QPS_INIT

    def to_rtr(self, attr: QPAttr) -> None:
        if self.state != E.IBV_QPS_INIT:
            self.to_init(attr)
        with self.fabric.lock:
            peer = self.fabric.qps.get(attr.dest_qp_num)
        if peer is None:
            raise FakeVerbsError(f"RTR towards QP {attr.dest_qp_num}, which does not exist")
        if not 1 <= attr.path_mtu <= E.IBV_MTU_4096:
            raise FakeVerbsError(f"bad path MTU {attr.path_mtu}")
        if not 0 < attr.max_dest_rd_atomic <= MAX_RD_ATOM:
            raise FakeVerbsError(f"max_dest_rd_atomic {attr.max_dest_rd_atomic} out of 1..{MAX_RD_ATOM}")
        ah = attr.ah_attr
        peer_ctx = peer.pd.ctx
        if not isinstance(ah, AHAttr) or ah.dlid != peer_ctx.lid:
            raise FakeVerbsError("the address vector does not lead to the destination QP's port")
        if ah.is_global and ah.gr.dgid != peer_ctx.gid:
            raise FakeVerbsError(f"the destination GID {ah.gr.dgid} is not the peer's {peer_ctx.gid}")
        self.dest_qp_num, self.rq_psn = attr.dest_qp_num, attr.rq_psn
        self.state = E.IBV_QPS_RTR

    def to_rts(self, attr: QPAttr) -> None:
        if self.state != E.IBV_QPS_RTR:
            self.to_rtr(attr)
        if not 0 < attr.max_rd_atomic <= MAX_RD_ATOM:
            raise FakeVerbsError(f"max_rd_atomic {attr.max_rd_atomic} out of 1..{MAX_RD_ATOM}")
        if not attr.timeout or not attr.retry_cnt:
            raise FakeVerbsError("RTS needs a timeout and a retry count")
        self.sq_psn = attr.sq_psn
        self.state = E.IBV_QPS_RTS

    def retire(self, seq: int) -> None:
        while self.outstanding and self.outstanding[0] <= seq:
            self.outstanding.popleft()

    def post_send(self, wr: SendWR, bad_wr: SendWR | None = None) -> None:
        chain = []
        while wr is not None:
            chain.append(wr)
            wr = wr.next_wr
        with self.fabric.lock:
            if self.state not in (E.IBV_QPS_RTS, E.IBV_QPS_ERR):
                raise FakeVerbsError(f"post_send on a QP in state {self.state}")
            if any(w.opcode != E.IBV_WR_RDMA_READ for w in chain):
                raise FakeVerbsError("the fake executes RDMA READs only", errno.EOPNOTSUPP)
            if len(self.outstanding) + len(chain) > self.max_send_wr:
                raise FakeVerbsError(
                    f"send queue full: {len(self.outstanding)} outstanding"
                    f" + {len(chain)} > {self.max_send_wr}",
                    errno.ENOMEM,
                )
            self.fabric.posts += 1
            self.fabric.events.append(("post", self.qp_num))
            for w in chain:
                seq = next(self._seq)
                self.outstanding.append(seq)
                self._execute(w, seq)

    def _execute(self, wr: SendWR, seq: int) -> None:
        length = sum(s.length for s in wr.sg)
        status = E.IBV_WC_WR_FLUSH_ERR if self.state == E.IBV_QPS_ERR else self._read(wr, length)
        signalled = self.sq_sig_all or wr.send_flags & E.IBV_SEND_SIGNALED
        if status != E.IBV_WC_SUCCESS:
            self.state = E.IBV_QPS_ERR
            self.fabric.failed_completions += 1
            self.cq.push(WC(wr.wr_id, status, E.IBV_WC_RDMA_READ, 0, self.qp_num, seq))
        elif signalled:
            self.cq.push(WC(wr.wr_id, status, E.IBV_WC_RDMA_READ, length, self.qp_num, seq))

    def _read(self, wr: SendWR, length: int) -> int:
        peer = self.fabric.qps.get(self.dest_qp_num)
        if (
            peer is None
            or peer.state not in (E.IBV_QPS_RTR, E.IBV_QPS_RTS)
            or peer.dest_qp_num != self.qp_num
            or peer.rq_psn != self.sq_psn
            or self.rq_psn != peer.sq_psn
        ):
            return E.IBV_WC_RETRY_EXC_ERR  # nobody answers (or answers out of sequence)
        if not peer.access & E.IBV_ACCESS_REMOTE_READ:
            return E.IBV_WC_REM_ACCESS_ERR
        remote = self.fabric.mrs.get(wr.rkey)
        if (
            remote is None
            or remote.pd is not peer.pd
            or not remote.access & E.IBV_ACCESS_REMOTE_READ
            or not remote.covers(wr.remote_addr, length)
        ):
            return E.IBV_WC_REM_ACCESS_ERR
        cursor = wr.remote_addr
        for sge in wr.sg:
            local = self.fabric.mrs.get(sge.lkey)
            if (
                local is None
                or local.pd is not self.pd
                or not local.access & E.IBV_ACCESS_LOCAL_WRITE
                or not local.covers(sge.addr, sge.length)
            ):
                return E.IBV_WC_LOC_PROT_ERR
            ctypes.memmove(sge.addr, cursor, sge.length)
            cursor += sge.length
        self.fabric.reads += 1
        self.fabric.bytes_read += length
        return E.IBV_WC_SUCCESS

    def close(self) -> None:
        with self.fabric.lock:
            self.fabric.qps.pop(self.qp_num, None)
            self.state = E.IBV_QPS_RESET
            self.outstanding.clear()


def live_qps(verbs: SimpleNamespace) -> list[Any]:
    """The QPs not yet destroyed on the verbs' fabric."""
    with verbs.fabric.lock:
        return list(verbs.fabric.qps.values())
