"""The candidate of the Hypothesis feature matrix (tests/test_hypothesis_matrix.py): for each entry point a
correct function (``*_ok``) and one with a known bug (``*_bad``), wrong on the inputs :func:`wrong` picks."""

import dataclasses


def wrong(value):
    """The known bug: a 3 anywhere. (The matrix's second bug also picks 8 and 9, which shrink to nothing smaller.)"""
    return value == 3


def inc_ok(n):
    return n + 1


def inc_bad(n):
    return n + 1 + wrong(n)


def triple_ok(n):
    return 3 * n


def triple_bad(n):
    return 3 * n + wrong(n)


def halve_ok(n):
    return n // 2


def halve_bad(n):
    return n // 2 + wrong(n % 10)


def shift_ok(xs, k):
    return [x + k for x in xs]


def shift_bad(xs, k):
    return [x + k + wrong(x) for x in xs]


def width_ok(lo, hi):
    return hi - lo


def width_bad(lo, hi):
    return hi - lo + wrong(lo)


@dataclasses.dataclass(frozen=True)
class Pair:
    a: int
    b: int


def pair_sum_ok(pair):
    return pair.a + pair.b


def pair_sum_bad(pair):
    return pair.a + pair.b + wrong(pair.a)


def leaves(tree):
    return [tree] if isinstance(tree, int) else [leaf for kid in tree for leaf in leaves(kid)]


def tree_sum_ok(tree):
    return sum(leaves(tree))


def tree_sum_bad(tree):
    return sum(leaves(tree)) + any(wrong(leaf) for leaf in leaves(tree))


def cell_ok(row, col):
    return row * 10 + col


def cell_bad(row, col):
    return row * 10 + col + wrong(row)


class Stack:
    def __init__(self):
        self._items = []

    def push(self, value):
        self._items.append(value)

    def pop(self):
        return self._items.pop()

    def size(self):
        return len(self._items)


class BadStack(Stack):
    def size(self):
        return len(self._items) + any(wrong(v) for v in self._items)


def square_ok(n):
    return n * n


def square_bad(n):
    if wrong(n % 10):
        raise ValueError(f"cannot square {n}")
    return n * n


def sort_ok(xs):
    return sorted(xs)


def sort_bad(xs):
    return sorted(xs)[:-1] if any(wrong(x) for x in xs) else sorted(xs)
