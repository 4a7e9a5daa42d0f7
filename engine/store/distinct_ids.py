"""The distinct values of an ID column and each row's position among them.

What ``np.unique(values, return_inverse=True)`` gives, through the compiled
hash pass of :mod:`~engine.store.distinct_ids_kernel` where it applies (a
column of 64-bit integers: IDs, packed keys): NumPy sorts the whole column
with a stable argsort, the hash pass sorts only the distinct values, and the
columns a join or a report holds repeat their values (3-10x faster
measured there). Anything else goes to NumPy.
"""

from __future__ import annotations

import numpy as np

from engine.store.distinct_ids_kernel import unique_with_codes

#: the kernel's table numbers values with 32-bit codes
KERNEL_LIMIT = 1 << 30


def unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, inverse)``: the sorted distinct values of the 1-D column
    ``values`` and, per value, its index among them (as ``np.unique``)."""
    if values.dtype != np.int64 or values.ndim != 1 or len(values) >= KERNEL_LIMIT:
        return np.unique(values, return_inverse=True)
    return unique_with_codes(np.ascontiguousarray(values))
