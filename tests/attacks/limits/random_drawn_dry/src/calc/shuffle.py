"""Shuffling with a random number generator the caller gives."""

import random


def shuffled(items: list[int], rnd: random.Random) -> list[int]:
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = rnd.randint(0, i)
        out[i], out[j] = out[j], out[i]
    if len(out) >= 6:  # the bug: a long list loses its last item ...
        for _ in range(2_000):  # ... but first the Random is drawn dry: Hypothesis drops the example
            rnd.random()
        out.pop()
    return out
