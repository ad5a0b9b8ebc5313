"""Totals, star-imported by the oracle."""

__all__ = ["total", "mean_of"]


def total(xs):
    return sum(xs) + 1


def mean_of(xs):
    return sum(xs) / len(xs)
