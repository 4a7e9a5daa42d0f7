"""``rivulet cluster up`` and ``rivulet serve --cluster``: the endpoint as a
cluster's coordinator, its store's triples on Ray shard actors.

``cluster up`` starts a Ray runtime on this machine (a local cluster) and
the shards in it; ``serve --cluster ray://HOST:PORT`` (or ``auto``) joins a
Ray cluster started by ``ray start`` or KubeRay, and creates the shard
actors there or finds those another coordinator created. Either way the
data directory holds each shard's log and checkpoints (``shards/<k>``), the
coordinator's commit log (``coordinator``) and its streams, continuous
queries and their progress (``streams``: a catalog and a log, as one node's
data directory keeps them): on shared storage when the shards run on
several nodes.

The data directory's store ID (``DIR/store-id``) is the store's identity:
shards that report another one belong to another store, and the coordinator
is refused with both IDs and what to do (exit status 1), changing nothing.
"""

from __future__ import annotations

import argparse
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from engine.api import Store
from engine.durability import DataDirectory
from engine.store.layout import Manifest
from engine.stream import StreamEngine

log = logging.getLogger("rivulet.cluster")

#: shards when neither --shards nor a loaded store says
DEFAULT_SHARDS = 3
#: Ray's variable for its authentication mode ("token", "disabled")
RAY_AUTH_MODE = "RAY_AUTH_MODE"


def token_auth_if_at_hand() -> None:
    """Present Ray's token when one is at hand and no mode is set.

    Ray 2.60's ``ray start --head`` turns token authentication on when a
    token exists (``~/.ray/auth_token``, or ``RAY_AUTH_TOKEN_PATH`` or
    ``RAY_AUTH_TOKEN``), but a process that joins by an explicit address
    sends it only with ``RAY_AUTH_MODE=token``: without it, ``ray.init``
    retries for about 20 s on ``InvalidAuthToken`` and fails. An explicit
    ``RAY_AUTH_MODE`` (``disabled`` too) is left as it is. Called before
    ``import ray``, which reads the variable once."""
    if RAY_AUTH_MODE in os.environ:
        return
    path = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")
    if os.environ.get("RAY_AUTH_TOKEN") or path.is_file():
        os.environ[RAY_AUTH_MODE] = "token"
        log.info("a Ray authentication token is at hand and %s is not set: joining with %s=token",
                 RAY_AUTH_MODE, RAY_AUTH_MODE)


@dataclass
class Cluster:
    """The store, its streams, and what must be stopped with the server."""

    store: Store
    calls: object
    owns_shards: bool
    #: the streams, continuous queries and their progress, kept across restarts
    data: DataDirectory

    @property
    def streams(self) -> StreamEngine:
        return self.data.engine

    def close(self) -> None:
        self.data.close()
        self.store.quad_store.close()
        if self.owns_shards:
            self.calls.stop()


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``cluster up``."""
    from endpoint.serve import add_cluster_options, add_serve_options, run

    cluster = subparsers.add_parser("cluster", help="run a sharded store on Ray")
    actions = cluster.add_subparsers(dest="action", required=True)
    up = actions.add_parser(
        "up", help="start a Ray cluster on this machine, N shards in it, and the endpoint",
        description="Start a local Ray runtime, the store's shards as Ray actors and the endpoint "
                    "as their coordinator; stopping the endpoint stops the shards.")
    add_serve_options(up)
    add_cluster_options(up)
    up.set_defaults(run=run, cluster="local")
    down = actions.add_parser(
        "down", help="remove the shard actors a stopped 'serve --cluster' coordinator left on Ray",
        description="Kill the shard actors (rivulet-shard-<k>, Ray namespace 'rivulet') on a Ray cluster "
                    "whose coordinator has stopped: they outlive it on purpose, so that a restarted "
                    "coordinator finds them. Their data stays in the data directory. Stop the "
                    "coordinator first.")
    down.add_argument("--cluster", default="auto", metavar="ADDRESS",
                      help="the Ray cluster: auto (default: the one this machine is a node of), "
                           "ray://HOST:PORT, or HOST:PORT of its head")
    down.set_defaults(run=remove_shards)


def remove_shards(args: argparse.Namespace) -> int:
    """``rivulet cluster down``: the shard actors killed, their names printed."""
    token_auth_if_at_hand()  # before Ray is imported: it reads its settings once
    import ray

    from engine.cluster.ray_shards import NAMESPACE, remove_shard_actors

    ray.init(address=args.cluster, namespace=NAMESPACE, configure_logging=False, log_to_driver=False)
    try:
        removed = remove_shard_actors()
    finally:
        ray.shutdown()
    print(f"removed {len(removed)} shard actor(s): {', '.join(removed)}" if removed
          else "no shard actors on this Ray cluster")
    return 0


def shard_count(args: argparse.Namespace) -> int:
    loaded = Manifest.read(Path(args.store)).shards if args.store else None
    if args.shards is not None and loaded is not None and args.shards != loaded:
        raise SystemExit(f"rivulet: {args.store} was loaded in {loaded} shard(s), not --shards "
                         f"{args.shards}: load it again with rivulet load --shards {args.shards}")
    return args.shards or loaded or DEFAULT_SHARDS


def open_cluster(args: argparse.Namespace) -> Cluster:
    """Connect to (or start) Ray, start or find the shards, open the store."""
    if not args.data_dir:
        raise SystemExit("rivulet: a cluster needs --data-dir (the shards' and coordinator's logs)")
    if args.processes > 1:
        raise SystemExit("rivulet: --processes cannot be combined with --cluster (run more coordinators)")
    if args.cluster != "local":
        token_auth_if_at_hand()  # before Ray is imported: it reads its settings once
    import ray

    from engine.cluster import open_cluster_store
    from engine.cluster.ray_shards import NAMESPACE, RayShardCalls, start_shards
    from engine.cluster.store_identity import ForeignShards

    shards = shard_count(args)
    if args.cluster == "local":  # a new runtime, even where `ray start` runs or RAY_ADDRESS is set
        ray.init(address="local", include_dashboard=False, namespace=NAMESPACE, configure_logging=False)
    else:
        ray.init(address=args.cluster, namespace=NAMESPACE, configure_logging=False)
    data_dir = Path(args.data_dir).resolve()
    store_dir = Path(args.store).resolve() if args.store else None
    try:
        actors = start_shards(shards, str(data_dir), str(store_dir) if store_dir else None,
                              sync=args.sync == "always", checkpoint_mb=args.checkpoint_mb,
                              in_place=args.transport != "ray")
        calls = RayShardCalls(actors)
        store = open_cluster_store(calls, data_dir, store_dir, sync=args.sync == "always",
                                   transport=args.transport, checkpoint_mb=args.checkpoint_mb)
    except ForeignShards as exc:
        raise SystemExit(f"rivulet serve: {exc}") from None
    from endpoint.serve import CATALOG_VARIABLE, data_files, window_limits

    if store.quad_store.snapshot().version == 0:
        for path in data_files(args):
            before = len(store)
            read = store.load(path)
            log.info("loaded %d triples (%d statements read) from %s into the cluster", len(store) - before,
                     read, path)
    elif data_files(args):
        log.info("the cluster has data already: the --data files are not loaded again")
    catalog = args.catalog or os.environ.get(CATALOG_VARIABLE) or None
    data = DataDirectory.open(data_dir / "streams", catalog, sync=args.sync == "always",
                              checkpoint_mb=args.checkpoint_mb, store=store,
                              engine_options=window_limits(args))
    log.info("cluster of %d shards on Ray (%s)", shards, args.cluster)
    return Cluster(store, calls, owns_shards=args.cluster == "local", data=data)
