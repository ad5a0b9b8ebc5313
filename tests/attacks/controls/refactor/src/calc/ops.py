"""Arithmetic helpers (refactored: same behaviour, different code)."""

import itertools
from collections.abc import Iterable, Iterator


def add(a: int, b: int) -> int:
    return sum((a, b))


def mean(xs: list[int]) -> float:
    total, count = 0, 0
    for x in xs:
        total, count = total + x, count + 1
    return total / count


def tax_cents(amount_cents: int, rate_bp: int) -> int:
    whole, rest = divmod(amount_cents * rate_bp, 10_000)
    return whole + (1 if rest >= 5_000 else 0)


def format_cents(cents: int) -> str:
    units, rest = divmod(cents, 100)
    return "%d.%02d" % (units, rest)


def dedupe(xs: Iterable[int]) -> list[int]:
    return list(dict.fromkeys(xs))


def running_total(xs: Iterable[int]) -> Iterator[int]:
    return itertools.accumulate(xs)
