"""Which store a cluster's shards belong to: an ID made with its data directory.

The shard actors are found by name on the Ray cluster, and the names say
nothing of the store (so that a coordinator that starts again finds them).
A coordinator started with another ``--data-dir`` on the same Ray cluster
would find them too and write its own commits over another store's: so the
data directory gets an ID when it is first used (``DIR/store-id``, a random
UUID, never changed), every shard reports the ID of the directory it
serves, and a coordinator whose directory has another ID is refused before
it changes anything (:class:`ForeignShards`).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from engine.durability.wal import fsync_directory

STORE_ID_FILE = "store-id"


class ForeignShards(RuntimeError):
    """The shards reached serve another store than the coordinator's data directory."""


def store_id(data_dir: Path) -> str:
    """The ID of the cluster store in ``data_dir``, made now if it has none
    (atomically: processes that start at once agree on one)."""
    path = data_dir / STORE_ID_FILE
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        made = uuid.uuid4().hex
        partial = data_dir / f"{STORE_ID_FILE}.{made}.partial"
        with open(partial, "w", encoding="ascii") as out:
            out.write(made + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(partial, path)  # fails if another process made it first: its ID stands
        except FileExistsError:
            pass
        finally:
            partial.unlink()
        fsync_directory(data_dir)
    return path.read_text(encoding="ascii").strip()


def check_shards(own: str, data_dir: Path, infos: list[dict]) -> None:
    """Refuse shards whose reports (``store_id``, ``data_dir``) name another
    store than ``own`` (the ID of ``data_dir``), saying what to do."""
    foreign = [info for info in infos if info.get("store_id") != own]
    if not foreign:
        return
    other = foreign[0]
    shards = ", ".join(str(info["shard"]) for info in foreign)
    raise ForeignShards(
        f"the shards on this Ray cluster belong to another store: shard(s) {shards} serve store "
        f"{other.get('store_id')} (data directory {other.get('data_dir')}), but this coordinator's data "
        f"directory {data_dir} is store {own}. Nothing was changed. To serve store {other.get('store_id')}, "
        f"start the coordinator with --data-dir {other.get('data_dir')} (one coordinator per store: stop "
        "the one serving it first); to serve this data directory, stop the other store's shards first "
        "(its 'rivulet cluster up', or 'ray stop' on that Ray cluster), or use another Ray cluster.")
