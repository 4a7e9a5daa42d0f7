"""The store could not be read or written just now, but will be again.

A sharded store raises this when a shard is restarting or a query's
snapshot was reclaimed meanwhile. Nothing was answered wrong and nothing
was half done: readers retry (the stream engine re-evaluates the window)
or answer a retryable error (HTTP 503 with ``Retry-After``).
"""

from __future__ import annotations


class StoreUnavailable(RuntimeError):
    """Retry in about ``retry_after`` seconds."""

    retry_after = 2
