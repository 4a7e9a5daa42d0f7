"""What the store hands a journal: the changes of a transaction, in order.

The store knows only this protocol; the durability layer above it
(:mod:`engine.durability`) implements it with a write-ahead log. Changes
carry term IDs: the journal spells them as terms when it writes, because IDs
are not stable across restarts (a checkpoint renumbers its terms).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Change:
    """One change of a transaction: ``add``/``remove`` (with the ``s``, ``p``,
    ``o`` ID columns), ``create``, ``clear`` or ``drop`` of a graph."""

    kind: str
    graph_id: int
    columns: tuple[np.ndarray, ...] = ()


class Journal(Protocol):
    """Where journaled transactions go before they are published."""

    def write(self, store, changes: list[Change]) -> int:
        """Write the changes of one transaction; return its position. Called
        under the store's write lock, so positions follow commit order."""

    def wait_durable(self, position: int) -> None:
        """Return once everything written up to ``position`` is durable."""
