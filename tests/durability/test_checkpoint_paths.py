"""Where a catalog says a checkpoint is: relative to the data directory (so a copied or
moved directory opens wherever it lands), and absolute as older versions wrote it."""

from __future__ import annotations

import sqlite3

from engine.durability import DataDirectory
from tests.durability.test_checkpoint_differential import quads

EX = "http://example.org/"


def test_a_moved_data_directory_opens_whether_its_catalog_names_checkpoints_relatively_or_not(tmp_path):
    data = DataDirectory.open(tmp_path / "data")
    data.store.update(f'INSERT DATA {{ <{EX}a> <{EX}p> "kept" . GRAPH <{EX}g> {{ <{EX}a> <{EX}p> 1 }} }}')
    data.checkpoint()
    expected = quads(data)
    recorded = data.catalog.last_checkpoint().directory
    data.close()
    assert recorded == f"checkpoints/{int(recorded.rsplit('/', 1)[1]):020d}"  # relative
    (tmp_path / "data").rename(tmp_path / "moved")
    moved = DataDirectory.open(tmp_path / "moved")
    assert quads(moved) == expected
    moved.close()
    # a catalog written by an earlier version names the checkpoint by its absolute path
    old_path = str((tmp_path / "data" / recorded).resolve())
    with sqlite3.connect(tmp_path / "moved" / "catalog.sqlite") as catalog:
        catalog.execute("UPDATE checkpoints SET directory = ?", (old_path,))
    older = DataDirectory.open(tmp_path / "moved")  # found by name under its own checkpoints/
    assert quads(older) == expected
    older.store.update(f'INSERT DATA {{ <{EX}b> <{EX}p> "after" }}')
    older.checkpoint()  # the next checkpoint is recorded relatively, and the old one removed
    assert older.catalog.last_checkpoint().directory.startswith("checkpoints/")
    after = quads(older)
    older.close()
    again = DataDirectory.open(tmp_path / "moved")
    assert quads(again) == after
    assert len(list((tmp_path / "moved" / "checkpoints").iterdir())) == 1
    again.close()
