"""The records of the write-ahead log, and how each is applied again.

Records spell terms in N-Triples (IDs change when a checkpoint renumbers
terms) and carry what was acknowledged, not how it was computed: a SPARQL
update is logged as the triples it added and removed, so replaying it gives
the same store even when it used NOW(), RAND(), BNODE() or a LOAD whose
source has changed since. Stream batches are logged as their items, with the
timestamps resolved (an item stamped on arrival keeps that stamp), and are
replayed through the stream engine, which absorbs and logs them again in
memory and fires the same windows.

Payload: a JSON object whose ``k`` says the kind:
``tx`` (``c``: the changes, ``[kind, graph term or null, N-Triples]``),
``batch`` (``s``: stream name, ``i``: ``[timestamp, N-Triples]`` per item,
``d``: the identities of the broker messages it was made of, when a source
ingested it), ``deliveries`` (``s``, ``d``: the identities a stream remembered
when a checkpoint was taken; the checkpoint's new log segment starts with them),
``declare`` (``d``: the stream definition), ``drop`` (``n``: the stream's
name), ``register`` (``t``: text, ``b``: base), ``unregister`` (``n``: name).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import orjson

from engine.rdf import format_term, parse_lines, parse_term, string_buffers
from engine.store import DEFAULT_GRAPH, Change, QuadStore
from engine.stream import StreamDefinition
from engine.stream.batch_scan import scan_body
from engine.stream.spelled_batch import SpelledBatch


def ntriples_of_ids(terms, s: np.ndarray, p: np.ndarray, o: np.ndarray, suffix: str = ".\n") -> bytes:
    """N-Triples (or N-Quads, with ``suffix`` naming the graph) of ID columns,
    in the store's spelling: each distinct term is spelled once and the lines
    are joined by Arrow, with no Python step per triple."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(s):
        return b""
    n = len(s)
    distinct, inverse = np.unique(np.concatenate([s, p, o]), return_inverse=True)
    spelled = pa.array([format_term(t) for t in terms.decode_many(distinct)], pa.large_string())
    columns = [spelled.take(pa.array(inverse[i * n : (i + 1) * n])) for i in range(3)]
    lines = pc.binary_join_element_wise(*columns, pa.scalar(suffix, pa.large_string()),
                                        pa.scalar(" ", pa.large_string()))
    _, data = string_buffers(lines)  # the lines, back to back
    return data.tobytes()


def transaction_record(terms, changes: list[Change]) -> bytes:
    """The record of a journaled transaction."""
    encoded = []
    for change in changes:
        graph = None if change.graph_id == DEFAULT_GRAPH else format_term(terms.decode(change.graph_id))
        text = ntriples_of_ids(terms, *change.columns).decode() if change.columns else None
        encoded.append([change.kind, graph, text])
    return orjson.dumps({"k": "tx", "c": encoded})


def batch_record(name: str, batch: SpelledBatch, deliveries: Sequence[str] = ()) -> bytes:
    """The record of a stamped batch: its items' N-Triples are assembled
    from the spellings the body brought (no Python step per triple), the
    same text the graph writer would spell from terms."""
    lines, ends = batch.terms.ntriples()
    bounds = np.zeros(len(ends) + 1, dtype=np.int64)
    bounds[1:] = ends
    last = np.cumsum(batch.counts)
    cuts = bounds[np.concatenate([[0], last])].tolist()
    text = lines.tobytes()
    spelled = [[ts, text[cuts[k] : cuts[k + 1]].decode()] for k, ts in enumerate(batch.times.tolist())]
    if deliveries:
        return orjson.dumps({"k": "batch", "s": name, "i": spelled, "d": list(deliveries)})
    return orjson.dumps({"k": "batch", "s": name, "i": spelled})


def deliveries_record(name: str, deliveries: Sequence[str]) -> bytes:
    return orjson.dumps({"k": "deliveries", "s": name, "d": list(deliveries)})


def declare_record(definition: StreamDefinition) -> bytes:
    return orjson.dumps({"k": "declare", "d": definition.to_json()})


def drop_record(name: str) -> bytes:
    return orjson.dumps({"k": "drop", "n": name})


def register_record(text: str, base: str | None) -> bytes:
    return orjson.dumps({"k": "register", "t": text, "b": base})


def unregister_record(name: str) -> bytes:
    return orjson.dumps({"k": "unregister", "n": name})


def decode(payload: bytes) -> dict:
    return orjson.loads(payload)


def batch_items(record: dict) -> SpelledBatch:
    """The items of a ``batch`` record, as the stream engine ingests them:
    read in array steps (:mod:`~engine.stream.batch_scan`) when they are in
    the plain form the log writes, else parsed line by line."""
    times = np.array([ts for ts, _ in record["i"]], dtype=np.int64)
    texts = [text for _, text in record["i"]]
    scanned = scan_body("".join(texts).encode(), timestamped=False)
    if scanned is None:
        return SpelledBatch.of_items([(int(ts), [(s, p, o) for _, (s, p, o, _g) in parse_lines(text)])
                                      for ts, text in record["i"]])
    counts = np.array([text.count("\n") for text in texts], dtype=np.int64)
    return SpelledBatch(times, counts, scanned[2], np.zeros(len(times), dtype=bool))


def apply_transaction(quad_store: QuadStore, record: dict) -> None:
    """Apply a ``tx`` record in one transaction (not journaled again)."""
    terms = quad_store.terms
    txn = quad_store.begin(journaled=False)
    try:
        for kind, graph, text in record["c"]:
            gid = DEFAULT_GRAPH if graph is None else terms.encode(parse_term(graph))
            if kind in ("add", "remove"):
                rows = [(terms.encode(s), terms.encode(p), terms.encode(o))
                        for _, (s, p, o, _g) in parse_lines(text)]
                columns = [np.array(c, dtype=np.int64) for c in zip(*rows, strict=True)] if rows \
                    else [np.zeros(0, dtype=np.int64)] * 3
                (txn.add if kind == "add" else txn.remove)(gid, *columns)
            else:
                getattr(txn, kind)(gid)
    except BaseException:
        quad_store.abort(txn)
        raise
    txn.commit()
