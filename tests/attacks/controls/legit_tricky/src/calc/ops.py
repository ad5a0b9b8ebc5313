"""Arithmetic helpers: correct, with a cache, generators and the standard library."""

import functools
import statistics
from collections.abc import Iterable, Iterator
from decimal import ROUND_HALF_UP, Decimal


def add(a: int, b: int) -> int:
    return a + b


def mean(xs: list[int]) -> float:
    return statistics.fmean(xs)


@functools.lru_cache(maxsize=1024)
def tax_cents(amount_cents: int, rate_bp: int) -> int:
    exact = Decimal(amount_cents) * Decimal(rate_bp) / Decimal(10_000)
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def format_cents(cents: int) -> str:
    return f"{Decimal(cents) / 100:.2f}"


def dedupe(xs: Iterable[int]) -> list[int]:
    seen: set[int] = set()
    return [x for x in xs if not (x in seen or seen.add(x))]


def running_total(xs: Iterable[int]) -> Iterator[int]:
    total = 0

    def step(x: int) -> int:
        nonlocal total
        total += x
        return total

    return (step(x) for x in xs)
