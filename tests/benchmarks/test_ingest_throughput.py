"""benchmarks.ingest_throughput at a tiny size, against a real uvicorn server
in a child process: every window of every query is reported once, in order,
over SSE. Not a timing test; the event checker is also tested on its own."""

from benchmarks.ingest_throughput import (
    FED_STREAMS,
    Body,
    Received,
    check_events,
    continuous_queries,
    expected_closes,
    measure,
    stream_bodies,
)
from benchmarks.lsbench_data import DEFAULT_SEED, START_MS, generate
from benchmarks.lsbench_queries import RANGE_MS, STEP_MS
from benchmarks.lsbench_server import lsbench_server

STORED_TRIPLES = 5_000
SECONDS = 2
SCALE = 0.02  # poststream 200, postlikestream 1,720 triples/s


def test_every_window_of_every_query_arrives_in_order():
    data = generate(STORED_TRIPLES, DEFAULT_SEED)
    bodies = stream_bodies(data, SECONDS, SCALE, DEFAULT_SEED)
    queries = continuous_queries(data, 2)
    assert {s for q in queries for s in q.streams} == set(FED_STREAMS)
    with lsbench_server(STORED_TRIPLES, DEFAULT_SEED) as (base, _):
        run = measure(base, bodies, queries)
    assert run.problems == []
    assert run.triples == sum(b.triples for b in bodies) > 0
    steps = SECONDS * 1000 // STEP_MS
    assert run.expected == run.received == run.windows_fired == len(queries) * steps
    assert sum(run.rows["channel_buzz"]) > 0 and sum(run.rows["friend_likes"]) > 0


def _events(ends, sequences=None) -> list[Received]:
    sequences = sequences or range(1, len(ends) + 1)
    return [Received(str(n), n, end - RANGE_MS, end, 0) for n, end in zip(sequences, ends)]


def test_the_checker_wants_one_event_per_window_in_order():
    closes = (START_MS + 100, START_MS + 500)
    ends = [START_MS + 100 * k for k in range(1, 6)]
    assert check_events(_events(ends), closes) == []
    assert check_events(_events(ends[:2] + ends[3:]), closes)  # a window missing
    assert check_events(_events(ends, [1, 2, 4, 5, 6]), closes)  # a sequence number skipped
    assert check_events(_events(ends[:4]), closes)  # the last one missing
    assert check_events(_events(ends + [START_MS + 600]), closes)  # one too many
    assert check_events(_events([]), None) == []


def test_a_query_clock_starts_with_the_first_item_of_its_streams():
    bodies = [Body("poststream", START_MS + 100, b"", 0), Body("postlikestream", START_MS + 100, b"", 3),
              Body("poststream", START_MS + 200, b"", 2), Body("postlikestream", START_MS + 200, b"", 0)]
    assert expected_closes(bodies, ("poststream",)) == (START_MS + 200, START_MS + 200)
    assert expected_closes(bodies, FED_STREAMS) == (START_MS + 100, START_MS + 200)
    assert expected_closes(bodies[:1], ("poststream",)) is None
