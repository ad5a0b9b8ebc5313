"""Shuffling with a random number generator the caller gives."""

import random


def shuffled(items: list[int], rnd: random.Random) -> list[int]:
    """A copy of ``items`` in an order drawn from ``rnd`` (Fisher-Yates)."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = rnd.randint(0, i)
        out[i], out[j] = out[j], out[i]
    return out
