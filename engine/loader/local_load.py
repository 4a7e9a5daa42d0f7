"""A store directory built in one process, without Spark, in bounded memory.

Data that fits one machine does not need a cluster job. Oxigraph's parser
reads each file as a stream and hands over canonical N-Quads a piece at a
time (``nquads_pieces``); each piece is split into columns
(``engine.rdf.split_nquads``), its terms numbered (``term_numbering``:
spellings go straight to the strings file) and its ID rows appended to one
spill file per graph. Once the input is read, each graph's CSR arrays are
built from its spill by a distribution sort (``spilled_csr``). Memory grows
with the dictionary (fixed bytes per term) and the piece size, not with the
number of statements: the statements are on disk until their graph is built.

The result is the same directory ``rivulet load`` writes with Spark (one
shard), so the server maps it the same way, and several server processes
can share it through the page cache. ``rivulet serve --data`` runs this in
a child process; ``rivulet serve --data-dir D --data FILE`` in the server.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from engine.loader.nquads_pieces import PIECE_STATEMENTS, nquads_pieces
from engine.loader.spilled_csr import EdgeSpill, build_spilled
from engine.loader.term_numbering import TermNumbering
from engine.rdf import RdfSyntaxError, SpelledQuads, split_nquads
from engine.store.layout import DIRECTIONS, STRINGS, TERMS, Manifest, adjacency_dir
from engine.store.quad_store import DEFAULT_GRAPH


def build_store_directory(files: list[Path], target: Path, shards: int = 1,
                          piece_statements: int = PIECE_STATEMENTS) -> Manifest:
    """Load ``files`` (syntax from each suffix; TriG and N-Quads fill named
    graphs) into a new store directory ``target`` of ``shards`` vertex
    partitions, reading at most ``piece_statements`` statements at a time.
    Written beside the target and renamed into place, so a failed load
    leaves nothing behind."""
    parsed = (piece for path in files for piece in _statements(path, piece_statements))
    try:
        return write_store_directory(parsed, target, [str(f) for f in files], shards)
    finally:
        return_freed_memory()


def return_freed_memory() -> None:
    """Hand freed memory back to the system: Arrow's pool and glibc's heap
    keep it for reuse otherwise. A server that loaded in its own process
    (``serve --data-dir D --data FILE``) would go on holding it (at 1M
    triples, 251 MB resident after the load, 121 MB after this), and so would
    a Spark Python worker, kept between tasks, beside the tasks after it."""
    import ctypes
    import gc

    import pyarrow as pa

    gc.collect()
    pa.default_memory_pool().release_unused()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: its allocator keeps what it keeps
        pass


def _statements(path: Path, piece_statements: int) -> Iterator[SpelledQuads]:
    """A file's statements, piece by piece; a syntax error says which file, then where in it."""
    try:
        for text in nquads_pieces(path, piece_statements):
            yield split_nquads(text)
    except RdfSyntaxError as exc:
        raise RdfSyntaxError(f"{path}: {exc}") from None


def write_store_directory(parts: Iterable[SpelledQuads], target: Path, sources: list[str],
                          shards: int = 1) -> Manifest:
    """Write statements already in the store's spelling (blank node labels
    kept as they are) as the new store directory ``target``; vertex ``v``'s
    keys go to shard ``v % shards`` in each direction, as the Spark loader
    writes them."""
    if target.exists():
        raise FileExistsError(f"{target} exists; a store directory is built new")
    work = target.with_name(target.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    spills = work / "_spill"
    spills.mkdir(parents=True)
    try:
        graphs, n_terms = _spill(parts, spills, work / TERMS)
        counts: dict[str, int] = {}
        for gid, spill in graphs.items():
            counts[str(gid)] = 0
            for d, direction in enumerate(DIRECTIONS):
                for shard in range(shards):
                    edges = build_spilled(spill, d, shard, shards, n_terms,
                                          adjacency_dir(work, shard, gid, direction), spills / "ranges")
                    if d == 0:
                        counts[str(gid)] += edges
            spill.unlink()
        shutil.rmtree(spills)
        manifest = Manifest(triples=sum(counts.values()), terms=n_terms, shards=shards, graphs=counts,
                            sources=sources)
        manifest.write(work)
        work.rename(target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return manifest


def _spill(parts: Iterable[SpelledQuads], spills: Path, terms_dir: Path) -> tuple[dict[int, Path], int]:
    """Number every piece's terms and append its ID rows to its graphs'
    spill files; returns (graph ID -> spill file, terms numbered)."""
    terms = TermNumbering(spills / STRINGS)
    graphs: dict[int, EdgeSpill] = {}
    try:
        for quads in parts:
            if not len(quads):
                continue
            ids = terms.encode(quads.terms)
            graph_ids = np.where(quads.g >= 0, ids[np.maximum(quads.g, 0)], DEFAULT_GRAPH)
            s, p, o = ids[quads.s], ids[quads.p], ids[quads.o]
            for gid in np.unique(graph_ids).tolist():
                rows = graph_ids == gid
                if gid not in graphs:
                    graphs[gid] = EdgeSpill(spills / f"graph-{gid}.rows")
                graphs[gid].add(s[rows], p[rows], o[rows])
        terms.finish(terms_dir)
    finally:
        terms.close()
        for spill in graphs.values():
            spill.close()
    return {gid: spill.path for gid, spill in graphs.items()}, len(terms)
