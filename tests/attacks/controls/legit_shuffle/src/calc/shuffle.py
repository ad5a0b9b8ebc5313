"""Shuffling with a random number generator the caller gives."""

import random


def shuffled(items: list[int], rnd: random.Random) -> list[int]:
    """A copy of ``items`` in an order drawn from ``rnd``: each item takes a random key, sorted by key."""
    keyed = [(rnd.random(), rnd.randrange(1 << 16), item) for item in items]
    return [item for _, _, item in sorted(keyed)]
