"""The binary wire format of in-place reads, shared by both transports.

The TCP transport speaks it for every read; the RDMA transport's handshake
sends the same region tables and checks slices with the same bounds checks
before posting READs, so that both refuse exactly the same requests with the
same messages. Kept apart from the servers and readers so that the format is
read, and changed, in one place.

The format is struct-framed binary and nothing else: no pickle, nothing that
the peer could make execute. Every length is checked before it is used, so a
malformed or hostile request gets an error answer, never a crash or an
unbounded allocation. Framing (all little-endian)::

    request  = REQUEST_HEADER(magic "RVT1", kind, request_id, body_len) body
    gather   body = u32 n_entries, then per entry:
               ENTRY(u16 name_len, u32 n_slices) name starts[i8 * n] stops[i8 * n]
    answer   = ANSWER_HEADER(magic "RVA1", status, request_id, body_len) body
    ok body  = per entry: DATA(u8 dtype code, u64 count) data, padded to 8 bytes
    error    = the UTF-8 message
    regions  body (kind 2, empty request) = u32 count, REGION records
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterable, Sequence

import numpy as np

from engine.cluster.transport.base import RegionInfo, Slices

#: Largest answer a server builds (and a reader accepts): beyond it the caller
#: must split its gather, rather than have a shard allocate without bound.
MAX_ANSWER_BYTES = 256 << 20
#: Largest request body a server reads; a bigger one is drained and refused.
MAX_REQUEST_BYTES = 64 << 20
#: Longest region name, in UTF-8 bytes.
MAX_NAME_BYTES = 1024

REQUEST_MAGIC = b"RVT1"
ANSWER_MAGIC = b"RVA1"
KIND_GATHER = 1
KIND_REGIONS = 2
STATUS_OK = 0
STATUS_ERROR = 1

REQUEST_HEADER = struct.Struct("<4sBxxxII")  # magic, kind, request_id, body_len
ANSWER_HEADER = struct.Struct("<4sBxxxIQ")  # magic, status, request_id, body_len
COUNT = struct.Struct("<I")
ENTRY = struct.Struct("<HI")  # name_len, n_slices
DATA = struct.Struct("<BxxxxxxxQ")  # dtype code, element count (16 bytes keeps data 8-aligned)
REGION = struct.Struct("<HBxQQI")  # name_len, dtype code, length, address, rkey

#: The dtypes a region may have, by wire code. Fixed-size little-endian numbers
#: only: a code table (not a dtype string) so that an answer can never name an
#: object dtype or anything else NumPy would have to interpret.
DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(s) for s in ("|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f4", "<f8")
)
_CODES = {dtype.str: code for code, dtype in enumerate(DTYPES, start=1)}

_IOV_BATCH = 512  # buffers per sendmsg call, well under IOV_MAX (1024 on Linux)
_INT64 = np.dtype("<i8")


class RequestRefused(ValueError):
    """A request a server refuses (the RDMA reader refuses the same ones locally,
    before posting); its message goes back in the error answer."""


def dtype_code(dtype: np.dtype | str) -> int:
    """The wire code of ``dtype``; ``ValueError`` for dtypes the wire cannot carry
    (objects, strings, big-endian), so a bad region fails at publish, not per read."""
    dt = np.dtype(dtype)
    code = _CODES.get(dt.str)  # .str spells native order explicitly ("<i4" here)
    if code is None:
        supported = ", ".join(d.name for d in DTYPES)
        raise ValueError(f"dtype {dt} cannot be published (supported: little-endian {supported})")
    return code


def dtype_of(code: int) -> np.dtype:
    """The dtype of a wire code; ``ValueError`` for an unknown code."""
    if not 1 <= code <= len(DTYPES):
        raise ValueError(f"unknown dtype code {code}")
    return DTYPES[code - 1]


def check_region(name: str, array: np.ndarray) -> bytes:
    """Validate what a server is asked to publish and return the encoded name:
    one-dimensional, contiguous (a slice must be one contiguous byte range, as it
    must be for a one-sided read) and of a wire dtype. Nothing is copied."""
    encoded = name.encode("utf-8")
    if not encoded or len(encoded) > MAX_NAME_BYTES:
        raise ValueError(f"region name must be 1 to {MAX_NAME_BYTES} UTF-8 bytes, got {len(encoded)}")
    if not isinstance(array, np.ndarray) or array.ndim != 1:
        raise ValueError(f"region {name!r} must be a one-dimensional NumPy array")
    if not array.flags.c_contiguous:
        raise ValueError(f"region {name!r} must be contiguous (in-place reads address byte ranges)")
    dtype_code(array.dtype)
    return encoded


def recv_exactly(sock: socket.socket, size: int, *, eof_ok: bool = False) -> bytearray | None:
    """Read exactly ``size`` bytes. A clean end of stream before the first byte
    returns None when ``eof_ok`` (the peer closed between messages); anywhere
    else it is a ``ConnectionResetError`` (the peer died mid-message)."""
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:], size - got)
        if n == 0:
            if got == 0 and eof_ok:
                return None
            raise ConnectionResetError(f"connection closed after {got} of {size} bytes")
        got += n
    return buf


def drain(sock: socket.socket, size: int) -> None:
    """Read and discard ``size`` bytes, so that a refused oversize request leaves
    the stream at the next message and the connection usable."""
    chunk = bytearray(min(size, 1 << 20) or 1)
    while size > 0:
        n = sock.recv_into(chunk, min(size, len(chunk)))
        if n == 0:
            raise ConnectionResetError("connection closed while draining a refused request")
        size -= n


Buffer = bytes | bytearray | memoryview | np.ndarray


def send_buffers(sock: socket.socket, buffers: Sequence[Buffer]) -> None:
    """Send the buffers back to back with scatter-gather ``sendmsg``: slices of
    a memory-mapped region go to the socket without being copied into one
    message first, and a partial send resumes where it stopped."""
    views = [memoryview(b).cast("B") for b in buffers]
    views = [v for v in views if v.nbytes]
    i = 0
    while i < len(views):
        sent = sock.sendmsg(views[i : i + _IOV_BATCH])
        while sent and i < len(views):
            n = views[i].nbytes
            if sent >= n:
                sent -= n
                i += 1
            else:
                views[i] = views[i][sent:]
                sent = 0


def pack_regions(infos: Iterable[RegionInfo]) -> bytes:
    """A region table for the wire (the ``regions`` answer, the RDMA handshake)."""
    infos = list(infos)
    parts = [COUNT.pack(len(infos))]
    for info in infos:
        name = info.name.encode("utf-8")
        parts.append(REGION.pack(len(name), dtype_code(info.dtype), info.length, info.address, info.rkey))
        parts.append(name)
    return b"".join(parts)


def unpack_regions(body: bytes | bytearray | memoryview) -> list[RegionInfo]:
    """Decode :func:`pack_regions`; ``ValueError`` on a malformed table."""
    view = memoryview(body)
    try:
        (count,) = COUNT.unpack_from(view, 0)
        offset = COUNT.size
        infos = []
        for _ in range(count):
            name_len, code, length, address, rkey = REGION.unpack_from(view, offset)
            offset += REGION.size
            if offset + name_len > len(view):
                raise ValueError("region name runs past the table")
            name = bytes(view[offset : offset + name_len]).decode("utf-8")
            offset += name_len
            infos.append(RegionInfo(name, dtype_of(code).str, length, address, rkey))
    except (struct.error, UnicodeDecodeError) as exc:
        raise ValueError(f"malformed region table: {exc}") from exc
    return infos


def as_int64(values: np.ndarray | Sequence[int], what: str) -> np.ndarray:
    """Slice bounds as a flat little-endian int64 array (the wire type)."""
    arr = np.ascontiguousarray(values, dtype=_INT64)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional")
    return arr


def check_bounds(name: str, length: int, starts: np.ndarray, stops: np.ndarray) -> int:
    """Check slices against a region of ``length`` elements and return how many
    elements they hold; the error names the first bad slice."""
    if len(starts) != len(stops):
        raise RequestRefused(f"region {name!r}: {len(starts)} starts but {len(stops)} stops")
    if not len(starts):
        return 0
    bad = (starts < 0) | (stops > length) | (stops < starts)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        start, stop = int(starts[i]), int(stops[i])
        why = "stop < start" if stop < start else f"out of bounds (region length {length})"
        raise RequestRefused(f"region {name!r}: slice {i} [{start}:{stop}] {why}")
    return int((stops - starts).sum())


# --- gather requests and answers ---------------------------------------------------------


def encode_gather(slices: Sequence[Slices], request_id: int) -> list[bytes | np.ndarray]:
    """The request for one shard, as buffers for :func:`send_buffers`."""
    body: list[bytes | np.ndarray] = [COUNT.pack(len(slices))]
    for req in slices:
        name = req.region.encode("utf-8")
        starts = as_int64(req.starts, "starts")
        stops = as_int64(req.stops, "stops")
        if len(starts) != len(stops):
            raise ValueError(f"region {req.region!r}: {len(starts)} starts but {len(stops)} stops")
        if not name or len(name) > MAX_NAME_BYTES:
            raise ValueError(f"region name must be 1 to {MAX_NAME_BYTES} UTF-8 bytes")
        body += [ENTRY.pack(len(name), len(starts)), name, starts, stops]
    size = sum(memoryview(b).nbytes for b in body)
    return [REQUEST_HEADER.pack(REQUEST_MAGIC, KIND_GATHER, request_id, size), *body]


def parse_gather(body: memoryview) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Decode a gather body into (region, starts, stops); every length is checked
    against what is left of the body before it is used."""
    try:
        (n_entries,) = COUNT.unpack_from(body, 0)
        offset = COUNT.size
        entries = []
        for i in range(n_entries):
            name_len, n_slices = ENTRY.unpack_from(body, offset)
            offset += ENTRY.size
            end = offset + name_len + 16 * n_slices
            if name_len > MAX_NAME_BYTES or end > len(body):
                raise RequestRefused(f"malformed request: entry {i} runs past the body")
            name = bytes(body[offset : offset + name_len]).decode("utf-8")
            offset += name_len
            starts = np.frombuffer(body, _INT64, n_slices, offset)
            stops = np.frombuffer(body, _INT64, n_slices, offset + 8 * n_slices)
            offset = end
            entries.append((name, starts, stops))
    except (struct.error, UnicodeDecodeError) as exc:
        raise RequestRefused(f"malformed request: {exc}") from exc
    if offset != len(body):
        raise RequestRefused(f"malformed request: {len(body) - offset} trailing bytes")
    return entries


def encode_answer(entries: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray, int]]) -> list[Buffer]:
    """The body of an ok gather answer, as buffers for :func:`send_buffers`: per
    (array, starts, stops, count) entry, its DATA header, the slices back to
    back and the padding to 8 bytes that :func:`decode_gather` expects."""
    parts: list[Buffer] = []
    for array, starts, stops, count in entries:
        parts.append(DATA.pack(dtype_code(array.dtype), count))
        data = slice_data(array, starts, stops, count)
        parts.append(data)
        pad = -(count * array.itemsize) % 8
        if pad:
            parts.append(bytes(pad))
    return parts


def slice_data(array: np.ndarray, starts: np.ndarray, stops: np.ndarray, count: int) -> np.ndarray:
    """The slices back to back: a view for one slice (no copy), a concatenation
    for a few long ones, one fancy-indexing gather for many short ones (a Python
    loop over thousands of slices would dominate the answer's cost)."""
    n = len(starts)
    if n == 1:
        return array[int(starts[0]) : int(stops[0])]
    if n == 0 or count == 0:
        return array[:0]
    if n <= 32 or count >= 64 * n:
        return np.concatenate([array[int(a) : int(b)] for a, b in zip(starts, stops)])
    lengths = stops - starts
    offsets = np.cumsum(lengths) - lengths
    index = np.repeat(starts - offsets, lengths) + np.arange(count, dtype=_INT64)
    return array[index]


def decode_gather(body: bytearray, n_entries: int) -> list[np.ndarray]:
    """Split an ok answer into one array per request: read-only views of
    ``body`` (which they keep alive), no copy. ``ValueError`` if the answer does
    not add up."""
    out = []
    offset = 0
    view = memoryview(body)
    for _ in range(n_entries):
        code, count = DATA.unpack_from(view, offset)
        offset += DATA.size
        dtype = dtype_of(code)
        nbytes = count * dtype.itemsize
        if offset + nbytes > len(body):
            raise ValueError("answer entry runs past the body")
        arr = np.frombuffer(body, dtype, count, offset)
        arr.flags.writeable = False  # as RDMA's: a read of a read-only region
        out.append(arr)
        offset += nbytes + (-nbytes % 8)
    if offset != len(body):
        raise ValueError(f"answer has {len(body) - offset} unexpected trailing bytes")
    return out
