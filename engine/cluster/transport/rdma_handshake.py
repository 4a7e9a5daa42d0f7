"""The RDMA transport's set-up messages, over TCP.

Before a reader can issue one-sided READs, the two ends must swap what the
NIC needs to connect their RC queue pairs (QP number, PSN, LID/GID, MTU) and
the reader must learn each region's address and remote key. That exchange is
the only shard code the RDMA transport runs, and both the server and the
reader speak it, so its framing lives here. Framing (little-endian): a
HANDSHAKE header (magic, kind or status, MTU, QP number, PSN, LID, GID, body
length), then the body: in an ok answer a region table
(:func:`engine.cluster.transport.wire.pack_regions`), in an error answer the
UTF-8 reason.
"""

from __future__ import annotations

import socket
import struct

from engine.cluster.transport.rdma_device import Peer
from engine.cluster.transport.wire import recv_exactly, send_buffers

HS_MAGIC = b"RVRH"
HS_ANSWER_MAGIC = b"RVRA"
HS_CONNECT = 1
HS_REGIONS = 2
HS_OK = 0
HS_ERROR = 1
#: magic, kind (request) or status (answer), MTU enum, QP number, PSN, LID, GID, body length
HANDSHAKE = struct.Struct("<4sBBxxIIH16sxxI")
MAX_HANDSHAKE_BODY = 16 << 20


def send_handshake(
    sock: socket.socket, code: int, peer: Peer | None, body: bytes = b"", *, answer: bool
) -> None:
    """Send a request (``code`` a kind) or, with ``answer``, an answer (``code`` a
    status); ``peer`` is this side's QP data, zeros when there is none to give."""
    p = peer or Peer(0, 0, 0, bytes(16), 0)
    magic = HS_ANSWER_MAGIC if answer else HS_MAGIC
    header = HANDSHAKE.pack(magic, code, p.mtu, p.qp_num, p.psn, p.lid, p.gid, len(body))
    send_buffers(sock, [header, body])


def recv_handshake(sock: socket.socket, *, answer: bool) -> tuple[int, Peer, bytes] | None:
    """The next (kind or status, peer, body); None if the other side hung up
    between messages, ``ValueError`` for a wrong magic or an oversize body."""
    header = recv_exactly(sock, HANDSHAKE.size, eof_ok=True)
    if header is None:
        return None
    magic, code, mtu, qp_num, psn, lid, gid, body_len = HANDSHAKE.unpack(header)
    if magic != (HS_ANSWER_MAGIC if answer else HS_MAGIC):
        raise ValueError(f"not a Rivulet RDMA handshake (magic {magic!r})")
    if body_len > MAX_HANDSHAKE_BODY:
        raise ValueError(f"handshake body of {body_len} bytes is over the limit")
    body = bytes(recv_exactly(sock, body_len) or b"") if body_len else b""
    return code, Peer(qp_num, psn, lid, gid, mtu), body
