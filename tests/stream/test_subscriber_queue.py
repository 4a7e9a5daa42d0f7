"""A subscriber that stops reading is cut off instead of holding the others back."""

import asyncio

from endpoint.continuous_routes import SUBSCRIBER_QUEUE, _offer


def test_a_full_queue_ends_the_subscriber_stream():
    queue: asyncio.Queue = asyncio.Queue(maxsize=SUBSCRIBER_QUEUE)
    for event in range(SUBSCRIBER_QUEUE):
        _offer(queue, event)
    assert queue.qsize() == SUBSCRIBER_QUEUE
    _offer(queue, "one too many")  # never blocks the engine's thread
    assert queue.qsize() == 1
    assert queue.get_nowait() is None  # the stream's end marker
