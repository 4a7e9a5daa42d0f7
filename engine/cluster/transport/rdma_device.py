"""Opening an RDMA device through pyverbs, and what both RDMA ends do with it.

The region server and the range reader each open a device, allocate a
protection domain and connect RC queue pairs in the same way; so does
:func:`probe_rdma`, which decides whether RDMA can be used at all. That
device-level code is here, apart from what the two ends do with their QPs.

Verbs access goes through an injected ``verbs`` namespace with the attributes
``device, pd, mr, cq, qp, wr, addr, enums`` that mirror the pyverbs modules
(:func:`load_pyverbs` imports them lazily, so importing this module needs no
pyverbs). Tests pass a fake with the same shape. The pyverbs API assumed:

- ``device.get_device_list()`` (items with ``.name``, bytes),
  ``device.Context(name=)`` with ``query_port(port)`` (``.state``, ``.lid``,
  ``.active_mtu``), ``query_gid(port, index)`` (``.gid``, "xxxx:...:xxxx"),
  ``close()``;
- ``pd.PD(ctx)``; ``mr.MR(pd, length, access, address=)`` (``.buf``, ``.lkey``,
  ``.rkey``, ``read(length, offset)``, ``write(data, length)``, ``close()``);
- ``cq.CQ(ctx, cqe)`` with ``poll(n) -> (npolled, [wc])`` (``.status``,
  ``.wr_id``);
- ``qp.QPCap``, ``qp.QPInitAttr(qp_type=, scq=, rcq=, cap=, sq_sig_all=)``,
  ``qp.QPAttr(port_num=)`` (settable ``pkey_index, qp_access_flags, path_mtu,
  dest_qp_num, rq_psn, sq_psn, max_dest_rd_atomic, max_rd_atomic,
  min_rnr_timer, timeout, retry_cnt, rnr_retry, ah_attr``),
  ``qp.QP(pd, init_attr, qp_attr)`` (an RC QP comes back in INIT) with
  ``qp_num``, ``to_rtr(attr)``, ``to_rts(attr)``, ``post_send(wr)``;
- ``wr.SGE(addr, length, lkey)``, ``wr.SendWR(wr_id=, opcode=, num_sge=, sg=,
  send_flags=, next_wr=)`` with ``set_wr_rdma(rkey, addr)``;
- ``addr.GID(str)``, ``addr.GlobalRoute(dgid=, sgid_index=)``,
  ``addr.AHAttr(dlid=, port_num=, is_global=, gr=)``;
- ``enums``: ``IBV_ACCESS_LOCAL_WRITE``, ``IBV_ACCESS_REMOTE_READ``,
  ``IBV_QPT_RC``, ``IBV_WR_RDMA_READ``, ``IBV_SEND_SIGNALED``,
  ``IBV_WC_SUCCESS``, ``IBV_WC_REM_ACCESS_ERR``, ``IBV_PORT_ACTIVE``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from engine.cluster.transport.base import TransportUnavailable

#: A namespace with the pyverbs modules ``device, pd, mr, cq, qp, wr, addr, enums``.
Verbs = Any

PYVERBS_MODULES = ("device", "pd", "mr", "cq", "qp", "wr", "addr", "enums")

#: Outstanding RDMA READs per QP in each direction (max_rd_atomic and
#: max_dest_rd_atomic); 16 is what current NICs allow.
RD_ATOMIC = 16


def load_pyverbs() -> SimpleNamespace:
    """The pyverbs modules as one namespace (imported on first use only, so a
    machine without rdma-core can import Rivulet)."""
    return SimpleNamespace(**{name: importlib.import_module(f"pyverbs.{name}") for name in PYVERBS_MODULES})


def probe_rdma(verbs: Verbs | None = None, *, device: str | None = None, ib_port: int = 1) -> str | None:
    """None when an RDMA device is usable here, else why not: pyverbs cannot be
    imported, no device is listed, the device cannot be opened, or its port is
    not active. Opens and closes the device; allocates nothing else."""
    if verbs is None:
        try:
            verbs = load_pyverbs()
        except Exception as exc:  # noqa: BLE001 - ImportError, or OSError loading libibverbs
            reason = f"pyverbs is not importable ({type(exc).__name__}: {exc})"
            if not os.path.isdir("/sys/class/infiniband"):
                reason += "; /sys/class/infiniband is absent (no RDMA device or no kernel support)"
            return reason
    try:
        ctx, name = open_device(verbs, device)
    except TransportUnavailable as exc:
        return str(exc)
    try:
        port = ctx.query_port(ib_port)
        if port.state != verbs.enums.IBV_PORT_ACTIVE:
            return f"port {ib_port} of RDMA device {name} is not active (state {port.state})"
    except Exception as exc:  # noqa: BLE001
        return f"port {ib_port} of RDMA device {name} cannot be queried: {exc}"
    finally:
        with contextlib.suppress(Exception):
            ctx.close()
    return None


def _device_name(dev: Any) -> str:
    name = dev.name
    return name.decode() if isinstance(name, bytes) else str(name)


def open_device(verbs: Verbs, device: str | None) -> tuple[Any, str]:
    """Open ``device`` (default: the first listed); ``TransportUnavailable``
    says why it cannot be."""
    try:
        names = [_device_name(d) for d in verbs.device.get_device_list()]
    except Exception as exc:  # noqa: BLE001
        raise TransportUnavailable(f"RDMA devices cannot be listed: {exc}") from exc
    if not names:
        raise TransportUnavailable("no RDMA device found (the device list is empty)")
    name = names[0] if device is None else device
    if name not in names:
        raise TransportUnavailable(f"RDMA device {name!r} not found (found: {', '.join(names)})")
    try:
        return verbs.device.Context(name=name), name
    except Exception as exc:  # noqa: BLE001
        raise TransportUnavailable(f"RDMA device {name} cannot be opened: {exc}") from exc


@dataclass
class Peer:
    """What one side of an RC connection tells the other."""

    qp_num: int
    psn: int
    lid: int
    gid: bytes
    mtu: int


class Endpoint:
    """An opened device: context, protection domain and the port's addressing."""

    def __init__(self, verbs: Verbs, device: str | None, ib_port: int, gid_index: int) -> None:
        self.verbs = verbs
        self.ctx, self.name = open_device(verbs, device)
        self.ib_port = ib_port
        self.gid_index = gid_index
        try:
            port = self.ctx.query_port(ib_port)
            self.lid = int(port.lid)
            self.mtu = int(port.active_mtu)
            self.gid = _gid_bytes(self.ctx.query_gid(ib_port, gid_index))
            self.pd = verbs.pd.PD(self.ctx)
        except Exception as exc:
            with contextlib.suppress(Exception):
                self.ctx.close()
            why = f"RDMA device {self.name} port {ib_port} cannot be used: {exc}"
            raise TransportUnavailable(why) from exc

    def peer(self, qp_num: int, psn: int) -> Peer:
        return Peer(qp_num, psn, self.lid, self.gid, self.mtu)

    def new_qp(self, cq: Any, max_send_wr: int, access: int) -> tuple[Any, Any]:
        """An RC QP in INIT (pyverbs moves it there when given a QPAttr). Only
        the signalled READs complete (sq_sig_all=0): one completion per batch."""
        v, e = self.verbs, self.verbs.enums
        cap = v.qp.QPCap(max_send_wr=max_send_wr, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
        init = v.qp.QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap, sq_sig_all=0)
        attr = v.qp.QPAttr(port_num=self.ib_port)
        attr.pkey_index = 0
        attr.qp_access_flags = access
        return v.qp.QP(self.pd, init, attr), attr

    def connect(self, qp: Any, attr: Any, peer: Peer, psn: int) -> None:
        """INIT -> RTR -> RTS towards ``peer``: our send PSN is ``psn``, we
        expect the peer's; the path MTU is the smaller of the two ports'."""
        attr.path_mtu = min(self.mtu, peer.mtu)
        attr.dest_qp_num = peer.qp_num
        attr.rq_psn = peer.psn
        attr.max_dest_rd_atomic = RD_ATOMIC
        attr.min_rnr_timer = 12
        attr.ah_attr = self._ah_attr(peer)
        qp.to_rtr(attr)
        attr.sq_psn = psn
        attr.timeout = 14  # 4.096 us * 2^14 = 67 ms per try
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        attr.max_rd_atomic = RD_ATOMIC
        qp.to_rts(attr)

    def _ah_attr(self, peer: Peer) -> Any:
        """Route by GID when the peer has one (RoCE needs it), else by LID (InfiniBand)."""
        a = self.verbs.addr
        if any(peer.gid):
            gr = a.GlobalRoute(dgid=a.GID(_gid_str(peer.gid)), sgid_index=self.gid_index)
            return a.AHAttr(dlid=peer.lid, port_num=self.ib_port, is_global=1, gr=gr)
        return a.AHAttr(dlid=peer.lid, port_num=self.ib_port)

    def close(self) -> None:
        for obj in (self.pd, self.ctx):
            with contextlib.suppress(Exception):
                obj.close()


def _gid_bytes(gid: Any) -> bytes:
    text = gid.gid if hasattr(gid, "gid") else str(gid)
    raw = bytes.fromhex(str(text).replace(":", ""))
    if len(raw) != 16:
        raise ValueError(f"a GID has 16 bytes, got {text!r}")
    return raw


def _gid_str(raw: bytes) -> str:
    hexa = raw.hex()
    return ":".join(hexa[i : i + 4] for i in range(0, 32, 4))
