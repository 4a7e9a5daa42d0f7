"""The values a shard step takes and returns, as bytes: a small, safe codec.

A step sent over TCP (:mod:`engine.cluster.transport.tcp_steps`) is a method
name and its arguments: snapshot versions, graph IDs, roles, stream spans,
as-of cutoffs and ID columns; its answer is matches (four ID columns) or a
count. This codec writes exactly those kinds and nothing else: no pickle,
nothing the peer could make execute. Every count is checked against the
bytes left before anything is allocated, nesting is bounded, and arrays are
fixed-size little-endian numbers (the wire's dtype table), aligned to 8
bytes so that they are read in place, without a copy.

    value = tag(u8) payload
      NONE, FALSE, TRUE                     no payload
      INT     i64
      FLOAT   f64
      STR     u32 length, UTF-8 bytes
      ARRAY   u8 dtype code, pad to 8, u64 count, data, pad to 8
      TUPLE   u32 n, n values
      DICT    u32 n, n (key value) pairs
"""

from __future__ import annotations

import struct

import numpy as np

from engine.cluster.transport.wire import Buffer, RequestRefused, dtype_code, dtype_of

NONE, FALSE, TRUE, INT, FLOAT, STR, ARRAY, TUPLE, DICT = range(9)
_TAG = struct.Struct("<B")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
#: nesting a value may have (steps need 3: a tuple of windows of spans)
MAX_DEPTH = 8


def encode(value: object) -> list[Buffer]:
    """``value`` as buffers for :func:`~engine.cluster.transport.wire.send_buffers`
    (arrays are sent from their own memory, not copied into the message)."""
    out: list[Buffer] = []
    _encode(value, out, [0], 0)
    return out


def _append(out: list[Buffer], size: list[int], data: Buffer) -> None:
    out.append(data)
    size[0] += memoryview(data).nbytes


def _encode(value: object, out: list[Buffer], size: list[int], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ValueError(f"values nest at most {MAX_DEPTH} deep")
    if value is None:
        _append(out, size, _TAG.pack(NONE))
    elif value is True or value is False or isinstance(value, np.bool_):
        _append(out, size, _TAG.pack(TRUE if value else FALSE))
    elif isinstance(value, int | np.integer):
        _append(out, size, _TAG.pack(INT) + _I64.pack(int(value)))
    elif isinstance(value, float | np.floating):
        _append(out, size, _TAG.pack(FLOAT) + _F64.pack(float(value)))
    elif isinstance(value, str):
        data = value.encode("utf-8")
        _append(out, size, _TAG.pack(STR) + _U32.pack(len(data)) + data)
    elif isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        head = _TAG.pack(ARRAY) + bytes([dtype_code(array.dtype)])
        head += bytes(-(size[0] + len(head)) % 8) + _U64.pack(len(array))
        _append(out, size, head)
        if array.nbytes:
            _append(out, size, array)
        if array.nbytes % 8:
            _append(out, size, bytes(-array.nbytes % 8))
    elif isinstance(value, tuple | list):
        _append(out, size, _TAG.pack(TUPLE) + _U32.pack(len(value)))
        for item in value:
            _encode(item, out, size, depth + 1)
    elif isinstance(value, dict):
        _append(out, size, _TAG.pack(DICT) + _U32.pack(len(value)))
        for key, item in value.items():
            _encode(key, out, size, depth + 1)
            _encode(item, out, size, depth + 1)
    else:
        raise ValueError(f"a step cannot carry a {type(value).__name__}")


def decode(body: bytes | bytearray) -> object:
    """The value :func:`encode` wrote (``body`` is the whole message: arrays
    are aligned from its start); arrays are read-only views of ``body``. A
    malformed body raises :class:`~engine.cluster.transport.wire.RequestRefused`."""
    reader = _Reader(body)
    value = reader.value(0)
    if reader.at != len(reader.body):
        raise RequestRefused(f"malformed value: {len(reader.body) - reader.at} trailing bytes")
    return value


class _Reader:
    def __init__(self, source: bytes | bytearray) -> None:
        self.source = source
        self.body = memoryview(source)
        self.at = 0

    def take(self, n: int) -> memoryview:
        if n < 0 or self.at + n > len(self.body):
            raise RequestRefused(f"malformed value: {n} bytes wanted at {self.at} of {len(self.body)}")
        part = self.body[self.at:self.at + n]
        self.at += n
        return part

    def unpack(self, form: struct.Struct) -> int | float:
        return form.unpack(self.take(form.size))[0]

    def count(self, least_bytes_each: int) -> int:
        """A u32 count, refused when the items cannot fit in what is left."""
        n = int(self.unpack(_U32))
        if n * least_bytes_each > len(self.body) - self.at:
            raise RequestRefused(f"malformed value: {n} items cannot fit in {len(self.body) - self.at} bytes")
        return n

    def value(self, depth: int) -> object:
        if depth > MAX_DEPTH:
            raise RequestRefused(f"malformed value: nested deeper than {MAX_DEPTH}")
        tag = self.unpack(_TAG)
        if tag == NONE:
            return None
        if tag in (FALSE, TRUE):
            return tag == TRUE
        if tag == INT:
            return int(self.unpack(_I64))
        if tag == FLOAT:
            return float(self.unpack(_F64))
        if tag == STR:
            n = self.count(1)
            return str(self.take(n), "utf-8")
        if tag == ARRAY:
            return self.array()
        if tag == TUPLE:
            return tuple(self.value(depth + 1) for _ in range(self.count(1)))
        if tag == DICT:
            n = self.count(2)
            pairs = [(self.value(depth + 1), self.value(depth + 1)) for _ in range(n)]
            return dict(pairs)
        raise RequestRefused(f"malformed value: unknown tag {tag}")

    def array(self) -> np.ndarray:
        try:
            dtype = dtype_of(int(self.unpack(_TAG)))
        except ValueError as exc:
            raise RequestRefused(f"malformed value: {exc}") from None
        self.take(-self.at % 8)
        n = int(self.unpack(_U64))
        nbytes = n * dtype.itemsize
        if nbytes > len(self.body) - self.at:
            raise RequestRefused(f"malformed value: an array of {n} items runs past the body")
        start = self.at
        self.take(nbytes + (-nbytes % 8))
        array = np.frombuffer(self.source, dtype, n, start)
        array.flags.writeable = False
        return array
