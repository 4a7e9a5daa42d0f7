"""A subscriber that stops reading is cut off instead of holding the others back."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

from engine.stream import Subscription, WindowEvent
from engine.stream.broadcast import Broadcast

CAPACITY = 8


def run(coroutine):
    """Run a coroutine on a loop of its own thread (another test may have left
    one running in this thread)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def event(sequence: int) -> WindowEvent:
    return WindowEvent("q", sequence, 0, 1000, "SELECT", [])


def test_a_full_queue_ends_the_subscriber_stream():
    queue = Subscription([], CAPACITY)
    for sequence in range(CAPACITY):
        queue.offer(event(sequence))
    assert len(queue) == CAPACITY
    assert not queue.offer(event(CAPACITY))  # one too many: never blocks the engine's thread
    assert len(queue) == 0 and queue.dropped
    assert run(queue.next()) is None  # the stream's end


def test_the_broadcast_forgets_a_stalled_subscriber_and_keeps_the_others():
    broadcast = Broadcast(retain=100)
    stalled, reading = broadcast.subscribe(capacity=CAPACITY), broadcast.subscribe(capacity=CAPACITY)
    received = []
    for sequence in range(1, 3 * CAPACITY):
        broadcast.publish(event(sequence))
        received += reading.drain()
    assert stalled.dropped and len(broadcast) == 1
    assert [e.sequence for e in received] == list(range(1, 3 * CAPACITY))


def test_an_awaiting_consumer_is_woken_from_another_thread_and_ends_with_the_query():
    async def consume(queue: Subscription) -> list[int]:
        got = []
        while (e := await queue.next()) is not None:
            got.append(e.sequence)
        return got

    async def main() -> list[int]:
        broadcast = Broadcast(retain=10)
        queue = broadcast.subscribe()
        consumer = asyncio.create_task(consume(queue))

        def engine_thread() -> None:
            for sequence in (1, 2, 3):
                broadcast.publish(event(sequence))
            broadcast.close()

        await asyncio.to_thread(engine_thread)
        return await asyncio.wait_for(consumer, 5)

    assert run(main()) == [1, 2, 3]


def test_a_resuming_subscriber_replays_the_retained_events_after_its_last_id():
    broadcast = Broadcast(retain=3)
    for sequence in range(1, 6):
        broadcast.publish(event(sequence))
    assert [e.sequence for e in broadcast.subscribe(after_sequence=1).replay] == [3, 4, 5]
    assert [e.sequence for e in broadcast.subscribe(after_sequence=4).replay] == [5]
    assert broadcast.subscribe(after_sequence=9).replay == []  # an id from before a restart
    assert broadcast.subscribe().replay == []
