"""Scenarios to JSON and back: a failing scenario is saved whole (a large
batch's 20,000 lines do not fit a printed report) and replayed with
``python -m tests.stream.scenarios --replay FILE``."""

from __future__ import annotations

import dataclasses

from tests.stream.scenarios.model import (
    Declare,
    Post,
    QuerySpec,
    Reconnect,
    Register,
    Scenario,
    StreamSpec,
    Unregister,
    Update,
    Window,
)


def _stream(spec: StreamSpec) -> dict:
    timeless = None if spec.timeless is None else sorted(spec.timeless)
    return {
        "name": spec.name,
        "iri": spec.iri,
        "graph": spec.graph,
        "timing": sorted(spec.timing),
        "timeless": timeless,
    }


def _load_stream(data: dict) -> StreamSpec:
    timeless = data.get("timeless")
    return StreamSpec(
        data["name"],
        data["iri"],
        data["graph"],
        frozenset(data["timing"]),
        None if timeless is None else frozenset(timeless),
    )


def _query(spec: QuerySpec) -> dict:
    data = dataclasses.asdict(spec)
    data["windows"] = [dataclasses.asdict(w) for w in spec.windows]
    return data


def _load_query(data: dict) -> QuerySpec:
    return QuerySpec(
        **{
            **data,
            "windows": tuple(Window(**w) for w in data["windows"]),
            "from_graphs": tuple(data["from_graphs"]),
            "from_named": tuple(data["from_named"]),
        }
    )


def _op(op) -> dict:
    if isinstance(op, Post):
        return {
            "post": op.stream,
            "form": op.form,
            "items": [[ts, [list(t) for t in triples]] for ts, triples in op.items],
        }
    if isinstance(op, Register):
        return {"register": _query(op.query)}
    if isinstance(op, Declare):
        return {"declare": _stream(op.stream)}
    if isinstance(op, Update):
        return {
            "update": op.graph,
            "insert": [list(t) for t in op.insert],
            "delete": [list(t) for t in op.delete],
        }
    if isinstance(op, Unregister):
        return {"unregister": op.query}
    return {"reconnect": op.query, "after_ops": op.after_ops}


def _load_op(data: dict):
    if "post" in data:
        items = tuple((ts, tuple(tuple(t) for t in triples)) for ts, triples in data["items"])
        return Post(data["post"], items, data["form"])
    if "register" in data:
        return Register(_load_query(data["register"]))
    if "declare" in data:
        return Declare(_load_stream(data["declare"]))
    if "update" in data:
        return Update(
            data["update"], tuple(tuple(t) for t in data["insert"]), tuple(tuple(t) for t in data["delete"])
        )
    if "unregister" in data:
        return Unregister(data["unregister"])
    return Reconnect(data["reconnect"], data["after_ops"])


def dump(scenario: Scenario) -> dict:
    return {
        "seed": scenario.seed,
        "features": sorted(scenario.features),
        "streams": [_stream(s) for s in scenario.streams],
        # JSON keys are strings: the default graph is written as ""
        "static": {graph or "": [list(t) for t in triples] for graph, triples in scenario.static.items()},
        "ops": [_op(op) for op in scenario.ops],
        "tag": scenario.tag,
    }


def load(data: dict) -> Scenario:
    return Scenario(
        data["seed"],
        frozenset(data["features"]),
        tuple(_load_stream(s) for s in data["streams"]),
        {graph or None: tuple(tuple(t) for t in triples) for graph, triples in data["static"].items()},
        [_load_op(op) for op in data["ops"]],
        data.get("tag", ""),
    )
