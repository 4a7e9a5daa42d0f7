"""What the catalog hands out: plain frozen rows and its one error type.

Callers get copies, never ORM objects, so nothing they hold is tied to a
session that has closed, and nothing they change by mistake is written back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class CatalogError(Exception):
    """The catalog cannot be opened or cannot do what was asked.

    Messages name the catalog's URL with its password hidden, so they can be
    logged and shown as they are.
    """


@dataclass(frozen=True, slots=True)
class StreamRow:
    """A declared stream: its definition as the caller saved it, and its progress at the last checkpoint.

    ``dropped_lsn`` is set once the stream is dropped; the row stays until a
    checkpoint at or after that LSN, so a replay of the log still finds it.
    """

    name: str
    definition: dict[str, Any]
    declared_lsn: int
    watermark_ms: int | None
    triples_total: int
    dropped_lsn: int | None = None


@dataclass(frozen=True, slots=True)
class QueryRow:
    """A registered continuous query and its progress at the last checkpoint.

    ``dropped_lsn`` is set once the query is unregistered; the row stays until
    a checkpoint at or after that LSN, so a replay of the log still finds it.
    ``policy_state`` and ``events`` are opaque blobs of the stream engine.
    """

    name: str
    text: str
    base: str | None
    registered_lsn: int
    dropped_lsn: int | None
    next_index: int | None
    sequence: int
    policy_state: bytes | None
    events: bytes | None


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    """A checkpoint: the LSN it covers, where its files are, when it was taken (epoch seconds)."""

    lsn: int
    directory: str
    created_at: float
    triples: int
