"""Reading CSRBench (../shared/conformance/csrbench) for the tests: the items,
the seven queries wrapped as C-SPARQL registrations, and the expected windows.

The reference answers follow SEMANTICS.md: replay the 34 items (file NN at
NN*1000 ms), then a heartbeat at ``final_watermark_ms``; every window that
closes in between is reported, partial and empty ones included.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.rdf import IRI, BNode, Literal, numeric_value

ROOT = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "csrbench"
STREAM = "http://example.org/csrbench"
QUERY_NUMBERS = range(1, 8)


def available() -> bool:
    return (ROOT / "expected" / "q1.json").exists()


def expected(n: int) -> dict:
    return json.loads((ROOT / "expected" / f"q{n}.json").read_text())


def data_files() -> list[tuple[int, Path]]:
    return [(i * 1000, ROOT / "data" / f"data_{i:02d}.ttl") for i in range(34)]


def registration(n: int) -> str:
    """The expected file's query as a C-SPARQL registration over one stream."""
    spec = expected(n)
    text = spec["query"]
    where = text.rindex("WHERE")
    window = f"FROM STREAM <{STREAM}> [RANGE {spec['range_ms']}ms STEP {spec['step_ms']}ms] "
    return f"REGISTER QUERY csrbench_q{n} AS {text[:where]}{window}{text[where:]}"


def _comparable(binding: dict) -> tuple:
    """A JSON term as a comparable key; numbers compare by value (the
    expected files and the engine spell doubles differently)."""
    kind = binding["type"]
    if kind == "literal" or kind == "typed-literal":
        term = Literal(binding["value"], binding.get("datatype"), binding.get("xml:lang"))
        number = numeric_value(term)
        if number == number:  # not NaN
            return ("number", term.datatype, number)
        return ("literal", term.lexical, term.datatype, term.lang)
    return (kind, binding["value"])


def normalise_windows(windows: list[dict]) -> list[tuple[int, list]]:
    """``[(close_ms, sorted rows)]`` from windows written as SPARQL JSON bindings."""
    out = []
    for window in windows:
        rows = sorted(
            tuple(sorted((var, _comparable(value)) for var, value in row.items()))
            for row in window["bindings"]
        )
        out.append((window["close_ms"], rows))
    return out


def term_json(term) -> dict:
    if isinstance(term, IRI):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": term.id}
    out = {"type": "literal", "value": term.lexical}
    if term.datatype:
        out["datatype"] = term.datatype
    if term.lang:
        out["xml:lang"] = term.lang
    return out
