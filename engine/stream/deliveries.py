"""The identities of the broker messages a stream ingested last.

A broker that delivers at least once (MQTT QoS 1) sends a message again when
it did not see its acknowledgement: Rivulet acknowledges a message only once
its item is durable in the log, so a crash between the two makes the broker
deliver an item the log holds already. The source recognises the second
delivery by the message's identity, which the log keeps with the batch
(``records.batch_record``) and a checkpoint carries over, so a restarted
server knows it too; the redelivery is then acknowledged and not ingested,
and no window changes.

Only recent identities are kept: a broker redelivers only what it has in
flight, which the source bounds (its receive window), so a few thousand
cover it many times over, and the set does not grow with the stream.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator

#: identities a stream remembers (far above any source's in-flight window)
REMEMBERED = 4096


class RecentDeliveries:
    """The last :data:`REMEMBERED` identities, oldest first; adding past
    the bound forgets the oldest."""

    def __init__(self, capacity: int = REMEMBERED) -> None:
        self.capacity = capacity
        self._seen: OrderedDict[str, None] = OrderedDict()

    def __contains__(self, identity: object) -> bool:
        return identity in self._seen

    def __len__(self) -> int:
        return len(self._seen)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._seen))

    def add(self, identities: Iterable[str]) -> None:
        for identity in identities:
            self._seen[identity] = None
            self._seen.move_to_end(identity)
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)
