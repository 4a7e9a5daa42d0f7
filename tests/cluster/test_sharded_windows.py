"""Windows read from the shards' shares of the stream index equal one node's.

The LSBench streams and stored graphs (small), LSBench's L1-L6 and queries
of other shapes (a stream's own stored graph read as of each close, timing
data, a count window, f:timestamp, RSP-QL, ISTREAM, a shared group, windows
of different STEPs, a scan, a REGISTER STREAM feeding another query) are run on one node and on three
in-process shards, window for window. Midway, one shard writes a checkpoint,
and later it is replaced by a new server recovered from its directory (as
after its process was killed): the windows after it are still one node's.
The rows live on the shards: the coordinator keeps only batch summaries, and
the shards free what no window reads any more.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.lsbench_data import (
    SOCIAL_GRAPH,
    START_MS,
    STREAMS,
    USER,
    generate,
)
from benchmarks.lsbench_queries import PREFIXES, QUERIES, RANGE_MS, STEP_MS
from engine.api import Store
from engine.cluster.sharded_stream_log import ShardedStreamLog
from engine.stream import StreamDefinition, StreamEngine
from tests.cluster.local_cluster import local_cluster_store, shard_server
from tests.cluster.lsbench_streams import stored_nquads, stream_batches

STORED_TRIPLES = 3_000
RATES = {"poststream": 40, "postlikestream": 100, "photostream": 20, "photolikestream": 50, "gpsstream": 60}
BATCH_MS = 200
DATA_MS = 4_000
FINAL_MS = START_MS + DATA_MS + RANGE_MS + 2 * STEP_MS
#: the batch after which shard 1 writes a checkpoint, and the one after which it is replaced
CHECKPOINT_AT, RESTART_AT = 30, 60
POSTS = STREAMS["poststream"].iri.value
LIKES = STREAMS["postlikestream"].iri.value
GPS = STREAMS["gpsstream"].iri.value
WINDOW = f"[RANGE {RANGE_MS}ms STEP {STEP_MS}ms]"
EX = "http://example.org/cluster/"

#: queries beside L1-L6, each of a shape they do not have
OTHER_QUERIES = {
    # the stream's own stored graph (its absorbed timeless triples), as of each close
    "as_of": f"REGISTER QUERY as_of AS {PREFIXES}SELECT ?user (COUNT(?post) AS ?n) "
             f"FROM STREAM <{LIKES}> {WINDOW} FROM <{POSTS}> "
             "WHERE { ?user sib:like ?post . ?creator sioc:creator_of ?post } GROUP BY ?user",
    # timing data only (never stored), aggregated
    "gps": f"REGISTER QUERY gps AS {PREFIXES}SELECT ?user (COUNT(*) AS ?n) (MAX(?lat) AS ?north) "
           f"FROM STREAM <{GPS}> {WINDOW} WHERE {{ ?user sib:gps_latitude ?lat }} GROUP BY ?user",
    # a count window tumbling every 40 triples
    "count": f"REGISTER QUERY count AS {PREFIXES}SELECT ?user ?post "
             f"FROM STREAM <{LIKES}> [TRIPLES 40] WHERE {{ ?user sib:like ?post }}",
    # f:timestamp of each window triple
    "stamps": f"REGISTER QUERY stamps AS {PREFIXES}PREFIX f: <http://larkc.eu/csparql/sparql/jena/ext#>\n"
              f"SELECT ?post (f:timestamp(?post, sib:hashtag, ?tag) AS ?t) "
              f"FROM STREAM <{POSTS}> {WINDOW} WHERE {{ ?post sib:hashtag ?tag }}",
    # RSP-QL: a named window joined with the stored graph outside it
    "rspql": f"REGISTER RSTREAM rspql AS {PREFIXES}SELECT ?friend ?post FROM <{SOCIAL_GRAPH}> "
             f"FROM NAMED WINDOW <{EX}w> ON <{POSTS}> [RANGE PT1S STEP PT0.1S] "
             f"WHERE {{ WINDOW <{EX}w> {{ ?friend sioc:creator_of ?post }} sibu:u6496 foaf:knows ?friend }}",
    # ISTREAM: only the rows a window adds
    "istream": f"REGISTER ISTREAM istream AS {PREFIXES}SELECT ?user ?post FROM <{SOCIAL_GRAPH}> "
               f"FROM NAMED WINDOW <{EX}likes> ON <{LIKES}> [RANGE PT1S STEP PT0.1S] "
               f"WHERE {{ WINDOW <{EX}likes> {{ ?user sib:like ?post }} ?user sioc:account_of ?person }}",
    # two queries of one shape (a shared group, evaluated once per window)
    "shared_a": f"REGISTER QUERY shared_a AS {PREFIXES}SELECT ?post FROM STREAM <{LIKES}> {WINDOW} "
                "WHERE { sibu:u6496 sib:like ?post }",
    "shared_b": f"REGISTER QUERY shared_b AS {PREFIXES}SELECT ?post FROM STREAM <{LIKES}> {WINDOW} "
                f"WHERE {{ <{USER}u4732> sib:like ?post }}",
    # windows of different STEPs: each holds its latest window closed by the instant
    "two_steps": f"REGISTER QUERY two_steps AS {PREFIXES}SELECT ?user ?post "
                 f"FROM STREAM <{LIKES}> [RANGE 700ms STEP 300ms] "
                 f"FROM STREAM <{POSTS}> [RANGE 1s STEP 200ms] "
                 "WHERE { ?user sib:like ?post . ?creator sioc:creator_of ?post }",
    # nothing bound: a scan of every shard
    "scan": f"REGISTER QUERY scan AS SELECT ?p (COUNT(*) AS ?n) FROM STREAM <{POSTS}> {WINDOW} "
            "WHERE { ?s ?p ?o } GROUP BY ?p",
    # a window's CONSTRUCT as a stream, read by another query
    "liked": f"REGISTER STREAM <{EX}liked> AS {PREFIXES}CONSTRUCT {{ ?post <{EX}likedBy> ?user }} "
             f"FROM STREAM <{LIKES}> {WINDOW} WHERE {{ ?user sib:like ?post }}",
    "popular": f"REGISTER QUERY popular AS SELECT ?post (COUNT(?user) AS ?n) "
               f"FROM STREAM <{EX}liked> [RANGE 500ms STEP 100ms] "
               f"WHERE {{ ?post <{EX}likedBy> ?user }} GROUP BY ?post HAVING (COUNT(?user) > 1)",
}


@pytest.fixture(scope="module")
def lsbench(tmp_path_factory) -> tuple[Path, list]:
    """The stored graphs as an N-Quads file, and the batches of the five streams."""
    data = generate(STORED_TRIPLES)
    path = stored_nquads(data, tmp_path_factory.mktemp("lsbench") / "stored.nq")
    return path, stream_batches(data, RATES, BATCH_MS, DATA_MS)


def _run(store: Store, batches: list, on_batch=None, incremental: str = "auto",
         delta_windows: dict | None = None) -> dict[str, list[tuple]]:
    """Every query's events; ``delta_windows`` gets how many windows each
    query evaluated from their change."""
    engine = StreamEngine(store, retain_events=10_000, incremental=incremental)
    for spec in STREAMS.values():
        engine.declare_stream(StreamDefinition(spec.name, spec.iri, timing=spec.timing))
    names = [engine.register(query.registration()).spec.name for query in QUERIES]
    names += [engine.register(text).spec.name for text in OTHER_QUERIES.values()]
    for n, (name, items) in enumerate(batches):
        engine.ingest(name, items)
        if on_batch is not None:
            on_batch(n, engine)
    for name in [*STREAMS, "liked"]:
        engine.heartbeat(name, FINAL_MS)
    if delta_windows is not None:  # None: the query's shape is evaluated in full only
        delta_windows.update({name: engine.query(name).to_json()["evaluation"].get("delta_windows")
                              for name in names})
    return {name: [_event(e) for e in engine.subscribe(name, 0).replay] for name in names}


def _rows(streams) -> dict[tuple[int, str], dict[int, int]]:
    """A shard's stream rows: per (stream, role), each row's arrival number -> timestamp."""
    return {key: {seq: ts for chunk in log.chunks for seq, ts in zip(chunk.seq.tolist(), chunk.ts.tolist())}
            for key, log in streams.logs.items() if log.chunks}


def _event(event) -> tuple:
    rows = sorted(tuple(map(str, row)) for row in event.rows or ())
    triples = sorted(tuple(map(str, t)) for t in event.triples or ())
    return event.sequence, event.start_ms, event.end_ms, rows, triples, event.windows


@pytest.mark.parametrize("incremental", ["never", "always"])
def test_windows_on_three_shards_equal_one_nodes_through_a_shard_restart(lsbench, tmp_path, incremental):
    """In full at every window, and from each window's change wherever that is exact."""
    path, batches = lsbench
    reference = Store()
    reference.load(path)
    expected = _run(reference, batches)
    for name, events in expected.items():
        assert events and any(rows or triples for _, _, _, rows, triples, _ in events), name

    store, calls = local_cluster_store(tmp_path)
    store.load(path)
    seen = {}

    def disturb(n: int, engine: StreamEngine) -> None:
        if n == CHECKPOINT_AT:
            calls.servers[1].checkpoint()
        elif n == RESTART_AT:
            seen["rows before"] = _rows(calls.servers[1].state.streams)
            calls.servers[1].close()
            calls.servers[1] = shard_server(tmp_path, 1)
            seen["recovery"] = calls.servers[1].recovery
            seen["rows after"] = _rows(calls.servers[1].state.streams)
            seen["logs"] = {type(state.log) for state in engine.streams.values()}

    deltas: dict[str, int] = {}
    got = _run(store, batches, disturb, incremental, deltas)
    assert seen["recovery"]["checkpoint"] > 0 and seen["recovery"]["replayed"] > 0
    # no row lost that a window may read: the checkpoint's rows come back as one chunk, and a
    # chunk is freed whole once all its rows are old, so a row may only be missing after the
    # restart if it is older than every row of its log kept (windows are compared below too)
    before, after = seen["rows before"], seen["rows after"]
    assert before and after
    for key, rows in before.items():
        kept = after.get(key, {})
        lost = [ts for seq, ts in rows.items() if seq not in kept]
        assert not lost or (kept and max(lost) < min(kept.values())), key
    assert seen["logs"] == {ShardedStreamLog}
    for name in expected:
        assert got[name] == expected[name], name
    # with "always" the queries of a shape that allows it (not those evaluated in a shared
    # group) were evaluated from each window's change
    joins = {"L1", "L2", "L3", "L4", "L5", "L6", "rspql", "istream"}
    if incremental == "always":
        assert all(deltas[name] > 0 for name in joins), str(deltas)
    else:
        assert all(count is None for count in deltas.values()), str(deltas)


def test_shards_free_what_no_window_reads(lsbench, tmp_path):
    path, batches = lsbench
    store, calls = local_cluster_store(tmp_path)
    engine = StreamEngine(store)
    for spec in STREAMS.values():
        engine.declare_stream(StreamDefinition(spec.name, spec.iri, timing=spec.timing))
    engine.register(QUERIES[1].registration())  # L2: reads poststream only
    posts = engine.streams["poststream"]

    def held(stream: int) -> int:
        return sum(len(log) for server in calls.servers
                   for (number, role), log in server.state.streams.logs.items()
                   if number == stream and role == "out")

    for name, items in batches:
        engine.ingest(name, items)
    assert 0 < held(posts.number) < posts.log.total
    # a stream no query reads keeps only its last batch on the shards (freed with the next one)
    last_gps = next(items for name, items in reversed(batches) if name == "gpsstream")
    assert held(engine.streams["gpsstream"].number) == sum(len(triples) for _, triples in last_gps) > 0
    assert len(engine.streams["gpsstream"].log) == 0
    # once every window is past, the next batch brings the bound: only its rows stay
    last = batches[-5][1][0]
    engine.heartbeat("poststream", FINAL_MS)
    engine.ingest("poststream", [(FINAL_MS, last[1])])
    assert held(posts.number) == len(last[1]) == len(posts.log)
    logged = [op.kind for _, _, ops, _ in store.quad_store.coordinator_log.records() for op in ops]
    assert "log" not in logged and "append" in logged
