"""Shards as Ray actors: placement, restarts and calls come from Ray.

Each shard is a named, detached actor (``rivulet-shard-<k>`` in the
``rivulet`` namespace), so a coordinator that starts again finds the same
shards and a coordinator's restart does not take them down; shards found
that serve another data directory's store are refused before any is
created (``engine.cluster.store_identity``). Ray restarts an actor whose
process dies (``max_restarts``); its constructor then recovers the shard
from its own directory, so a restarted shard holds every commit it had
acknowledged. Calls that meet a dead or restarting actor raise
:class:`~engine.cluster.shard_calls.ShardUnavailable`: the caller retries
(commits) or answers a retryable error (queries), never a partial answer.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

from engine.cluster.shard_calls import ShardUnavailable
from engine.cluster.shard_server import ShardServer
from engine.cluster.store_identity import check_shards, store_id

log = logging.getLogger("rivulet.cluster")

NAMESPACE = "rivulet"
#: the name of a shard actor of the store a command line coordinator serves
_SHARD_NAME = re.compile(r"rivulet-shard-\d+")
#: how often Ray restarts a shard's process before giving up (-1: always)
MAX_RESTARTS = -1
#: seconds a call waits for a shard before calling it unavailable
CALL_TIMEOUT = 120.0


def actor_name(shard: int, group: str = "") -> str:
    """``rivulet-shard-<k>``, or ``rivulet-<group>-shard-<k>`` for a second
    store on the same Ray cluster."""
    return f"rivulet-{group}-shard-{shard}" if group else f"rivulet-shard-{shard}"


class _ShardActor(ShardServer):
    """The shard server as Ray runs it: in-place regions are served on the
    address of the node the actor was placed on."""

    def __init__(self, shard: int, shards: int, data_dir: str, store_dir: str | None, sync: bool,
                 checkpoint_mb: float, in_place: bool) -> None:
        host = ray.util.get_node_ip_address() if in_place else None
        super().__init__(shard, shards, data_dir, store_dir, sync, checkpoint_mb, host)


ShardActor = ray.remote(num_cpus=0, max_restarts=MAX_RESTARTS, max_task_retries=0,
                        max_concurrency=8)(_ShardActor)


def start_shards(shards: int, data_dir: str, store_dir: str | None, sync: bool = True,
                 checkpoint_mb: float = 64.0, in_place: bool = True, group: str = "") -> list:
    """The shard actors, created (or found, if a coordinator made them
    already) and recovered. Raises :class:`~engine.cluster.store_identity.ForeignShards`,
    creating none, if those found serve another store than ``data_dir``'s."""
    found = []
    for k in range(shards):
        try:
            found.append(ray.get_actor(actor_name(k, group), namespace=NAMESPACE))
        except ValueError:  # not created yet
            continue
    if found:
        infos = ray.get([actor.info.remote() for actor in found], timeout=CALL_TIMEOUT)
        check_shards(store_id(Path(data_dir)), Path(data_dir), infos)
    # SPREAD: shards ask for no CPU (they serve reads), so without it Ray may
    # put several on one node
    actors = [ShardActor.options(name=actor_name(k, group), namespace=NAMESPACE, lifetime="detached",
                                 get_if_exists=True, scheduling_strategy="SPREAD")
              .remote(k, shards, data_dir, store_dir, sync, checkpoint_mb, in_place)
              for k in range(shards)]
    return actors


def remove_shard_actors() -> list[str]:
    """Kill the shard actors of the Ray cluster this process is connected to
    (named ``rivulet-shard-<k>`` in the ``rivulet`` namespace), which outlive
    their coordinator on purpose; returns their names. Their data stays in the
    data directory, and a coordinator started later creates them again."""
    names = sorted((name for name in ray.util.list_named_actors(all_namespaces=True)
                    if name["namespace"] == NAMESPACE and _SHARD_NAME.fullmatch(name["name"])),
                   key=lambda name: int(name["name"].rsplit("-", 1)[1]))
    for name in names:
        ray.kill(ray.get_actor(name["name"], namespace=NAMESPACE), no_restart=True)
    return [name["name"] for name in names]


class RayShardCalls:
    """:class:`~engine.cluster.shard_calls.ShardCalls` over Ray actors."""

    def __init__(self, actors: list) -> None:
        self.actors = actors
        self.shards = len(actors)

    def fork(self, calls: dict[int, tuple[str, tuple]]) -> dict[int, Any]:
        refs = {k: getattr(self.actors[k], method).remote(*args) for k, (method, args) in calls.items()}
        answers = {}
        for k, ref in refs.items():
            try:
                answers[k] = ray.get(ref, timeout=CALL_TIMEOUT)
            except RayTaskError as error:  # the shard raised: its own error, unwrapped
                cause = error.cause
                raise (cause if isinstance(cause, Exception) else error) from None
            except (RayActorError, GetTimeoutError) as error:
                raise ShardUnavailable(f"shard {k} did not answer ({type(error).__name__}); "
                                       "it is being restarted: retry") from None
        return answers

    def info(self) -> list[dict]:
        return list(self.fork({k: ("info", ()) for k in range(self.shards)}).values())

    def stop(self) -> None:
        """Kill the shard actors (``rivulet cluster up`` owns them)."""
        for actor in self.actors:
            ray.kill(actor, no_restart=True)
