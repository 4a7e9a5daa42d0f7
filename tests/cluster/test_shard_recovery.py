"""The cluster's store in one process (shard servers called directly): what
a coordinator acknowledged survives the loss of any process, from the
shards' logs and checkpoints and the coordinator's log."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.api import Store
from engine.cluster.coordinator_log import CoordinatorLog
from engine.cluster.partition import IN, OUT
from engine.cluster.shard_calls import LocalShardCalls
from engine.cluster.shard_ops import Op, split_ops
from engine.cluster.shard_server import ShardServer
from engine.cluster.shard_state import KEEP_VERSIONS, SnapshotGone
from engine.cluster.sharded_store import ShardedQuadStore
from engine.durability import DirectoryInUse
from engine.rdf import IRI, Literal, MemoryTermDictionary
from engine.store import StoreUnavailable
from engine.store.compact_dictionary import CompactTermDictionary
from tests.cluster.local_cluster import coordinator_died

EX = "http://example.org/"
SHARDS = 3


#: the coordinator each test directory has now (the next one opened stands for its restart)
_running: dict[Path, Store] = {}


def open_store(directory: Path, servers: list[ShardServer] | None = None,
               compact_bytes: int = 64 << 20) -> tuple[Store, list[ShardServer]]:
    """A coordinator over shard servers recovered from ``directory`` (new
    server objects: as after every process was killed; the coordinator
    opened before over ``directory`` is killed too)."""
    if directory in _running:
        coordinator_died(_running.pop(directory))
    servers = servers or [ShardServer(k, SHARDS, str(directory), None, sync=False, region_host=None)
                          for k in range(SHARDS)]
    terms = CompactTermDictionary()
    log = CoordinatorLog(directory / "coordinator", terms, 0, sync=False, compact_bytes=compact_bytes)
    store = _running[directory] = Store(quad_store=ShardedQuadStore(terms, LocalShardCalls(servers), log))
    return store, servers


def contents(store: Store) -> set[tuple]:
    rows = store.query("SELECT * { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }").rows()
    return {tuple(map(str, row)) for row in rows}


def test_each_triple_goes_to_its_subjects_and_its_objects_owner():
    s, p, o = np.array([3, 4, 5, 7]), np.array([1, 1, 2, 2]), np.array([4, 9, 6, 11])
    parts = split_ops([Op("add", 0, (s, p, o))], SHARDS)
    triples = list(zip(s.tolist(), p.tolist(), o.tolist(), strict=True))
    for k, ops in enumerate(parts):
        held = {role: {tuple(row) for op in ops if op.role == role
                       for row in zip(*(c.tolist() for c in op.columns), strict=True)} for role in (OUT, IN)}
        assert held[OUT] == {(a, b, c) for a, b, c in triples if a % SHARDS == k}
        # the in role holds the triple reversed, keyed by its object
        assert held[IN] == {(c, b, a) for a, b, c in triples if c % SHARDS == k}
        assert any(op.kind == "create" for op in ops)


def test_writes_survive_losing_every_process_with_and_without_checkpoints(tmp_path):
    store, servers = open_store(tmp_path)
    store.update(f'INSERT DATA {{ <{EX}a> <{EX}p> "one", _:b . GRAPH <{EX}g> {{ <{EX}a> <{EX}p> 2 }} }}')
    store.update(f"CREATE GRAPH <{EX}empty>")
    servers[1].checkpoint()
    store.update('DELETE { ?s ?p ?o } INSERT { ?s ?p "new" } WHERE { ?s ?p ?o FILTER(isBlank(?o)) }')
    store.update(f"INSERT DATA {{ <{EX}c> <{EX}q> <{EX}a> }}")
    before = contents(store)
    assert len(before) == 4
    reopened, servers = open_store(tmp_path)
    assert contents(reopened) == before
    assert IRI(f"{EX}empty") in reopened.named_graphs()
    assert servers[1].recovery["checkpoint"] == 2 and servers[1].recovery["replayed"] == 2
    reopened.update(f"DROP GRAPH <{EX}g>")
    assert contents(open_store(tmp_path)[0]) == {row for row in before if row[3] != f"<{EX}g>"}


def test_a_shard_that_missed_commits_is_brought_up_to_date_from_the_coordinators_log(tmp_path):
    store, servers = open_store(tmp_path)
    store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> <{EX}b> }}")
    # the coordinator logs commit 2, reaches shards 0 and 1, and dies before shard 2
    log = store.quad_store.coordinator_log
    terms = store.terms
    ops = [Op("add", 0, (np.array([terms.encode(IRI(f"{EX}x")) for _ in range(1)]),
                         np.array([terms.lookup(IRI(f"{EX}p"))]), np.array([terms.encode(Literal("late"))])))]
    log.log(2, ops)
    parts = split_ops(ops, SHARDS)
    for k in (0, 1):
        servers[k].apply(2, parts[k], {})
    assert [s.state.version for s in servers] == [2, 2, 1]
    reopened, servers = open_store(tmp_path)
    assert [s.state.version for s in servers] == [2, 2, 2]
    assert (f"<{EX}x>", f"<{EX}p>", '"late"', "None") in contents(reopened)


def test_new_terms_get_their_ids_back_after_a_coordinator_restart(tmp_path):
    store, servers = open_store(tmp_path)
    store.update(f'INSERT DATA {{ <{EX}a> <{EX}p> "x", 3.5 }}')
    ids = {term: store.terms.lookup(term) for term in (IRI(f"{EX}a"), Literal("x"))}
    reopened, _ = open_store(tmp_path, servers)
    assert {term: reopened.terms.lookup(term) for term in ids} == ids
    values = {row[0] for row in reopened.query(f"SELECT ?o {{ <{EX}a> <{EX}p> ?o FILTER(?o > 3) }}").rows()}
    assert len(values) == 1  # the numeric side array of a restored term is filled too


def test_restore_refuses_an_id_taken_by_another_term():
    terms = MemoryTermDictionary()
    first = terms.encode(IRI(f"{EX}a"))
    terms.restore(5, IRI(f"{EX}b"))
    assert terms.lookup(IRI(f"{EX}b")) == 5 and terms.decode(5) == IRI(f"{EX}b")
    with pytest.raises(ValueError):
        terms.restore(first, IRI(f"{EX}c"))
    assert terms.encode(IRI(f"{EX}d")) not in (first, 5)


def test_a_snapshot_too_old_is_a_retryable_error(tmp_path):
    store, servers = open_store(tmp_path)
    old = store.quad_store.snapshot()
    for n in range(KEEP_VERSIONS + 1):
        store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> {n} }}")
    with pytest.raises(SnapshotGone) as gone:
        old.graph(0).match(np.array([1]), None, None, 1)
    assert isinstance(gone.value, StoreUnavailable)


def test_the_coordinators_log_keeps_only_what_shards_have_not_checkpointed(tmp_path):
    store, servers = open_store(tmp_path, compact_bytes=1)  # try to compact after every commit
    log = store.quad_store.coordinator_log
    store.update(f'INSERT DATA {{ <{EX}a> <{EX}p> "first" . GRAPH <{EX}g> {{ <{EX}a> <{EX}q> 1 }} }}')
    store.update(f'INSERT DATA {{ <{EX}b> <{EX}p> "second" }}')
    assert log.compacted.version == 0 and len(log.wal.segments()) == 3  # no shard has checkpointed
    for server in servers[:2]:
        server.checkpoint()  # at commit 2
    store.update(f'INSERT DATA {{ <{EX}c> <{EX}p> "third" }}')
    assert log.compacted.version == 0  # one shard has not checkpointed
    servers[2].checkpoint()  # at commit 3: every shard is past commit 2
    store.update(f'INSERT DATA {{ <{EX}d> <{EX}p> "fourth" }}')
    assert log.compacted.version == 2
    assert [version for version, *_ in log.records()] == [3, 4]
    changed = dict(store.quad_store._changed_at)
    ids = {term: store.terms.lookup(term) for term in (IRI(f"{EX}a"), Literal("first"), IRI(f"{EX}d"))}
    before = contents(store)
    # every process lost: the compacted terms and the log after them rebuild the same store
    reopened, _ = open_store(tmp_path)
    assert contents(reopened) == before and len(before) == 5
    assert {term: reopened.terms.lookup(term) for term in ids} == ids
    assert reopened.quad_store._changed_at == changed
    reopened.update(f'INSERT DATA {{ <{EX}e> <{EX}p> "fifth" }}')
    assert len(contents(open_store(tmp_path)[0])) == 6


def test_one_coordinator_at_a_time_writes_the_log(tmp_path):
    store, _ = open_store(tmp_path)
    with pytest.raises(DirectoryInUse):
        CoordinatorLog(tmp_path / "coordinator", CompactTermDictionary(), 0, sync=False)
    store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> 1 }}")  # the first one goes on
    store.quad_store.coordinator_log.close()
    CoordinatorLog(tmp_path / "coordinator", CompactTermDictionary(), 0, sync=False).close()
