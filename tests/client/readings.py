"""The workload of the client tests: sensor readings, one tumbling-window query, the answers it must give.

Item ``i`` is one reading of sensor ``i % 3`` with value ``i`` at
``T0 + 50 * i`` ms, so each 1 s window holds 20 readings and its answer,
per sensor, is computed here from the same numbers: what the windows the
client yields are compared to.
"""

from __future__ import annotations

from endpoint.client import IRI

EX = "http://example.org/client/"
T0 = 1_700_000_000_000
STEP_MS = 50
WINDOW_MS = 1000
TEMP = IRI(f"{EX}temp")


def registration(stream_iri: str, name: str = "per_sensor") -> str:
    return f"""PREFIX ex: <{EX}>
REGISTER RSTREAM {name} AS
SELECT ?sensor (COUNT(*) AS ?n) (SUM(?v) AS ?total)
FROM NAMED WINDOW ex:w ON <{stream_iri}> [RANGE PT1S STEP PT1S]
WHERE {{ WINDOW ex:w {{ ?sensor ex:temp ?v }} }}
GROUP BY ?sensor"""


def sensor(i: int) -> IRI:
    return IRI(f"{EX}sensor{i % 3}")


def stamp(i: int) -> int:
    return T0 + STEP_MS * i


def item(i: int) -> list[tuple]:
    """The triples of item ``i``."""
    return [(sensor(i), TEMP, i)]


def close_of(window: int) -> int:
    """The end (exclusive) of the ``window``-th window, 1-based: the first holds item 0."""
    return T0 + WINDOW_MS * window


def expected_rows(window: int) -> list[dict]:
    """The answer of the ``window``-th window (1-based), sorted by sensor."""
    start, end = close_of(window) - WINDOW_MS, close_of(window)
    per_sensor: dict[IRI, list[int]] = {}
    i = 0
    while stamp(i) < end:
        if stamp(i) >= start:
            per_sensor.setdefault(sensor(i), []).append(i)
        i += 1
    return [{"sensor": s, "n": len(v), "total": sum(v)} for s, v in sorted(per_sensor.items())]


def sorted_rows(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: row["sensor"])
