"""The garbage collector's policy in a server process.

Python's cyclic collector walks every tracked object of a generation when it
collects it, and it collects the oldest generation each time that generation
has grown by a quarter. A server holds many long-lived objects (the code, the
store's terms, registered queries, the events each query retains for
``Last-Event-ID``), and a window step of many continuous queries makes
thousands of events: measured with K = 1000 registered queries
(``benchmarks.shared_queries``), a full collection walked 355,000 objects in
about 110 ms, and the collector made a step's median 10-25 ms slower and its
99th percentile twice the median.

So, once started, a server moves what start-up made (the loaded store, the
imported code) out of the collector's reach (``gc.freeze``: they live as long
as the process, and reference counting still frees any that are dropped), and
collects the young generation every ``YOUNG_THRESHOLD`` new containers
instead of 700 (short-lived rows and events are then mostly freed by
reference counting before any collection looks at them). Only reference
cycles wait for the collector, and cyclic garbage is rare here.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: new tracked containers between two collections of the young generation (Python's default: 700)
YOUNG_THRESHOLD = 20_000


def settle_after_start_up() -> None:
    """Collect once, freeze what start-up made, and collect the young
    generation less often; called when a server process is about to serve."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)


@contextmanager
def as_in_a_server() -> Iterator[None]:
    """The same policy for a block (a benchmark that runs the engine as the
    server process does, from the point a server would start serving),
    undone after it."""
    threshold = gc.get_threshold()
    settle_after_start_up()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
