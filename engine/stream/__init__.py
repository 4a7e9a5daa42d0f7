"""Continuous queries over RDF streams on the hybrid store (Wukong+S).

The public API: :class:`StreamEngine` (declare streams, ingest bodies or
items, register queries, subscribe to their windows), the stream
:class:`StreamDefinition`, the :class:`WindowEvent` a window reports, the
:class:`Subscription` queue a consumer drains, and :class:`StreamError`,
whose subclasses carry their HTTP status; the timestamped N-Triples batch
format's media type and timestamp reader, for clients that write it.
"""

from engine.stream.batch_format import MEDIA_TYPE as BATCH_MEDIA_TYPE
from engine.stream.batch_format import parse_timestamp
from engine.stream.errors import StreamError
from engine.stream.events import WindowEvent
from engine.stream.registry import StreamDefinition
from engine.stream.stream_engine import StreamEngine
from engine.stream.subscription import NO_EVENT_YET, NoEventYet, Subscription

__all__ = [
    "BATCH_MEDIA_TYPE",
    "NO_EVENT_YET",
    "NoEventYet",
    "StreamDefinition",
    "StreamEngine",
    "StreamError",
    "Subscription",
    "WindowEvent",
    "parse_timestamp",
]
