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
``batch`` (``s``: stream name, ``i``: ``[timestamp, N-Triples]`` per item),
``declare`` (``d``: the stream definition), ``register`` (``t``: text,
``b``: base), ``unregister`` (``n``: name).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import orjson

from engine.rdf import format_term, parse_lines, parse_term
from engine.store import DEFAULT_GRAPH, Change, QuadStore
from engine.stream import StreamDefinition


def _ntriples(triples: Sequence) -> str:
    return "".join(f"{format_term(s)} {format_term(p)} {format_term(o)} .\n" for s, p, o in triples)


def _id_ntriples(terms, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> str:
    """N-Triples of ID columns, each distinct term spelled once."""
    if not len(s):
        return ""
    distinct, inverse = np.unique(np.concatenate([s, p, o]), return_inverse=True)
    spelled = [format_term(t) for t in terms.decode_many(distinct)]
    n = len(s)
    return "".join(f"{spelled[a]} {spelled[b]} {spelled[c]} .\n"
                   for a, b, c in zip(inverse[:n].tolist(), inverse[n : 2 * n].tolist(),
                                      inverse[2 * n :].tolist(), strict=True))


def transaction_record(terms, changes: list[Change]) -> bytes:
    """The record of a journaled transaction."""
    encoded = []
    for change in changes:
        graph = None if change.graph_id == DEFAULT_GRAPH else format_term(terms.decode(change.graph_id))
        text = _id_ntriples(terms, *change.columns) if change.columns else None
        encoded.append([change.kind, graph, text])
    return orjson.dumps({"k": "tx", "c": encoded})


def batch_record(name: str, items: list[tuple[int, Sequence]]) -> bytes:
    return orjson.dumps({"k": "batch", "s": name, "i": [[ts, _ntriples(triples)] for ts, triples in items]})


def declare_record(definition: StreamDefinition) -> bytes:
    return orjson.dumps({"k": "declare", "d": definition.to_json()})


def register_record(text: str, base: str | None) -> bytes:
    return orjson.dumps({"k": "register", "t": text, "b": base})


def unregister_record(name: str) -> bytes:
    return orjson.dumps({"k": "unregister", "n": name})


def decode(payload: bytes) -> dict:
    return orjson.loads(payload)


def batch_items(record: dict) -> list[tuple[int, list]]:
    """The items of a ``batch`` record, as the stream engine ingests them."""
    return [(int(ts), [(s, p, o) for _, (s, p, o, _g) in parse_lines(text)]) for ts, text in record["i"]]


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
