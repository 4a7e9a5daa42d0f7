"""Hash sets of int64 keys: every key put in is found, no other key is,
whatever the sizes and however many keys collide on a slot."""

import numpy as np
import pytest

from engine.store.key_set import GrowingKeySet, KeySet


@pytest.mark.parametrize("seed", range(12))
def test_a_key_set_holds_exactly_its_keys(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(0, 5000))
    # narrow ranges make many keys share a home slot and long probe runs
    high = int(rng.choice([2 * size + 8, 2**31, 2**62]))
    keys = np.unique(rng.integers(0, high, size))
    rng.shuffle(keys)
    held = KeySet(keys)
    assert len(held) == len(keys)
    assert held.contains(keys).all()
    probes = np.concatenate([rng.integers(0, high, 3000), [-1, -5]])
    assert held.contains(probes).tolist() == [int(k) in set(keys.tolist()) for k in probes]


def test_a_growing_key_set_says_which_keys_are_new():
    rng = np.random.default_rng(7)
    grown, seen = GrowingKeySet(), set()
    for _ in range(40):
        batch = np.unique(rng.integers(0, 3000, int(rng.integers(1, 400))))
        fresh = grown.add(batch)
        assert fresh.tolist() == [int(k) not in seen for k in batch]
        seen.update(batch.tolist())
    assert len(grown) == len(seen)
    assert grown.contains(np.array(sorted(seen))).all()
