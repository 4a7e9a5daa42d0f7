"""Job 1: parse the input, save the statements as hashes, build the dictionary.

Each input task parses its lines (``parse_lines``), saves the batch's
statements as four hash columns (32 bytes a statement) for job 2, and sends
the batch's distinct terms, cut by hash range, through one Spark shuffle:
a few large records per batch, never one per term (the number of ranges grows
with the input: see :data:`RANGE_INPUT_BYTES`). Each dictionary task then
owns one hash range: it drops repeats, checks that no two different terms
share a hash, and writes its terms in hash order. A term's ID is
``1 + its hash's rank``, so the ranges, concatenated in order by the driver,
are already the finished dictionary: no join, no global sort.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyspark import AccumulatorParam
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from engine.loader.local_load import return_freed_memory
from engine.loader.parse_lines import (
    BAD_LINE_MARK,
    ERROR_MARK,
    LINE_FORMATS,
    LoadError,
    Statements,
    document_batch,
    file_format,
    normalise,
    parse_lines,
    string_buffers,
    terms_and_hashes,
)
from engine.rdf import spelling_kinds, spelling_numbers
from engine.store.layout import STRINGS
from engine.store.term_hash import CHECK_SEED, hash_strings

#: bad lines kept for the report when they are skipped
MAX_SAMPLES = 20
#: input bytes per dictionary hash range. A range's task holds every spelling
#: the parse batches sent it, about 2.5 times its share of the input while it
#: sorts them (2 GB a task for 4 ranges of a 3.2 GB file), so the number of
#: ranges grows with the input and a task's memory does not
RANGE_INPUT_BYTES = 128 << 20
#: a gzip-compressed line file holds about this many times its size in text
GZIP_RATIO = 8


class _ListParam(AccumulatorParam):
    def zero(self, value):
        return []

    def addInPlace(self, a, b):
        return a + b


@dataclass
class Counters:
    """Accumulators the tasks add to; the progress bar and the report read them."""

    triples: object
    bad: object
    samples: object
    quad_files: object

    @classmethod
    def create(cls, spark: SparkSession) -> Counters:
        sc = spark.sparkContext
        return cls(sc.accumulator(0), sc.accumulator(0), sc.accumulator([], _ListParam()),
                   sc.accumulator([], _ListParam()))


@dataclass
class Dictionary:
    """The built dictionary: its size and the sorted hashes (the encoder)."""

    terms: int
    hashes: Path
    string_bytes: int


@dataclass(frozen=True)
class ParseSettings:
    """What every parse task needs to know."""

    work: str
    files: tuple[str, ...]
    graph: str | None
    abort_on_bad: bool
    hash_bits: int

    def scope(self, file_no: int) -> str | None:
        """Blank-node labels are local to their file: with several files, a
        label is prefixed with its file's number."""
        return f"f{file_no}x" if len(self.files) > 1 else None


def range_bits(files: list[Path], parallelism: int) -> int:
    """log2 of the number of dictionary hash ranges for these input files:
    at least two per core, and one per :data:`RANGE_INPUT_BYTES` of text."""
    text_bytes = sum(f.stat().st_size * (GZIP_RATIO if f.name.endswith(".gz") else 1) for f in files)
    ranges = max(1, 2 * parallelism, -(-text_bytes // RANGE_INPUT_BYTES))
    return (ranges - 1).bit_length()


def hash_range(hashes: np.ndarray, bits: int) -> np.ndarray:
    """Which of ``2**bits`` contiguous hash ranges (in signed order) each hash is in."""
    if bits == 0:
        return np.zeros(len(hashes), dtype=np.int64)
    return (hashes >> (64 - bits)) + (1 << (bits - 1))


def _pack(hashes: np.ndarray, offsets: np.ndarray, data: np.ndarray) -> bytes:
    return np.int64(len(hashes)).tobytes() + hashes.tobytes() + offsets.astype(np.int64).tobytes() \
        + data.tobytes()


def _unpack(payload: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = int(np.frombuffer(payload, np.int64, 1)[0])
    hashes = np.frombuffer(payload, np.int64, n, 8)
    offsets = np.frombuffer(payload, np.int64, n + 1, 8 + 8 * n)
    data = np.frombuffer(payload, np.uint8, offset=8 + 16 * n + 8)
    return hashes, offsets, data


def process_batch(settings: ParseSettings, counters: Counters, tag: str, file_no: int,
                  statements: Statements, bad: pa.Array):
    """Save a batch's statements as hashes; yield (hash range, terms) chunks."""
    if len(bad):
        if settings.abort_on_bad:
            raise LoadError(f"{BAD_LINE_MARK}{settings.files[file_no]}\t{bad[0].as_py()}")
        counters.bad.add(len(bad))
        counters.samples.add([(settings.files[file_no], t) for t in bad[:MAX_SAMPLES].to_pylist()])
    if not len(statements.s):
        return
    statements = normalise(statements, settings.scope(file_no), settings.graph)
    quads, terms, hashes = terms_and_hashes(statements)
    target = Path(settings.work) / "quads" / f"{tag}.npy"
    np.save(target, quads)
    counters.quad_files.add([str(target)])
    counters.triples.add(len(statements.s))
    ranges = hash_range(hashes, settings.hash_bits)
    order = np.argsort(ranges, kind="stable")
    cuts = np.searchsorted(ranges[order], np.arange((1 << settings.hash_bits) + 1))
    # one gather in range order; each part is then a slice (a take per part
    # would pay Arrow's per-call cost once per range: hundreds a batch)
    offsets, data = string_buffers(terms.take(pa.array(order)))
    hashes = hashes[order]
    for part in np.flatnonzero(np.diff(cuts)).tolist():
        lo, hi = int(cuts[part]), int(cuts[part + 1])
        yield part, _pack(hashes[lo:hi], offsets[lo : hi + 1] - offsets[lo], data[offsets[lo] : offsets[hi]])


def _line_task(settings: ParseSettings, counters: Counters):
    """mapInArrow over (value, file) batches of lines."""

    def run(batches):
        from pyspark import TaskContext

        ctx = TaskContext.get()
        for i, batch in enumerate(batches):
            files = batch.column("file").to_numpy()
            for file_no in np.unique(files).tolist():
                lines = batch.column("value").filter(pa.array(files == file_no))
                statements, bad = parse_lines(lines)
                tag = f"{ctx.partitionId()}-{ctx.attemptNumber()}-{i}-{file_no}"
                parts, payloads = [], []
                for part, payload in process_batch(settings, counters, tag, file_no, statements, bad):
                    parts.append(part)
                    payloads.append(payload)
                yield pa.RecordBatch.from_pydict(
                    {"part": parts, "payload": payloads},
                    schema=pa.schema([("part", pa.int32()), ("payload", pa.binary())]))
        return_freed_memory()  # Spark reuses this worker: idle, it kept ~300 MB

    return run


def _document_task(settings: ParseSettings, counters: Counters):
    def run(file_no: int):
        statements = document_batch(Path(settings.files[file_no]))
        yield from process_batch(settings, counters, f"doc-{file_no}", file_no, statements,
                                 pa.array([], pa.string()))

    return run


def _write_range(pieces: str):
    """One dictionary task: the terms of one hash range, deduplicated, in hash order."""

    def run(index: int, chunks):
        unpacked = [_unpack(payload) for _, payload in chunks]
        if not unpacked:
            return
        target = Path(pieces) / f"range-{index:06d}"
        _write_terms(unpacked, target)
        del unpacked
        return_freed_memory()  # Spark reuses this worker: idle, it kept ~300 MB
        yield index, str(target)

    return run


def _write_terms(unpacked: list[tuple[np.ndarray, np.ndarray, np.ndarray]], target: Path) -> None:
    """Write the distinct terms of a range's (hashes, offsets, bytes) chunks
    in hash order as ``target.strings`` and ``target.npz``."""
    hashes = np.concatenate([u[0] for u in unpacked])
    data = np.concatenate([u[2] for u in unpacked])
    bases = np.cumsum([0] + [len(u[2]) for u in unpacked])
    starts = np.concatenate([u[1][:-1] + b for u, b in zip(unpacked, bases)])
    ends = np.concatenate([u[1][1:] + b for u, b in zip(unpacked, bases)])
    check = hash_strings(data, np.append(starts, len(data)), CHECK_SEED) if _contiguous(starts, ends) \
        else _check_hashes(data, starts, ends)
    order = np.lexsort((check, hashes))
    h, c = hashes[order], check[order]
    first = np.ones(len(h), dtype=bool)
    first[1:] = h[1:] != h[:-1]
    if np.any(~first[1:] & (c[1:] != c[:-1])) or np.any(h == 0):
        raise LoadError(f"{ERROR_MARK}two different terms share a 64-bit hash; "
                        "the store cannot number them")
    keep = order[first]
    blob, offsets = gather_ranges(data, starts[keep], ends[keep])
    kinds = spelling_kinds(offsets, blob)
    strings = pa.LargeStringArray.from_buffers(len(keep), pa.py_buffer(offsets), pa.py_buffer(blob))
    numeric_at, numeric_values = spelling_numbers(strings)
    blob.tofile(target.with_suffix(".strings"))
    np.savez(target.with_suffix(".npz"), hashes=h[first], offsets=offsets, kinds=kinds,
             numeric_at=numeric_at, numeric_values=numeric_values)


def _contiguous(starts: np.ndarray, ends: np.ndarray) -> bool:
    return bool(len(starts) == 0 or (starts[0] == 0 and np.array_equal(starts[1:], ends[:-1])))


def gather_ranges(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The non-empty byte ranges ``data[starts[i]:ends[i]]`` back to back, and
    their offsets: one cumulative sum of read positions, which jump at the
    start of each range and step by one inside it."""
    offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=offsets[1:])
    if not len(starts):
        return data[:0], offsets
    step = np.ones(int(offsets[-1]), dtype=np.int64)
    step[0] = starts[0]
    step[offsets[1:-1]] = starts[1:] - ends[:-1] + 1
    return data[np.cumsum(step)], offsets


def _check_hashes(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    blob, offsets = gather_ranges(data, starts, ends)
    return hash_strings(blob, offsets, CHECK_SEED)


def build_dictionary(spark: SparkSession, files: list[Path], graph: str | None, abort_on_bad: bool,
                     work: Path, terms_dir: Path, counters: Counters) -> Dictionary:
    """Run job 1 and write ``terms_dir``; the statements' hashes stay in ``work``."""
    sc = spark.sparkContext
    bits = range_bits(files, sc.defaultParallelism)
    settings = ParseSettings(str(work), tuple(str(f) for f in files), graph, abort_on_bad, bits)
    (work / "quads").mkdir(parents=True)
    (work / "pieces").mkdir()
    line_files = [i for i, f in enumerate(files) if file_format(f) in LINE_FORMATS]
    documents = [i for i in range(len(files)) if i not in line_files]
    chunks = []
    if line_files:
        frames = [spark.read.text(str(files[i])).select("value", F.lit(i).alias("file")) for i in line_files]
        lines = frames[0]
        for frame in frames[1:]:
            lines = lines.unionByName(frame)
        chunks.append(lines.mapInArrow(_line_task(settings, counters), "part int, payload binary")
                      .rdd.map(lambda row: (row[0], row[1])))
    if documents:
        chunks.append(sc.parallelize(documents, len(documents)).flatMap(_document_task(settings, counters)))
    merged = chunks[0] if len(chunks) == 1 else sc.union(chunks)
    pieces = merged.partitionBy(1 << bits, lambda part: part) \
        .mapPartitionsWithIndex(_write_range(str(work / "pieces"))).collect()
    return assemble([Path(p) for _, p in sorted(pieces)], work, terms_dir)


def assemble(pieces: list[Path], work: Path, terms_dir: Path) -> Dictionary:
    """Concatenate the hash ranges in order: the driver's whole share of the work."""
    terms_dir.mkdir(parents=True, exist_ok=True)
    parts = [np.load(p.with_suffix(".npz")) for p in pieces]
    with open(terms_dir / STRINGS, "wb") as out:
        for p in pieces:
            with open(p.with_suffix(".strings"), "rb") as f:
                shutil.copyfileobj(f, out, 1 << 22)
    sizes = [int(part["offsets"][-1]) for part in parts]
    counts = [len(part["hashes"]) for part in parts]
    byte_base = np.cumsum([0] + sizes)
    id_base = np.cumsum([0] + counts)
    hashes = np.concatenate([part["hashes"] for part in parts]) if parts else np.zeros(0, np.int64)
    offsets = np.concatenate([[0]] + [part["offsets"][1:] + b for part, b in zip(parts, byte_base)])
    kinds = np.concatenate([[0]] + [part["kinds"] for part in parts]).astype(np.uint8)
    numeric_ids = np.concatenate([np.zeros(0, np.int64)] + [part["numeric_at"] + b + 1
                                                            for part, b in zip(parts, id_base)])
    numeric_values = np.concatenate([np.zeros(0)] + [part["numeric_values"] for part in parts])
    np.save(terms_dir / "hashes.npy", hashes)
    np.save(terms_dir / "offsets.npy", offsets.astype(np.int64))
    np.save(terms_dir / "kinds.npy", kinds)
    np.save(terms_dir / "numeric_ids.npy", numeric_ids.astype(np.int64))
    np.save(terms_dir / "numeric_values.npy", numeric_values.astype(np.float64))
    return Dictionary(len(hashes), terms_dir / "hashes.npy", int(byte_base[-1]))
