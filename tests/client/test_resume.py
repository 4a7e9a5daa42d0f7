"""Windows resume across a killed and restarted server with no gap and no repeat.

The server is ``rivulet serve --data-dir`` in a child process on a fixed
port. The reader has read 3 of 8 windows when the server is killed
(SIGKILL: the event stream breaks mid-way); while it is away, the server
restarts, reports windows 9 to 12, is killed and restarted again (so those
four come back from its data directory), then reports 13 to 15. The reader
reconnects with ``Last-Event-ID`` on its own and must yield 1 to 15 once
each, with the answers computed from the readings.
"""

from __future__ import annotations

import pytest

from benchmarks.durability import RIVULET, ServerProcess
from endpoint.client import Client, Reconnect
from tests.client import readings
from tests.client.readings import EX, expected_rows, item, registration, sorted_rows, stamp

WINDOWS = 15
#: the reader reconnects to a server that is up again (the test restarts it while the reader waits)
RECONNECT = Reconnect(attempts=5, delay=0.05, max_delay=0.5, read_timeout=10)


def write(client: Client, first: int, end: int) -> None:
    """Items ``first`` to ``end - 1`` and a heartbeat closing the window they end."""
    items = [(stamp(i), item(i)) for i in range(first, end)]
    client.post_batch("readings", [*items, (stamp(end), "")])


@pytest.fixture
def server(tmp_path):
    if not RIVULET.exists():
        pytest.skip(f"no rivulet command at {RIVULET}: the project is not installed in this environment")
    process = ServerProcess(["--data-dir", str(tmp_path / "data")], tmp_path / "server.log")
    process.start()
    yield process
    process.stop()


def test_windows_resume_after_the_server_is_killed_with_no_gap_and_no_repeat(server):
    def restart() -> None:
        server.kill()
        server.start()

    with Client(server.url) as client:
        client.declare_stream("readings", iri=f"{EX}readings", timing=[readings.TEMP])
        handle = client.register(registration(f"{EX}readings"))
        write(client, 0, 160)  # windows 1 to 8
        got = []
        for window in handle.windows(after=0, reconnect=RECONNECT):
            got.append(window)
            if len(got) == 3:
                restart()
                write(client, 160, 240)  # windows 9 to 12, reported while the reader is away
                restart()
                write(client, 240, 300)  # windows 13 to 15
            if len(got) == WINDOWS:
                break
        assert client.describe_query(handle.name)["windows_reported"] == WINDOWS
    assert [w.sequence for w in got] == list(range(1, WINDOWS + 1)), server.log_tail()
    for number, window in enumerate(got, 1):
        assert window.end_ms == readings.close_of(number)
        assert sorted_rows(window.rows) == expected_rows(number), f"window {number}"
    assert server.starts == 3
