"""The TCP in-place read transport: a real server and reader on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from engine.cluster.transport.base import RegionError, Slices
from engine.cluster.transport.tcp import TcpRangeReader, TcpRegionServer
from engine.cluster.transport.wire import (
    ANSWER_HEADER,
    ANSWER_MAGIC,
    KIND_GATHER,
    REQUEST_HEADER,
    REQUEST_MAGIC,
    STATUS_ERROR,
    STATUS_OK,
    recv_exactly,
)

TIMEOUT = 5.0


def mmap(tmp_path: Path, name: str, array: np.ndarray) -> np.ndarray:
    """Save and memory-map, as shards hold their CSR arrays."""
    path = tmp_path / f"{name}.npy"
    np.save(path, array)
    mapped = np.load(path, mmap_mode="r")
    assert isinstance(mapped, np.memmap)
    return mapped


def expected(array: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    return np.concatenate([np.asarray(array[a:b]) for a, b in zip(starts, stops)] or [array[:0]])


def random_slices(
    rng: np.random.Generator, length: int, n: int, max_len: int = 40
) -> tuple[np.ndarray, np.ndarray]:
    starts = rng.integers(0, length, n)
    stops = np.minimum(starts + rng.integers(0, max_len, n), length)
    return starts, stops


@pytest.fixture
def arrays(tmp_path: Path) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {
        "offsets": mmap(tmp_path, "offsets", np.arange(0, 30_000, 3, dtype=np.int32)),
        "targets": mmap(tmp_path, "targets", rng.integers(-(2**40), 2**40, 50_000, dtype=np.int64)),
    }


@pytest.fixture
def server(arrays: dict[str, np.ndarray]) -> Iterator[TcpRegionServer]:
    srv = TcpRegionServer()
    for name, array in arrays.items():
        srv.publish(name, array)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def reader(server: TcpRegionServer) -> Iterator[TcpRangeReader]:
    rd = TcpRangeReader({0: server.address}, timeout=TIMEOUT)
    yield rd
    rd.close()


def test_round_trip_of_many_slices_from_memory_maps(arrays, reader) -> None:
    rng = np.random.default_rng(1)
    a_starts, a_stops = random_slices(rng, len(arrays["offsets"]), 500)
    b_starts, b_stops = random_slices(rng, len(arrays["targets"]), 700)
    (offsets, targets, single) = reader.gather(
        {
            0: [
                Slices("offsets", a_starts, a_stops),
                Slices("targets", b_starts, b_stops),
                Slices("targets", np.array([10]), np.array([4000])),
            ]
        }
    )[0]
    assert offsets.dtype == np.int32 and targets.dtype == np.int64
    np.testing.assert_array_equal(offsets, expected(arrays["offsets"], a_starts, a_stops))
    np.testing.assert_array_equal(targets, expected(arrays["targets"], b_starts, b_stops))
    np.testing.assert_array_equal(single, arrays["targets"][10:4000])
    assert not targets.flags.writeable


def test_empty_slices_and_empty_requests(arrays, reader) -> None:
    out = reader.gather(
        {
            0: [
                Slices("offsets", np.array([5, 9, 9]), np.array([5, 9, 10])),
                Slices("targets", np.array([], dtype=np.int64), np.array([], dtype=np.int64)),
                Slices("targets", np.array([len(arrays["targets"])]), np.array([len(arrays["targets"])])),
            ]
        }
    )[0]
    np.testing.assert_array_equal(out[0], arrays["offsets"][9:10])
    assert out[1].dtype == np.int64 and out[1].size == 0
    assert out[2].dtype == np.int64 and out[2].size == 0
    assert reader.gather({}) == {}
    assert reader.gather({0: []}) == {0: []}


class SlowServer(TcpRegionServer):
    """Answers gathers after a pause, to show that shards are read at once."""

    def _gather(self, body):  # noqa: ANN001, ANN202 - test double
        time.sleep(0.3)
        return super()._gather(body)


def test_several_shards_are_read_at_once(tmp_path: Path) -> None:
    servers = []
    try:
        for shard in range(3):
            srv = SlowServer()
            srv.publish("data", mmap(tmp_path, f"s{shard}", np.arange(1000, dtype=np.int64) + 10_000 * shard))
            srv.start()
            servers.append(srv)
        with TcpRangeReader({s: srv.address for s, srv in enumerate(servers)}, timeout=TIMEOUT) as rd:
            request = {s: [Slices("data", np.array([1, 500]), np.array([4, 502]))] for s in range(3)}
            began = time.perf_counter()
            out = rd.gather(request)
            elapsed = time.perf_counter() - began
        for shard in range(3):
            np.testing.assert_array_equal(out[shard][0], np.array([1, 2, 3, 500, 501]) + 10_000 * shard)
        # one after the other would take 0.9 s or more
        assert elapsed < 0.75, f"3 slow shards took {elapsed:.2f} s: not read at once"
    finally:
        for srv in servers:
            srv.stop()


def test_concurrent_gathers_from_threads(arrays, server, reader) -> None:
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(40):
                starts, stops = random_slices(rng, len(arrays["targets"]), int(rng.integers(1, 64)))
                got = reader.gather({0: [Slices("targets", starts, stops)]})[0][0]
                np.testing.assert_array_equal(got, expected(arrays["targets"], starts, stops))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[0]
    assert 1 <= server.open_connections <= 8


def test_error_answers_keep_the_connection_usable(arrays, server, reader) -> None:
    good = [Slices("offsets", np.array([0]), np.array([3]))]
    reader.gather({0: good})
    with pytest.raises(RegionError, match="'nope' is not published") as info:
        reader.gather({0: [Slices("nope", np.array([0]), np.array([1]))]})
    assert info.value.shard == 0
    with pytest.raises(RegionError, match=r"slice 1 \[9999:10001\] out of bounds \(region length 10000\)"):
        reader.gather({0: [Slices("offsets", np.array([0, 9999]), np.array([1, 10001]))]})
    with pytest.raises(RegionError, match="stop < start"):
        reader.gather({0: [Slices("offsets", np.array([5]), np.array([4]))]})
    with pytest.raises(RegionError, match="out of bounds"):
        reader.gather({0: [Slices("offsets", np.array([-1]), np.array([2]))]})
    np.testing.assert_array_equal(reader.gather({0: good})[0][0], arrays["offsets"][:3])
    assert server.open_connections == 1  # the same connection served all of it


def test_answer_size_is_bounded(arrays) -> None:
    srv = TcpRegionServer(max_answer_bytes=4096)
    srv.publish("targets", arrays["targets"])
    srv.start()
    try:
        with TcpRangeReader({0: srv.address}, timeout=TIMEOUT) as rd:
            with pytest.raises(RegionError, match="over the 4096 byte limit"):
                rd.gather({0: [Slices("targets", np.array([0]), np.array([1000]))]})
            got = rd.gather({0: [Slices("targets", np.array([0]), np.array([100]))]})[0][0]
            np.testing.assert_array_equal(got, arrays["targets"][:100])
        assert srv.open_connections <= 1
    finally:
        srv.stop()


def raw_request(
    sock: socket.socket, kind: int, body: bytes, magic: bytes = REQUEST_MAGIC
) -> tuple[int, bytes]:
    sock.sendall(REQUEST_HEADER.pack(magic, kind, 77, len(body)) + body)
    magic_back, status, request_id, size = ANSWER_HEADER.unpack(recv_exactly(sock, ANSWER_HEADER.size))
    assert magic_back == ANSWER_MAGIC and request_id == 77
    return status, bytes(recv_exactly(sock, size) or b"")


def test_malformed_and_oversize_requests_get_error_answers(arrays) -> None:
    srv = TcpRegionServer(max_request_bytes=1024)
    srv.publish("offsets", arrays["offsets"])
    srv.start()
    try:
        with socket.create_connection(srv.address, timeout=TIMEOUT) as sock:
            status, body = raw_request(sock, 99, b"")
            assert status == STATUS_ERROR and b"unknown request kind 99" in body
            status, body = raw_request(sock, KIND_GATHER, b"\x01\x00\x00\x00\xff")
            assert status == STATUS_ERROR and b"malformed request" in body
            status, body = raw_request(sock, KIND_GATHER, bytes(5000))
            assert status == STATUS_ERROR and b"over the 1024 byte limit" in body
            status, body = raw_request(sock, KIND_GATHER, b"\x00\x00\x00\x00")  # zero entries: still in step
            assert status == STATUS_OK and body == b""
        with socket.create_connection(srv.address, timeout=TIMEOUT) as sock:
            status, body = raw_request(sock, KIND_GATHER, b"", magic=b"HTTP")
            assert status == STATUS_ERROR and b"bad magic" in body
            assert sock.recv(1) == b""  # hung up: the stream cannot be trusted
    finally:
        srv.stop()


def test_reconnects_once_after_a_restart_at_the_same_address(arrays) -> None:
    first = TcpRegionServer()
    first.publish("offsets", arrays["offsets"])
    address = first.start()
    rd = TcpRangeReader({0: address}, timeout=TIMEOUT)
    request = {0: [Slices("offsets", np.array([10]), np.array([13]))]}
    try:
        rd.gather(request)
        first.stop()
        second = TcpRegionServer(*address)
        second.publish("offsets", arrays["offsets"][::-1].copy())
        second.start()
        try:
            got = rd.gather(request)[0][0]  # the pooled connection is dead: one reconnect
            np.testing.assert_array_equal(got, arrays["offsets"][::-1][10:13])
        finally:
            second.stop()
        with pytest.raises(ConnectionError, match=f"shard 0 at 127.0.0.1:{address[1]}"):
            rd.gather(request)
    finally:
        rd.close()


def test_update_address_follows_a_shard_to_a_new_port(arrays) -> None:
    first = TcpRegionServer()
    first.publish("offsets", arrays["offsets"])
    rd = TcpRangeReader({0: first.start()}, timeout=TIMEOUT)
    second = TcpRegionServer()
    second.publish("offsets", arrays["offsets"] + 1)
    try:
        request = {0: [Slices("offsets", np.array([0]), np.array([2]))]}
        np.testing.assert_array_equal(rd.gather(request)[0][0], [0, 3])
        rd.update_address(0, second.start())
        np.testing.assert_array_equal(rd.gather(request)[0][0], [1, 4])
    finally:
        rd.close()
        first.stop()
        second.stop()


def test_unreachable_shard_raises_connection_error(arrays, reader) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
    reader.update_address(1, ("127.0.0.1", free_port))
    with pytest.raises(ConnectionError, match="shard 1 .* unreachable"):
        reader.gather({0: [Slices("offsets", np.array([0]), np.array([1]))], 1: []})
    # shard 0's answer was read in full: its connection is still good
    np.testing.assert_array_equal(
        reader.gather({0: [Slices("offsets", np.array([0]), np.array([2]))]})[0][0], arrays["offsets"][:2]
    )
    with pytest.raises(ValueError, match="no address for shard 5"):
        reader.gather({5: []})


def test_withdraw_and_region_listing(arrays, server, reader) -> None:
    assert {(i.name, i.dtype, i.length) for i in reader.regions(0)} == {
        ("offsets", "<i4", 10_000),
        ("targets", "<i8", 50_000),
    }
    server.withdraw("targets")
    with pytest.raises(RegionError, match="'targets' is not published"):
        reader.gather({0: [Slices("targets", np.array([0]), np.array([1]))]})
    assert [i.name for i in reader.regions(0)] == ["offsets"]
    assert reader.gather({0: [Slices("offsets", np.array([1]), np.array([2]))]})[0][0].tolist() == [3]
    with pytest.raises(KeyError):
        server.withdraw("targets")


def test_publish_refuses_what_cannot_be_read_in_place() -> None:
    srv = TcpRegionServer()
    with pytest.raises(ValueError, match="one-dimensional"):
        srv.publish("m", np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="contiguous"):
        srv.publish("s", np.arange(10, dtype=np.int64)[::2])
    with pytest.raises(ValueError, match="cannot be published"):
        srv.publish("o", np.array([object()], dtype=object))
    with pytest.raises(ValueError, match="cannot be published"):
        srv.publish("b", np.arange(3, dtype=">i4"))
    assert srv.regions() == []
