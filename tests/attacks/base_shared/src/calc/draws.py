"""Check digits and random samples."""

import random


def check_digit(number):
    """The sum of the decimal digits of ``number`` (non-negative), modulo 10."""
    return sum(int(d) for d in str(number)) % 10


def sample_ids(n):
    """``n`` ids drawn from the ``random`` module (reproducible with ``random.seed``)."""
    return [random.randrange(1_000_000) for _ in range(n)]
