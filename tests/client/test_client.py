"""The client against a real server: streams, the batched writer, queries and their windows, errors."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from endpoint.client import IRI, BlankNode, Client, Literal, Reconnect, RivuletError
from endpoint.client.terms import python_value
from endpoint.client.writer import item_lines
from tests.client import readings
from tests.client.readings import EX, expected_rows, item, registration, sorted_rows, stamp

ITEMS = 300  # 15 windows of 20 readings
WINDOWS = ITEMS * readings.STEP_MS // readings.WINDOW_MS
QUICK = Reconnect(attempts=3, delay=0.05, max_delay=0.2, read_timeout=30)


@pytest.fixture
def client(serve):
    with Client(serve()) as client:
        yield client


@pytest.fixture
def stream(client) -> str:
    client.declare_stream("readings", iri=f"{EX}readings", timing=[readings.TEMP])
    return "readings"


def test_declare_list_and_describe_streams(client):
    described = client.declare_stream("s1", timing=[f"{EX}temp"], idle="wallclock", idle_lag_ms=250)
    assert described["name"] == "s1"
    assert described["iri"] == f"{client.http.base_url}/streams/s1"
    assert described["timing"] == [f"{EX}temp"]
    assert (described["idle"], described["idle_lag_ms"]) == ("wallclock", 250)
    assert described["watermark_ms"] is None
    client.declare_stream("s2", iri=f"{EX}s2", timeless=[f"{EX}name"], graph=f"{EX}g")
    assert [s["name"] for s in client.streams()] == ["s1", "s2"]
    assert client.describe_stream("s2")["graph"] == f"{EX}g"
    assert client.describe_stream("s2")["timeless"] == [f"{EX}name"]


def test_a_stream_is_dropped_once_no_query_reads_it(client, stream):
    handle = client.register(registration(f"{EX}readings"))
    with pytest.raises(RivuletError) as refused:
        client.drop_stream(stream)
    assert refused.value.status == 409 and repr(handle.name) in refused.value.message
    with pytest.raises(RivuletError) as moved:
        client.declare_stream(stream, iri=f"{EX}elsewhere")
    assert moved.value.status == 409
    handle.unregister()
    client.drop_stream(stream)
    assert client.streams() == []
    with pytest.raises(RivuletError) as gone:
        client.drop_stream(stream)
    assert gone.value.status == 404
    assert client.declare_stream(stream, iri=f"{EX}readings")["items"] == 0


def test_a_few_hundred_items_through_the_writer_give_the_expected_windows(client, stream):
    handle = client.register(registration(f"{EX}readings"))
    assert handle.name == "per_sensor"
    assert handle.describe()["windows_reported"] == 0
    with client.stream_writer(stream, batch_size=32, max_pending=2) as writer:
        for i in range(ITEMS):
            writer.send(item(i), stamp(i))
        writer.heartbeat(readings.close_of(WINDOWS))
    assert writer.sent_items == ITEMS + 1
    assert writer.sent_batches == -(-(ITEMS + 1) // 32)
    assert writer.last_summary["watermark_ms"] == readings.close_of(WINDOWS)
    assert client.describe_stream(stream)["items"] == ITEMS  # a heartbeat is no item

    got = []
    for window in handle.windows(after=0, reconnect=QUICK):
        got.append(window)
        if len(got) == WINDOWS:
            break
    assert [w.sequence for w in got] == list(range(1, WINDOWS + 1))
    for number, window in enumerate(got, 1):
        end = readings.close_of(number)
        assert (window.start_ms, window.end_ms) == (end - readings.WINDOW_MS, end)
        assert [(w["start_ms"], w["end_ms"]) for w in window.windows] == [(end - readings.WINDOW_MS, end)]
        assert window.variables == ["sensor", "n", "total"]
        assert sorted_rows(window.rows) == expected_rows(number), f"window {number}"
        assert window.bindings[0]["n"]["datatype"].endswith("#integer")


def test_windows_from_now_on_start_after_the_last_reported_one(client, stream):
    handle = client.register(registration(f"{EX}readings"))
    client.post_batch(stream, [(stamp(i), item(i)) for i in range(40)] + [(readings.close_of(2), "")])
    live = handle.windows(reconnect=QUICK)  # resolved now: after window 2
    client.post_item(stream, item(40), stamp(40))
    client.heartbeat(stream, readings.close_of(3))
    window = next(live)
    live.close()
    assert window.sequence == 3
    assert window.rows == [{"sensor": readings.sensor(40), "n": 1, "total": 40}]


def test_the_iteration_ends_when_the_query_is_unregistered(client, stream):
    handle = client.register(registration(f"{EX}readings"))
    client.post_batch(stream, [(stamp(0), item(0)), (readings.close_of(1), "")])
    windows = handle.windows(after=0, reconnect=QUICK)  # the query exists now
    seen: list[int] = []
    ended = threading.Event()

    def read() -> None:
        for window in windows:
            seen.append(window.sequence)
        ended.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    handle.unregister()
    assert ended.wait(10), "the iteration did not end after the query was unregistered"
    assert seen in ([], [1])  # window 1 if the reader connected before the query went
    assert client.queries() == []


def test_a_failed_window_is_yielded_with_its_error_and_the_next_ones_follow(serve):
    """A window over the row budget is a ``window-error`` event: the reader
    yields it, marked, in its place, not silently skipped."""
    with Client(serve(max_rows=5)) as client:
        client.declare_stream("s", iri=f"{EX}s")
        handle = client.register(f"REGISTER QUERY q AS SELECT ?o FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                                 f"WHERE {{ ?x <{EX}p> ?o }}")
        sizes = [3, 40, 2]  # window 2 holds more rows than the budget
        for w, size in enumerate(sizes):  # each window closed alone: the budget bounds a step's rows
            client.post_batch("s", [(1000 * w + k, f'<{EX}x{k}> <{EX}p> "{w}-{k}" .\n') for k in range(size)])
            client.heartbeat("s", 1000 * (w + 1))
        got = []
        for window in handle.windows(after=0, reconnect=QUICK):
            got.append(window)
            if len(got) == len(sizes):
                break
    assert [w.sequence for w in got] == [1, 2, 3]
    assert [w.error is None for w in got] == [True, False, True]
    assert got[1].error["reason"] == "row_limit" and got[1].rows == []
    assert [len(w.rows) for w in (got[0], got[2])] == [3, 2]


def test_a_window_literal_holding_unicode_line_separators_arrives_whole(client):
    """The server writes U+2028 and the like raw in an event's JSON line;
    the reader must not split the line there."""
    client.declare_stream("s", iri=f"{EX}s")
    handle = client.register(f"REGISTER QUERY q AS SELECT ?o FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                             f"WHERE {{ ?x <{EX}p> ?o }}")
    text = "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg\x1dh\x1ei"
    client.post_item("s", [(IRI(f"{EX}x"), f"{EX}p", text)], 10)
    client.heartbeat("s", 1000)
    window = next(iter(handle.windows(after=0, reconnect=QUICK)))
    assert window.rows == [{"o": text}]


def test_values_of_every_kind_arrive_as_written(client):
    client.declare_stream("kinds", iri=f"{EX}kinds")  # every predicate timeless: stored in the graph
    values = ["tab\tquote\" back\\slash\nnew line", 7, -2.5, True, Decimal("1.10"),
              datetime(2024, 5, 1, 12, 30, tzinfo=UTC), date(2024, 5, 1), IRI(f"{EX}other"),
              Literal("chat", language="fr"), Literal("x", datatype=f"{EX}custom"), BlankNode("b1")]
    triples = [(IRI(f"{EX}s"), f"{EX}p{n}", value) for n, value in enumerate(values)]
    client.post_item("kinds", triples, 1000)
    answer = client.query(f"SELECT ?p ?o WHERE {{ GRAPH <{EX}kinds> {{ <{EX}s> ?p ?o }} }}")
    got = {b["p"]["value"]: python_value(b["o"]) for b in answer["results"]["bindings"]}
    for n, value in enumerate(values[:-1]):
        assert got[f"{EX}p{n}"] == value
    assert isinstance(got[f"{EX}p{len(values) - 1}"], BlankNode)


def test_back_pressure_holds_at_most_max_pending_batches(client, stream):
    with client.stream_writer(stream, batch_size=10, max_pending=1) as writer:
        for i in range(2000):
            writer.send(item(i), stamp(i))
    assert writer.sent_batches == 200
    assert writer.peak_pending == 1
    assert writer.waits > 0, "the producer never had to wait: nothing was bounded"
    assert client.describe_stream(stream)["items"] == 2000


def test_back_pressure_by_bytes(client, stream):
    batch_bytes = sum(len(line) + 1 for i in range(10) for line in item_lines(item(i), stamp(i)))
    bound = 2 * batch_bytes + batch_bytes // 2  # room for two batches, not three
    with client.stream_writer(stream, batch_size=10, max_pending=1000, max_pending_bytes=bound) as writer:
        for i in range(1000):
            writer.send(item(i), stamp(i))
    assert writer.peak_pending_bytes <= bound
    assert writer.peak_pending <= 2
    assert writer.waits > 0
    assert client.describe_stream(stream)["items"] == 1000


def test_a_late_item_raises_409_with_the_servers_message(client, stream):
    client.heartbeat(stream, 10_000)
    with pytest.raises(RivuletError) as single:
        client.post_item(stream, item(0), 5_000)
    assert single.value.status == 409
    assert "late item on stream 'readings': timestamp 5000 ms is older than the stream's watermark 10000 ms" \
        in single.value.message
    assert single.value.timestamp_ms == 5000

    writer = client.stream_writer(stream, batch_size=2)
    writer.send(item(1), 9_000)
    writer.send(item(2), 12_000)  # a full batch: sent in the background
    with pytest.raises(RivuletError) as batched:
        writer.flush()
    assert (batched.value.status, batched.value.timestamp_ms) == (409, 9000)
    assert "older than the stream's watermark 10000 ms" in str(batched.value)
    with pytest.raises(RivuletError):  # the writer stays stopped
        writer.send(item(3), 13_000)
    with pytest.raises(RivuletError):
        writer.close()
    assert client.describe_stream(stream)["watermark_ms"] == 10_000  # nothing of the batch ingested


def test_a_malformed_item_raises_400_with_its_line_and_timestamp(client, stream):
    with pytest.raises(RivuletError) as raised:
        with client.stream_writer(stream, batch_size=3) as writer:
            writer.send(item(0), 1000)
            writer.send(f"<{EX}a> <{EX}temp> 'single quotes' .", 2000)
            writer.send(item(2), 3000)
            writer.flush()
    error = raised.value
    assert (error.status, error.line, error.timestamp_ms) == (400, 2, 2000)
    assert error.message.startswith("line 2: ")
    assert client.describe_stream(stream)["items"] == 0


def test_decreasing_timestamps_are_refused_before_sending(client, stream):
    with client.stream_writer(stream) as writer:
        writer.send(item(0), 2000)
        with pytest.raises(ValueError, match="older than the one sent before"):
            writer.send(item(1), 1000)


def test_errors_carry_the_status_and_the_message(client, stream):
    with pytest.raises(RivuletError) as unknown:
        client.windows("nope")
    assert unknown.value.status == 404
    assert "nope" in unknown.value.message
    client.register(registration(f"{EX}readings"))
    with pytest.raises(RivuletError) as twice:
        client.register(registration(f"{EX}readings"))
    assert twice.value.status == 409
    with pytest.raises(RivuletError) as bad:
        client.register("REGISTER QUERY broken AS SELECT * WHERE {")
    assert bad.value.status == 400 and bad.value.message.startswith("malformed registration: line 1")


def test_the_token_is_sent_for_writes(serve):
    url = serve(update_token="secret")
    with Client(url) as anonymous, pytest.raises(RivuletError) as refused:
        anonymous.declare_stream("s")
    assert refused.value.status == 401
    with Client(url, token="secret") as client:
        assert client.declare_stream("s")["name"] == "s"


def test_an_unreachable_server_is_a_rivulet_error_without_status(serve):
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Client(f"http://127.0.0.1:{port}", timeout=2) as client, pytest.raises(RivuletError) as raised:
        client.streams()
    assert raised.value.status is None
    assert "no answer from the server" in raised.value.message
