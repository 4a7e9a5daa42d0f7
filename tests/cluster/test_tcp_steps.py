"""Read steps over TCP: the value codec, the step server and caller, and the
shard calls that route read steps to them (everything else through the
shards' other calls), on real sockets on 127.0.0.1."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from engine.api import Store
from engine.cluster.coordinator_log import CoordinatorLog
from engine.cluster.shard_calls import LocalShardCalls, ShardUnavailable
from engine.cluster.shard_server import ShardServer
from engine.cluster.shard_state import SnapshotGone
from engine.cluster.sharded_store import ShardedQuadStore
from engine.cluster.step_calls import StepCalls, step_addresses
from engine.cluster.transport.tcp_steps import KIND_STEP, StepFailed, TcpStepCaller, TcpStepServer
from engine.cluster.transport.values import ARRAY, INT, NONE, TUPLE, decode, encode
from engine.cluster.transport.wire import (
    ANSWER_HEADER,
    REQUEST_HEADER,
    REQUEST_MAGIC,
    STATUS_ERROR,
    RequestRefused,
    recv_exactly,
)
from engine.store.compact_dictionary import CompactTermDictionary

EX = "http://example.org/"


def _bytes(value: object) -> bytes:
    return b"".join(bytes(memoryview(part).cast("B")) for part in encode(value))


# ------------------------------------------------------------------ the codec
def test_values_come_back_as_written():
    value = ("window_match", (7, "out", ((3, -1000, 2000), (4, 0, 5)), (1, 2), {3: 1999, 4: -5}, None,
                              np.array([1, 2, 3], dtype=np.int64), np.zeros(0, dtype=np.int64), True, 2.5,
                              np.array([1.5, -2.0]), np.array([7], dtype=np.int32)))
    back = decode(_bytes(value))
    method, args = back
    assert method == "window_match" and args[:6] == value[1][:6] and args[8:10] == (True, 2.5)
    for got, sent in zip(args[6:], value[1][6:], strict=True):
        if isinstance(sent, np.ndarray):
            assert got.dtype == sent.dtype and np.array_equal(got, sent) and not got.flags.writeable
    # arrays are read in place: aligned to 8 bytes within the message
    body = _bytes((1, "x", np.arange(5, dtype=np.int64)))
    array = decode(body)[2]
    assert array.ctypes.data % 8 == np.frombuffer(body, np.uint8).ctypes.data % 8


@pytest.mark.parametrize("body, why", [
    (b"", "bytes wanted"),
    (b"\x63", "unknown tag"),
    (bytes([TUPLE]) + b"\xff\xff\xff\x7f", "cannot fit"),  # a tuple of 2**31 items
    (bytes([ARRAY, 8]) + bytes(6) + (10**9).to_bytes(8, "little"), "runs past"),  # a huge array
    (bytes([ARRAY, 0x63]) + bytes(6) + bytes(8), "unknown dtype code"),
    (bytes([INT]) + bytes(8) + b"\x00", "trailing"),
    ((bytes([TUPLE]) + (1).to_bytes(4, "little")) * 20 + bytes([NONE]), "deeper"),
])
def test_malformed_values_are_refused(body, why):
    with pytest.raises(RequestRefused, match=why):
        decode(body)


def test_only_step_values_can_be_written():
    with pytest.raises(ValueError, match="cannot carry a object"):
        encode((1, object()))


# --------------------------------------------------- the server and the caller
@pytest.fixture
def echo_server():
    def handler(method: str, args: tuple) -> object:
        if method == "fail":
            raise KeyError("no such key")
        return method, args

    server = TcpStepServer(handler)
    server.start()
    yield server
    server.stop()


def test_steps_go_to_every_shard_and_errors_come_back_by_class(echo_server):
    caller = TcpStepCaller({0: echo_server.address, 1: echo_server.address})
    column = np.arange(100_000, dtype=np.int64)
    answers = caller.call({0: ("look", (1, column)), 1: ("look", (2, None))})
    assert answers[1] == ("look", (2, None))
    assert np.array_equal(answers[0][1][1], column)
    with pytest.raises(StepFailed) as failed:
        caller.call({0: ("fail", ()), 1: ("look", ())})
    assert failed.value.kind == "KeyError" and "no such key" in failed.value.detail
    # the connection is still in step after an error answer
    assert caller.call({1: ("again", ())}) == {1: ("again", ())}
    caller.close()


def test_a_request_that_is_not_a_step_is_refused(echo_server):
    with socket.create_connection(echo_server.address) as sock:
        body = _bytes(("only a string",))
        sock.sendall(REQUEST_HEADER.pack(REQUEST_MAGIC, KIND_STEP, 9, len(body)) + body)
        _, status, request_id, length = ANSWER_HEADER.unpack(recv_exactly(sock, ANSWER_HEADER.size))
        message = recv_exactly(sock, length).decode()
    assert (status, request_id) == (STATUS_ERROR, 9) and "not (method, arguments)" in message


# ------------------------------------------------------- shard calls over TCP
class CountingCalls(LocalShardCalls):
    """Local shard calls that count what reaches them (what did not go over TCP)."""

    def __init__(self, servers: list) -> None:
        super().__init__(servers)
        self.methods: list[str] = []

    def fork(self, calls):
        self.methods += [method for method, _ in calls.values()]
        return super().fork(calls)


def _servers(directory, shards: int = 3) -> list[ShardServer]:
    return [ShardServer(k, shards, str(directory), None, sync=False, region_host="127.0.0.1")
            for k in range(shards)]


def _over_tcp(local: LocalShardCalls) -> StepCalls:
    return StepCalls(local, TcpStepCaller(step_addresses(local.info())), lambda: step_addresses(local.info()))


def test_a_store_reads_over_tcp_and_writes_through_the_shards_calls(tmp_path):
    servers = _servers(tmp_path)
    local = CountingCalls(servers)
    calls = _over_tcp(local)
    terms = CompactTermDictionary()
    store = Store(quad_store=ShardedQuadStore(terms, calls, CoordinatorLog(tmp_path / "c", terms, 0, False)))
    try:
        store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> <{EX}b> . <{EX}b> <{EX}p> <{EX}c> .\n"
                     f"<{EX}c> <{EX}q> 3 }}")
        local.methods.clear()
        rows = store.query(f"SELECT ?x ?z {{ ?x <{EX}p> ?y . ?y <{EX}p> ?z }}").rows()
        assert [tuple(map(str, r)) for r in rows] == [(f"<{EX}a>", f"<{EX}c>")]
        assert local.methods == []  # every read step went over TCP
        store.update(f"INSERT DATA {{ <{EX}d> <{EX}p> <{EX}a> }}")
        assert "apply" in local.methods
        # a version no shard keeps any more is a retryable error, as through Ray
        with pytest.raises(SnapshotGone):
            calls.fork({0: ("count", (10_000, 0, "out", None, None, None, None))})
        # a write method is never sent over TCP, even by hand
        with pytest.raises(StepFailed, match="PermissionError"):
            calls.caller.call({0: ("apply", (99, [], {}))})
    finally:
        for server in servers:
            server.close()


def test_a_restarted_shard_is_found_at_its_new_address(tmp_path):
    servers = _servers(tmp_path)
    local = CountingCalls(servers)
    calls = _over_tcp(local)
    old_address = servers[1].step_address
    servers[1].close()
    assert calls.fork({0: ("ping", ())}) == {0: 0}
    servers[1] = ShardServer(1, 3, str(tmp_path), None, sync=False, region_host="127.0.0.1")
    assert servers[1].step_address != old_address
    assert calls.fork({1: ("ping", ()), 2: ("ping", ())}) == {1: 0, 2: 0}
    # a shard that stays away (its report still names the closed address) is a retryable error
    servers[2].close()
    with pytest.raises(ShardUnavailable):
        calls.fork({2: ("ping", ())})
    servers[0].close()
    servers[1].close()
