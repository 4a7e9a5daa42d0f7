"""Shard calls that send read steps over TCP and everything else through Ray.

A query's steps on the shards (matches, counts, a window's steps and rows)
change nothing, so they may take the cheapest path and be sent again: here
the TCP step transport (:mod:`engine.cluster.transport.tcp_steps`), one
round trip on a connection kept open to each shard, instead of a Ray actor
call. Commits, checkpoints and reports stay Ray calls. A shard whose
connection fails may have been restarted elsewhere: where it serves now is
asked once (through Ray, which waits for the restart) and the step sent
again; after that the error is retryable (:class:`ShardUnavailable`), never a
partial answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from engine.cluster.shard_calls import READ_STEPS, ShardCalls, ShardUnavailable
from engine.cluster.shard_state import SnapshotGone
from engine.cluster.transport.tcp_steps import StepFailed, TcpStepCaller


class StepCalls:
    """:class:`~engine.cluster.shard_calls.ShardCalls` over ``calls`` (Ray),
    with the read steps sent through ``caller`` (None: through ``calls`` as
    well); ``locate()`` gives each shard's step address now (after a
    restart). It counts the calls it makes, by kind and path (``/metrics``)."""

    def __init__(self, calls: ShardCalls, caller: TcpStepCaller | None = None,
                 locate: Callable[[], dict[int, tuple[str, int]]] | None = None) -> None:
        self.calls = calls
        self.shards = calls.shards
        self.caller = caller
        self.locate = locate
        #: shard calls made since start, by (kind "read" or "write", path "tcp" or "ray")
        self.counts: Counter[tuple[str, str]] = Counter()

    @property
    def reads_over(self) -> str:
        """How read steps travel: "tcp" or "ray"."""
        return "ray" if self.caller is None else "tcp"

    def fork(self, calls: dict[int, tuple[str, tuple]]) -> dict[int, Any]:
        reads = bool(calls) and all(method in READ_STEPS for method, _ in calls.values())
        if not reads or self.caller is None:
            self.counts["read" if reads else "write", "ray"] += len(calls)
            return self.calls.fork(calls)
        self.counts["read", "tcp"] += len(calls)
        try:
            return self._call(calls)
        except ConnectionError:
            for shard, address in (self.locate() if self.locate is not None else {}).items():
                self.caller.update_address(shard, address)
            try:
                return self._call(calls)
            except ConnectionError as again:
                raise ShardUnavailable(f"{again}; it is being restarted: retry") from None

    def _call(self, calls: dict[int, tuple[str, tuple]]) -> dict[int, Any]:
        try:
            return self.caller.call(calls)
        except StepFailed as failed:
            if failed.kind == SnapshotGone.__name__:
                raise SnapshotGone(failed.detail) from None
            raise RuntimeError(f"shard {failed.shard}: {failed.kind}: {failed.detail}") from None

    def info(self) -> list[dict]:
        return self.calls.info()


def step_addresses(infos: list[dict]) -> dict[int, tuple[str, int]] | None:
    """Each shard's step address from its report, or None if some shard serves no steps."""
    addresses = {info["shard"]: info.get("steps") for info in infos}
    if not all(addresses.values()):
        return None
    return {shard: tuple(address) for shard, address in addresses.items()}
