"""The RDMA transport, driven through a fake verbs layer, and the transport choice.

No machine here has an RDMA device, so the real RdmaRegionServer and
RdmaRangeReader run against ``fake_verbs``: memory registration, the QP
handshake and state transitions, one-sided READs with rkey and bounds checks,
completions. What needs a NIC (timing, real pinning) is not tested here.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from engine.cluster.transport import choice
from engine.cluster.transport.base import RegionError, Slices, TransportUnavailable
from engine.cluster.transport.choice import describe_transports, open_reader
from engine.cluster.transport.rdma_device import Endpoint, probe_rdma
from engine.cluster.transport.rdma_reader import RdmaRangeReader
from engine.cluster.transport.rdma_server import RdmaRegionServer
from engine.cluster.transport.tcp import TcpRangeReader, TcpRegionServer
from tests.cluster.fake_verbs import ENUMS, FakeVerbsError, live_qps, make_verbs

TIMEOUT = 5.0


def mmap(tmp_path: Path, name: str, array: np.ndarray) -> np.ndarray:
    path = tmp_path / f"{name}.npy"
    np.save(path, array)
    return np.load(path, mmap_mode="r")


def expected(array: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    return np.concatenate([np.asarray(array[a:b]) for a, b in zip(starts, stops)] or [array[:0]])


def wait_for(condition, seconds: float = TIMEOUT) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


@pytest.fixture
def verbs():
    return make_verbs()


@pytest.fixture
def arrays(tmp_path: Path) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {
        "offsets": mmap(tmp_path, "offsets", np.arange(0, 20_000, 2, dtype=np.int32)),
        "targets": mmap(tmp_path, "targets", rng.integers(-(2**40), 2**40, 30_000, dtype=np.int64)),
    }


@pytest.fixture
def server(verbs, arrays) -> Iterator[RdmaRegionServer]:
    srv = RdmaRegionServer(verbs=verbs)
    for name, array in arrays.items():
        srv.publish(name, array)
    srv.start()
    yield srv
    srv.stop()


def new_reader(verbs, servers, **kwargs) -> RdmaRangeReader:  # noqa: ANN001
    kwargs.setdefault("buffer_bytes", 1 << 20)
    kwargs.setdefault("max_outstanding", 8)
    kwargs.setdefault("timeout", TIMEOUT)
    return RdmaRangeReader({s: srv.address for s, srv in enumerate(servers)}, verbs=verbs, **kwargs)


@pytest.fixture
def reader(verbs, server) -> Iterator[RdmaRangeReader]:
    rd = new_reader(verbs, [server])
    yield rd
    rd.close()


# --- probing ------------------------------------------------------------------------------


def test_probe_rdma_on_this_machine_says_why_not() -> None:
    reason = probe_rdma()
    print(f"probe_rdma() here: {reason}")
    assert reason is not None  # no RDMA device on the test machines
    assert "pyverbs" in reason or "device" in reason


def test_probe_rdma_reasons_with_fake_devices() -> None:
    assert probe_rdma(make_verbs()) is None
    assert "no RDMA device found" in probe_rdma(make_verbs(devices=()))
    denied = probe_rdma(make_verbs(open_error="permission denied"))
    assert "fake_rxe0 cannot be opened: permission denied" in denied
    down = probe_rdma(make_verbs(port_state=ENUMS.IBV_PORT_DOWN))
    assert "port 1 of RDMA device fake_rxe0 is not active" in down
    with pytest.raises(TransportUnavailable, match="no RDMA device found"):
        RdmaRangeReader({0: ("127.0.0.1", 1)}, verbs=make_verbs(devices=()))


# --- reading ------------------------------------------------------------------------------


def test_regions_are_registered_in_place_with_remote_read_only(verbs, arrays, server) -> None:
    infos = {info.name: info for info in server.regions()}
    for name, array in arrays.items():
        assert server.registered_in_place(name)
        assert infos[name].address == array.ctypes.data  # the memory map itself, not a copy
        mr = verbs.fabric.mrs[infos[name].rkey]
        assert mr.access == ENUMS.IBV_ACCESS_REMOTE_READ and mr.length == array.nbytes


def test_round_trip_of_many_slices_in_batches(verbs, arrays, reader) -> None:
    rng = np.random.default_rng(5)
    starts = rng.integers(0, 30_000, 100)
    stops = np.minimum(starts + rng.integers(0, 30, 100), 30_000)
    stops[::10] = starts[::10]  # some empty slices: no READ for them
    nonempty = int((stops > starts).sum())
    out = reader.gather(
        {
            0: [
                Slices("targets", starts, stops),
                Slices("offsets", np.array([0, 9_990]), np.array([4, 10_000])),
                Slices("offsets", np.array([7]), np.array([7])),
            ]
        }
    )[0]
    np.testing.assert_array_equal(out[0], expected(arrays["targets"], starts, stops))
    np.testing.assert_array_equal(out[1], np.concatenate([arrays["offsets"][:4], arrays["offsets"][9_990:]]))
    assert out[2].dtype == np.int32 and out[2].size == 0
    assert not out[0].flags.writeable
    assert verbs.fabric.reads == nonempty + 2  # one READ per non-empty slice
    assert verbs.fabric.posts == -(-(nonempty + 2) // 8)  # in batches of max_outstanding
    assert verbs.fabric.failed_completions == 0


def test_queue_pairs_are_connected_rts_and_released(verbs, server, reader) -> None:
    reader.gather({0: [Slices("offsets", np.array([0]), np.array([1]))]})
    qps = live_qps(verbs)
    assert len(qps) == 2
    a, b = qps
    assert a.qp_state == b.qp_state == ENUMS.IBV_QPS_RTS
    assert a.dest_qp_num == b.qp_num and b.dest_qp_num == a.qp_num
    responder = a if a.access & ENUMS.IBV_ACCESS_REMOTE_READ else b
    requester = b if responder is a else a
    assert requester.access == 0  # the reader's QP grants nothing to the shard
    assert requester.sq_sig_all == 0  # only the last READ of a batch completes
    reader.close()
    assert wait_for(lambda: not live_qps(verbs)), "the server kept the QP of a reader that hung up"


def test_several_shards_are_posted_before_any_is_polled(verbs, tmp_path) -> None:
    servers = []
    try:
        for shard in range(3):
            srv = RdmaRegionServer(verbs=verbs)
            srv.publish("data", mmap(tmp_path, f"s{shard}", np.arange(500, dtype=np.int64) * (shard + 1)))
            srv.start()
            servers.append(srv)
        with new_reader(verbs, servers) as rd:
            rd.gather({s: [Slices("data", np.array([0]), np.array([1]))] for s in range(3)})  # connect
            verbs.fabric.events.clear()
            out = rd.gather({s: [Slices("data", np.array([2, 7]), np.array([4, 8]))] for s in range(3)})
        for shard in range(3):
            np.testing.assert_array_equal(out[shard][0], np.array([2, 3, 7]) * (shard + 1))
        kinds = [kind for kind, _ in verbs.fabric.events]
        assert kinds == ["post"] * 3 + ["poll"] * 3, verbs.fabric.events
    finally:
        for srv in servers:
            srv.stop()


def test_concurrent_gathers_from_threads(verbs, arrays, reader) -> None:
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(30):
                starts = rng.integers(0, 29_000, int(rng.integers(1, 40)))
                stops = starts + rng.integers(0, 50, len(starts))
                got = reader.gather({0: [Slices("targets", starts, stops)]})[0][0]
                np.testing.assert_array_equal(got, expected(arrays["targets"], starts, stops))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[0]


# --- errors -------------------------------------------------------------------------------


def test_bad_requests_are_refused_before_posting(verbs, reader) -> None:
    reader.gather({0: [Slices("offsets", np.array([0]), np.array([1]))]})
    reads, posts = verbs.fabric.reads, verbs.fabric.posts
    with pytest.raises(RegionError, match="'nope' is not published") as info:
        reader.gather({0: [Slices("nope", np.array([0]), np.array([1]))]})
    assert info.value.shard == 0
    with pytest.raises(RegionError, match=r"slice 1 \[9999:10001\] out of bounds"):
        reader.gather({0: [Slices("offsets", np.array([0, 9999]), np.array([1, 10001]))]})
    with pytest.raises(RegionError, match="stop < start"):
        reader.gather({0: [Slices("offsets", np.array([3]), np.array([2]))]})
    assert (verbs.fabric.reads, verbs.fabric.posts) == (reads, posts)  # nothing reached the QP
    assert all(qp.qp_state == ENUMS.IBV_QPS_RTS for qp in live_qps(verbs))
    assert reader.gather({0: [Slices("offsets", np.array([1]), np.array([3]))]})[0][0].tolist() == [2, 4]


def test_receive_buffer_bound(verbs, server) -> None:
    with new_reader(verbs, [server], buffer_bytes=4096) as rd:
        with pytest.raises(RegionError, match="more than the 4096 byte RDMA receive buffer"):
            rd.gather({0: [Slices("targets", np.array([0]), np.array([1000]))]})
        assert rd.gather({0: [Slices("targets", np.array([0]), np.array([512]))]})[0][0].size == 512


def test_stale_rkey_reconnects_once(verbs, arrays, reader) -> None:
    request = {0: [Slices("targets", np.array([5]), np.array([9]))]}
    reader.gather(request)
    link = reader._links[0]
    good = link.regions["targets"]
    link.regions["targets"] = dataclasses.replace(good, rkey=good.rkey + 1000)  # a key the NIC never issued
    got = reader.gather(request)[0][0]
    np.testing.assert_array_equal(got, arrays["targets"][5:9])
    assert verbs.fabric.failed_completions == 1  # the READ with the bad key was refused by the "NIC"
    assert reader._links[0] is not link  # and the reader reconnected with a fresh table


def test_withdraw_and_republish(verbs, arrays, server, reader) -> None:
    request = {0: [Slices("targets", np.array([0]), np.array([3]))]}
    reader.gather(request)
    old_rkey = reader._links[0].regions["targets"].rkey
    server.withdraw("targets")
    assert old_rkey not in verbs.fabric.mrs  # deregistered
    with pytest.raises(RegionError, match="'targets' is not published"):
        reader.gather(request)
    server.publish("targets", np.asarray(arrays["targets"]) * -1)
    np.testing.assert_array_equal(reader.gather(request)[0][0], -arrays["targets"][:3])
    with pytest.raises(KeyError):
        server.withdraw("nope")


def test_unreachable_shard_raises_connection_error(verbs, server) -> None:
    srv = RdmaRegionServer(verbs=verbs)
    address = srv.start()
    srv.stop()
    with RdmaRangeReader({0: address}, verbs=verbs, buffer_bytes=4096) as rd:
        with pytest.raises(ConnectionError, match="shard 0 RDMA handshake .* unreachable"):
            rd.gather({0: [Slices("x", np.array([0]), np.array([1]))]})
        rd.update_address(0, server.address)
        assert rd.gather({0: [Slices("offsets", np.array([2]), np.array([3]))]})[0][0].tolist() == [4]


def test_copy_fallback_when_mr_takes_no_address(arrays) -> None:
    verbs = make_verbs(mr_takes_address=False)
    with RdmaRegionServer(verbs=verbs) as srv:
        info = srv.publish("offsets", arrays["offsets"])
        assert not srv.registered_in_place("offsets")
        assert info.address != arrays["offsets"].ctypes.data
        with new_reader(verbs, [srv]) as rd:
            got = rd.gather({0: [Slices("offsets", np.array([100]), np.array([104]))]})[0][0]
        np.testing.assert_array_equal(got, arrays["offsets"][100:104])


def test_the_fake_enforces_access_flags_and_qp_states() -> None:
    """The fake is what the other tests trust: check it refuses what a NIC refuses."""
    verbs = make_verbs()
    e = verbs.enums
    a, b = (Endpoint(verbs, None, 1, 0) for _ in range(2))
    cq_a, cq_b = verbs.cq.CQ(a.ctx, 4), verbs.cq.CQ(b.ctx, 4)
    qp_a, attr_a = a.new_qp(cq_a, 4, 0)
    qp_b, attr_b = b.new_qp(cq_b, 4, e.IBV_ACCESS_REMOTE_READ)
    assert qp_a.qp_state == e.IBV_QPS_INIT
    local = verbs.mr.MR(a.pd, 64, e.IBV_ACCESS_LOCAL_WRITE)
    data = np.arange(8, dtype=np.int64)
    no_remote = verbs.mr.MR(b.pd, data.nbytes, e.IBV_ACCESS_LOCAL_WRITE, address=data.ctypes.data)
    readable = verbs.mr.MR(b.pd, data.nbytes, e.IBV_ACCESS_REMOTE_READ, address=data.ctypes.data)

    def read(mr, offset: int = 0, length: int = 16) -> int:  # noqa: ANN001
        wr = verbs.wr.SendWR(
            wr_id=1, opcode=e.IBV_WR_RDMA_READ, num_sge=1, sg=[verbs.wr.SGE(local.buf, length, local.lkey)]
        )
        wr.set_wr_rdma(mr.rkey, mr.buf + offset)
        qp_a.post_send(wr)
        return cq_a.poll(1)[1][0].status

    with pytest.raises(FakeVerbsError, match="post_send on a QP in state 1"):
        read(readable)
    b.connect(qp_b, attr_b, a.peer(qp_a.qp_num, 11), 22)
    a.connect(qp_a, attr_a, b.peer(qp_b.qp_num, 22), 11)
    assert read(readable) == e.IBV_WC_SUCCESS
    assert np.frombuffer(local.read(16, 0), np.int64).tolist() == [0, 1]
    assert read(readable, offset=56) == e.IBV_WC_REM_ACCESS_ERR  # past the end of the MR
    assert qp_a.qp_state == e.IBV_QPS_ERR
    qp_a2, attr_a2 = a.new_qp(cq_a, 4, 0)
    with pytest.raises(FakeVerbsError, match="address vector"):
        a.connect(qp_a2, attr_a2, a.peer(qp_b.qp_num, 22), 11)  # our own LID, not the peer's
    assert no_remote.rkey != readable.rkey


# --- choosing -----------------------------------------------------------------------------


@pytest.fixture
def tcp_server(arrays) -> Iterator[TcpRegionServer]:
    srv = TcpRegionServer()
    srv.publish("offsets", arrays["offsets"])
    srv.start()
    yield srv
    srv.stop()


def test_auto_falls_back_to_tcp_and_says_so_once(tcp_server, caplog) -> None:
    choice._forget_fallback_log()
    addresses = {0: {"tcp": tcp_server.address, "rdma": ("127.0.0.1", 1)}}
    with caplog.at_level(logging.INFO, logger="rivulet.cluster"):
        first = open_reader("auto", addresses)
        second = open_reader("auto", addresses)
    try:
        assert isinstance(first, TcpRangeReader) and first.name == "tcp"
        assert isinstance(second, TcpRangeReader)
        got = first.gather({0: [Slices("offsets", np.array([1]), np.array([3]))]})[0][0]
        assert got.tolist() == [2, 4]
    finally:
        first.close()
        second.close()
    lines = [
        r for r in caplog.records if r.name == "rivulet.cluster" and "RDMA transport unavailable" in r.message
    ]
    assert len(lines) == 1, [r.message for r in lines]
    assert lines[0].levelno == logging.INFO
    assert lines[0].message.endswith("; in-place reads use TCP")
    assert "pyverbs" in lines[0].message
    print(lines[0].message)


def test_demanding_rdma_without_it_raises() -> None:
    with pytest.raises(TransportUnavailable, match="RDMA transport unavailable: pyverbs is not importable"):
        open_reader("rdma", {0: {"tcp": ("127.0.0.1", 1), "rdma": ("127.0.0.1", 2)}})
    with pytest.raises(TransportUnavailable, match=r"shard\(s\) 1 offer no RDMA address"):
        shards = {0: {"tcp": ("127.0.0.1", 1), "rdma": ("127.0.0.1", 2)}, 1: {"tcp": ("127.0.0.1", 3)}}
        open_reader("rdma", shards, verbs=make_verbs())
    with pytest.raises(ValueError, match="transport must be one of"):
        open_reader("udp", {})


def test_auto_takes_rdma_when_every_shard_offers_it(verbs, server, tcp_server, caplog) -> None:
    choice._forget_fallback_log()
    addresses = {0: {"tcp": tcp_server.address, "rdma": server.address}}
    reader = open_reader("auto", addresses, verbs=verbs)
    try:
        assert isinstance(reader, RdmaRangeReader) and reader.name == "rdma"
        assert reader.gather({0: [Slices("offsets", np.array([2]), np.array([4]))]})[0][0].tolist() == [4, 6]
    finally:
        reader.close()
    with caplog.at_level(logging.INFO, logger="rivulet.cluster"):
        partial = open_reader("auto", {**addresses, 1: {"tcp": tcp_server.address}}, verbs=verbs)
    partial.close()
    assert isinstance(partial, TcpRangeReader)
    assert any("shard(s) 1 offer no RDMA address" in r.message for r in caplog.records)


def test_describe_transports(verbs) -> None:
    here = describe_transports()
    assert here["tcp"] == {"available": True}
    assert here["rdma"]["available"] is False and here["rdma"]["reason"]
    assert here["auto"] == "tcp" and here["in_use"] is None
    with_device = describe_transports(verbs, reader=TcpRangeReader({}))
    assert with_device["rdma"] == {"available": True, "reason": None}
    assert with_device["auto"] == "rdma" and with_device["in_use"] == "tcp"
