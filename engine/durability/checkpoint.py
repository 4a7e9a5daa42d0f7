"""A checkpoint: one snapshot of the store written as a compact store directory, in bounded memory.

The directory is the format ``rivulet load`` writes (``engine.store.layout``),
so the server maps it at start instead of replaying history. It is written
from the store's own arrays, never spelled as text and parsed again, and
never held whole in memory:

- term IDs are kept (``engine.durability.checkpoint_terms``): the previous
  dictionary's files are copied by the kernel and the terms added since are
  appended, so graph files can be written with the IDs they hold;
- a graph unchanged since the files the server mapped is hard-linked from
  them (no byte written; store files never change once written);
- a graph built in memory (a load, a graph rebuilt by compaction) is saved
  from its arrays;
- a mapped graph with deletes (tombstones, ``engine.store.trimmed_graph``)
  is read by range as below, less its deleted triples;
- a mapped graph with deltas (updates, absorbed stream batches) is merged
  with them a chunk at a time: its files are read by range (``pread``: a
  read through the server's mapping would make the whole store resident),
  the deltas are sorted once, and the CSR arrays are appended to new files
  as the merged edges come (``engine.store.csr_stream``);
- but the stream rows that pending windows still read as of their close
  are not merged: they keep their timestamps in a file beside the graphs
  (``engine.durability.checkpoint_layers``), which recovery puts back;
- and the triples that name a value ID (a number or boolean whose ID is its
  value, ``engine.rdf.value_ids``) go to that file too, as stored data of
  no stream: CSR arrays are indexed by ID, and a value ID is 2**30 and up.

The extra memory is a few chunks plus the sorted deltas, which are a
fraction of the changes the server holds in memory anyway. Every triple
written is checked against the dictionary written (no ID above its last, and
none on a hole): a checkpoint that would not open fails instead, and the log
keeps everything. Built beside the target and renamed into place: a
checkpoint directory is whole or absent.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from engine.durability.checkpoint_layers import save_layers
from engine.durability.checkpoint_terms import write_terms
from engine.rdf import Term, is_value
from engine.store import NO_STREAM, CompactGraph, Delta, LayeredGraph, MemoryGraph, Snapshot
from engine.store.array_files import FileArray, link_or_copy, save_array
from engine.store.compact_dictionary import TermArrays
from engine.store.compact_graph import Adjacency, holds_values
from engine.store.csr import id_dtype
from engine.store.csr_stream import (
    AdjacencyWriter,
    Edges,
    adjacency_edges,
    chunks_of,
    merge_sorted,
    sorted_edges,
)
from engine.store.graph import Graph
from engine.store.layered_graph import make_delta
from engine.store.layout import ADJACENCY_ARRAYS, DIRECTIONS, MANIFEST, TERMS, Manifest, adjacency_dir
from engine.store.memory_graph import EMPTY, all_columns
from engine.store.trimmed_graph import TrimmedGraph, is_compact

PARTIAL = ".partial"


class IdCheck:
    """Refuses edges that name an ID the checkpoint's dictionary has no term for."""

    def __init__(self, highest: int, holes: np.ndarray) -> None:
        self.highest = highest
        self.holes = holes

    def __call__(self, *columns: np.ndarray) -> None:
        for column in columns:
            column = column[~is_value(column)]  # a value ID needs no term
            if not len(column):
                continue
            if int(column.min()) <= 0 or int(column.max()) > self.highest:
                raise ValueError(f"a stored triple names term ID {int(column.max())}, outside the "
                                 f"checkpoint's dictionary (1..{self.highest})")
            if len(self.holes):
                at = np.minimum(np.searchsorted(self.holes, column), len(self.holes) - 1)
                if (self.holes[at] == column).any():
                    raise ValueError("a stored triple names a term the dictionary no longer holds")


def write_checkpoint(snapshot: Snapshot, view: tuple[TermArrays, list[Term | None]],
                     target: Path, retained: dict[int, int] | None = None,
                     streams: dict[int, str] | None = None) -> Manifest:
    """Write ``snapshot`` with the dictionary ``view`` (see
    :meth:`~engine.store.CompactTermDictionary.checkpoint_view`, taken with
    the snapshot) as the store directory ``target``. Stream rows that
    pending windows still read as of their close (``retained``: the store's
    retention bounds then, per stream number; ``streams``: number -> name)
    keep their timestamps beside it (:mod:`~engine.durability.checkpoint_layers`)."""
    if target.exists():
        raise FileExistsError(f"{target} exists; a checkpoint directory is written new")
    work = target.with_name(target.name + PARTIAL)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    highest, holes = write_terms(*view, work / TERMS)
    check = IdCheck(highest, holes)
    ids = id_dtype(highest + 1)
    counts: dict[str, int] = {}
    apart: dict[int, LayeredGraph] = {}
    for graph_id, graph in sorted(snapshot.graphs.items()):
        if len(graph):
            if graph_id:
                check(np.array([graph_id], dtype=np.int64))
            base, deltas = graph, ()
            kept = None
            if isinstance(graph, LayeredGraph):
                deltas, kept = graph.split(retained or {})
                base = graph.base
            base, deltas, values = _values_apart(base, deltas)
            if values is not None:
                kept = LayeredGraph(MemoryGraph.empty(), (*(kept.deltas if kept else ()), values),
                                    kept.copies if kept else ())
            if kept is not None and len(kept.deltas):
                apart[graph_id] = kept
                for d in (*kept.deltas, *kept.copies):
                    check(d.triples.s, d.triples.p, d.triples.o)
            if len(base) or any(len(d.ts) for d in deltas):
                counts[str(graph_id)] = _write_graph(base, deltas, work, graph_id, ids, check)
    save_layers(work, apart, streams or {})
    kept = sum(len(d.ts) for layered in apart.values() for d in layered.deltas)
    manifest = Manifest(triples=sum(counts.values()) + kept, terms=highest, shards=1, graphs=counts,
                        sources=["checkpoint"])
    manifest.write(work)
    with open(work / MANIFEST, "rb") as written:
        os.fsync(written.fileno())
    _sync_tree(work)
    work.rename(target)
    return manifest


def _write_graph(base: Graph, deltas: tuple[Delta, ...], root: Path, graph_id: int, ids: np.dtype,
                 check: IdCheck) -> int:
    """Write one graph's two directions, ``base`` and ``deltas`` merged;
    returns its triple count."""
    if not deltas and _single_shard(base):
        parts = [base.direction(d).parts[0] for d in DIRECTIONS]
        if all(part.source is not None for part in parts):
            for part, direction in zip(parts, DIRECTIONS):
                folder = adjacency_dir(root, 0, graph_id, direction)
                folder.mkdir(parents=True)
                for name in ADJACENCY_ARRAYS:
                    link_or_copy(part.source / f"{name}.npy", folder / f"{name}.npy")
            return len(base)
        if all(part.source is None for part in parts):
            for chunk in adjacency_edges(parts[0].arrays()):
                check(*chunk)
            for part, direction in zip(parts, DIRECTIONS):
                folder = adjacency_dir(root, 0, graph_id, direction)
                folder.mkdir(parents=True)
                for name, array in part.arrays().items():
                    save_array(folder / f"{name}.npy", array)
            return len(base)
    extra = _columns(deltas)
    written = []
    for direction, (v, n) in zip(DIRECTIONS, ((0, 2), (2, 0))):
        added = sorted_edges(extra[v], extra[1], extra[n])
        writer = AdjacencyWriter(adjacency_dir(root, 0, graph_id, direction), ids, len(base) + len(added[0]))
        for chunk in merge_sorted(_edges(base, direction), added):
            check(*chunk)
            writer.add(*chunk)
        written.append(writer.close())
    return written[0]


def _values_apart(base: Graph, deltas: tuple[Delta, ...]) -> tuple[Graph, tuple[Delta, ...], Delta | None]:
    """``(base, deltas, values)``: the triples that name a value ID taken out
    of an in-memory base and of the deltas to fold (a compact base never
    holds one), as one delta of stored data (no stream); None when none do."""
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    if not is_compact(base) and len(base) and holds_values(base.s, base.o):
        rows = is_value(base.s) | is_value(base.o)
        found.append((base.s[rows], base.p[rows], base.o[rows]))
        base = MemoryGraph(base.s[~rows], base.p[~rows], base.o[~rows], unique=True)
    folded = []
    for d in deltas:
        t = d.triples
        if len(t) and holds_values(t.s, t.o):
            rows = is_value(t.s) | is_value(t.o)
            found.append((t.s[rows], t.p[rows], t.o[rows]))
            d = make_delta(t.s[~rows], t.p[~rows], t.o[~rows], d.ts[~rows], d.stream)
        folded.append(d)
    if not found:
        return base, deltas, None
    s, p, o = (np.concatenate([f[i] for f in found]) for i in range(3))
    return base, tuple(folded), make_delta(s, p, o, np.zeros(len(s), dtype=np.int64), NO_STREAM)


def _single_shard(graph: Graph) -> bool:
    if not isinstance(graph, CompactGraph):
        return False
    out, into = graph.direction(DIRECTIONS[0]), graph.direction(DIRECTIONS[1])
    return out.shards == 1 and out.parts[0] is not None and into.parts[0] is not None


def _columns(deltas) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not deltas:
        return EMPTY, EMPTY, EMPTY
    return tuple(np.concatenate([getattr(d.triples, c) for d in deltas]) for c in ("s", "p", "o"))


def _edges(graph: Graph, direction: str) -> Iterator[Edges]:
    """The graph's edges in one direction, sorted, a chunk at a time: read
    by range from a compact graph's arrays, sorted in memory otherwise (an
    in-memory graph, whose columns are there already)."""
    if isinstance(graph, TrimmedGraph) and _single_shard(graph.base):
        return (_left_out(chunk, graph.gone, direction) for chunk in _edges(graph.base, direction))
    if _single_shard(graph):
        part: Adjacency = graph.direction(direction).parts[0]
        arrays = ({name: FileArray(part.source / f"{name}.npy") for name in ADJACENCY_ARRAYS}
                  if part.source is not None else part.arrays())
        return adjacency_edges(arrays)
    if not len(graph):
        return iter(())
    s, p, o = all_columns(graph)
    return chunks_of(sorted_edges(s, p, o) if direction == DIRECTIONS[0] else sorted_edges(o, p, s))


def _left_out(edges: Edges, gone: MemoryGraph, direction: str) -> Edges:
    """One chunk of a trimmed base's edges without its tombstones."""
    vertex, predicate, neighbour = edges
    s, o = (vertex, neighbour) if direction == DIRECTIONS[0] else (neighbour, vertex)
    keep = ~gone.contains(s, predicate, o)
    return vertex[keep], predicate[keep], neighbour[keep]


def _sync_tree(root: Path) -> None:
    """Make the new directory's entries durable (the files were flushed as written)."""
    for folder, _, _ in os.walk(root):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
