"""A checkpoint's term dictionary: the previous one's files plus the terms added since, IDs kept.

Every term keeps its ID: the compact part's IDs are those of the files the
server mapped (or built in memory), and a term the overlay numbered ``k``
after them becomes ``base + k``. So the graphs' ID columns are written as
they are (a graph unchanged since the last checkpoint is not written at all)
and the old files are copied by the kernel, never read into this process.
An overlay ID that is free or transient (a stream's timing term no stored
triple uses) becomes a *hole*: an empty spelling with no hash, that no
triple names (a checkpoint refuses a triple that would). Trailing holes are
dropped. Holes are what make IDs stable without renumbering; they cost 9
bytes each and are never reused.

Blank node labels are spelled as they are, so the log records after the
checkpoint (which spell terms, never IDs) name the same nodes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from engine.rdf import (
    IRI,
    KIND_BNODE,
    KIND_IRI,
    KIND_LITERAL,
    KIND_TRIPLE,
    BNode,
    Term,
    TripleTerm,
    format_term,
    numeric_value,
)
from engine.store.array_files import FileArray, NpyWriter, append_bytes, link_or_copy
from engine.store.compact_dictionary import TermArrays
from engine.store.layout import HASH_IDS, STRINGS
from engine.store.term_hash import hash_strings

#: overlay terms spelled per step
TERM_CHUNK = 1 << 16
#: sorted hashes merged per step
HASH_CHUNK = 1 << 18
ARRAY_NAMES = ("hashes", "offsets", "kinds", "numeric_ids", "numeric_values")


def write_terms(arrays: TermArrays, overlay: list[Term | None], target: Path) -> tuple[int, np.ndarray]:
    """Write the dictionary of ``arrays`` plus ``overlay`` (term by overlay
    ID, index 0 unused, None for a hole) into ``target``; returns the highest
    ID written and the sorted hole IDs (which no triple may name)."""
    target.mkdir(parents=True, exist_ok=True)
    while len(overlay) > 1 and overlay[-1] is None:
        overlay = overlay[:-1]
    base = len(arrays)
    added = len(overlay) - 1
    holes = base + np.array([i for i, term in enumerate(overlay) if i and term is None], dtype=np.int64)
    source = arrays.source
    if not added and source is not None:
        for path in source.iterdir():
            link_or_copy(path, target / path.name)
        return base, holes
    old = {name: FileArray(source / f"{name}.npy") for name in ARRAY_NAMES} if source is not None \
        else {name: getattr(arrays, name) for name in ARRAY_NAMES}
    if source is not None and (source / f"{HASH_IDS}.npy").exists():
        old[HASH_IDS] = FileArray(source / f"{HASH_IDS}.npy")
    elif source is None and arrays.hash_ids is not None:
        old[HASH_IDS] = arrays.hash_ids
    offsets = NpyWriter(target / "offsets.npy", np.int64)
    kinds = NpyWriter(target / "kinds.npy", np.uint8)
    numeric_ids = NpyWriter(target / "numeric_ids.npy", np.int64)
    numeric_values = NpyWriter(target / "numeric_values.npy", np.float64)
    for writer, name in ((offsets, "offsets"), (kinds, "kinds"), (numeric_ids, "numeric_ids"),
                         (numeric_values, "numeric_values")):
        _copy(writer, old[name])
    new_hashes: list[np.ndarray] = []
    new_ids: list[np.ndarray] = []
    end = int(np.asarray(old["offsets"][len(old["offsets"]) - 1 :])[0]) if len(old["offsets"]) else 0
    with open(target / STRINGS, "wb") as strings:
        _copy_blob(strings, arrays, source)
        for first, terms in _chunks(overlay):
            spelled = [format_term(t).encode("utf-8") if t is not None else b"" for t in terms]
            lengths = np.fromiter(map(len, spelled), dtype=np.int64, count=len(spelled))
            ends = end + np.cumsum(lengths)
            data = b"".join(spelled)
            strings.write(data)
            offsets.append(ends)
            ids = base + first + np.arange(len(terms), dtype=np.int64)
            kinds.append(np.array([_kind(t) for t in terms], dtype=np.uint8))
            values = np.array([numeric_value(t) if _kind(t) == KIND_LITERAL else np.nan for t in terms])
            number = ~np.isnan(values)
            numeric_ids.append(ids[number])
            numeric_values.append(values[number])
            present = lengths > 0
            local = np.zeros(len(spelled) + 1, dtype=np.int64)
            np.cumsum(lengths, out=local[1:])
            hashes = hash_strings(np.frombuffer(data, dtype=np.uint8), local)
            new_hashes.append(hashes[present])
            new_ids.append(ids[present])
            end = int(ends[-1]) if len(ends) else end
        strings.flush()
        os.fsync(strings.fileno())
    for writer in (offsets, kinds, numeric_ids, numeric_values):
        writer.close()
    hashes = np.concatenate(new_hashes) if new_hashes else np.zeros(0, dtype=np.int64)
    ids = np.concatenate(new_ids) if new_ids else np.zeros(0, dtype=np.int64)
    order = np.argsort(hashes, kind="stable")
    _merge_hashes(old, hashes[order], ids[order], target, base + added)
    return base + added, holes


def _kind(term: Term | None) -> int:
    if term is None:
        return 0
    if isinstance(term, IRI):
        return KIND_IRI
    if isinstance(term, TripleTerm):
        return KIND_TRIPLE
    return KIND_BNODE if isinstance(term, BNode) else KIND_LITERAL


def _chunks(overlay: list[Term | None]) -> Iterator[tuple[int, list[Term | None]]]:
    """(first overlay ID, its terms) a step at a time (overlay ID 0 is not a term)."""
    for first in range(1, len(overlay), TERM_CHUNK):
        yield first, overlay[first : first + TERM_CHUNK]


def _copy(writer: NpyWriter, source) -> None:
    """Append all of ``source`` (a file copied by the kernel, or memory)."""
    if isinstance(source, FileArray) and source.dtype == writer.dtype:
        writer.append_file(source)
        return
    for start in range(0, len(source), HASH_CHUNK):
        writer.append(np.asarray(source[start : start + HASH_CHUNK]))


def _copy_blob(strings, arrays: TermArrays, source: Path | None) -> None:
    if source is not None:
        append_bytes(strings, source / STRINGS)
        return
    blob = memoryview(arrays.blob)
    for start in range(0, len(blob), 1 << 24):
        strings.write(blob[start : start + (1 << 24)])


def _merge_hashes(old: dict, hashes: np.ndarray, ids: np.ndarray, target: Path, highest: int) -> None:
    """Write the sorted hashes of the old and new terms and the ID of each
    (``hash_ids``), merging a chunk of the old ones at a time."""
    id_dtype = np.dtype(np.int32) if highest < 2**31 - 1 else np.dtype(np.int64)
    out_hashes = NpyWriter(target / "hashes.npy", np.int64)
    out_ids = NpyWriter(target / f"{HASH_IDS}.npy", id_dtype)
    old_hashes = old["hashes"]
    old_ids = old.get(HASH_IDS)
    taken = 0
    for start in range(0, len(old_hashes), HASH_CHUNK):
        chunk = np.asarray(old_hashes[start : start + HASH_CHUNK], dtype=np.int64)
        chunk_ids = (np.arange(start + 1, start + 1 + len(chunk), dtype=np.int64) if old_ids is None
                     else np.asarray(old_ids[start : start + HASH_CHUNK], dtype=np.int64))
        last = start + HASH_CHUNK >= len(old_hashes)
        cut = len(hashes) if last else int(np.searchsorted(hashes, chunk[-1], side="right"))
        merged = np.concatenate([chunk, hashes[taken:cut]])
        merged_ids = np.concatenate([chunk_ids, ids[taken:cut]])
        order = np.argsort(merged, kind="stable")
        merged, merged_ids = merged[order], merged_ids[order]
        if len(merged) > 1 and (merged[1:] == merged[:-1]).any():
            raise ValueError("two different terms share a 64-bit hash; the checkpoint cannot number them")
        out_hashes.append(merged)
        out_ids.append(merged_ids)
        taken = cut
    out_hashes.append(hashes[taken:])
    out_ids.append(ids[taken:])
    if len(hashes[taken:]) > 1 and (hashes[taken + 1 :] == hashes[taken:-1]).any():
        raise ValueError("two different terms share a 64-bit hash; the checkpoint cannot number them")
    out_hashes.close()
    out_ids.close()

