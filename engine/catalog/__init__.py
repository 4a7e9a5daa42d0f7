"""The catalog: streams, queries, graph names and checkpoints, kept in SQLite or PostgreSQL.

The triples live in the store's own files; everything else that must survive
a restart lives here, behind :class:`Catalog`, which hands out frozen rows.
"""

from engine.catalog.catalog import Catalog
from engine.catalog.rows import CatalogError, CheckpointRow, QueryRow, StreamRow

__all__ = ["Catalog", "CatalogError", "CheckpointRow", "QueryRow", "StreamRow"]
