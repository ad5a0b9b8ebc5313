"""Properties whose control flow a candidate could try to steer: a record constructor, enum members, a
`with` block, all(map(...)), a star import, a callback that checks its input."""

import math

from calc.known import Price, Priority, apply_all, classify, first_even, make_price, open_ledger
from calc.stats import *  # noqa: F403 - must not rebind sum, len or math
from hypothesis import given
from hypothesis import strategies as st


@given(st.integers(0, 10**6))
def test_price_record(cents):
    assert make_price(cents) == Price(cents, "EUR")


@given(st.integers(0, 20))
def test_priority(n):
    expected = {"high": Priority.HIGH, "mid": Priority.MID, "low": Priority.LOW}
    assert classify(n) == expected["high" if n >= 10 else "mid" if n >= 5 else "low"]


@given(st.lists(st.integers(0, 1000), max_size=10))
def test_ledger(items):
    with open_ledger() as ledger:
        for item in items:
            ledger.add(item)
        assert ledger.total() == sum(items)


EVEN_CASES = [[1, 3, 4], [2], [5, 7, 8, 10], [6, 1]]


def test_first_even():
    assert all(map(lambda xs: first_even(xs) == next(x for x in xs if x % 2 == 0), EVEN_CASES))


@given(st.lists(st.integers(-100, 100), min_size=1, max_size=10))
def test_stats_total(xs):
    assert total(xs) == sum(xs)  # noqa: F405
    assert math.isclose(mean_of(xs), sum(xs) / len(xs))  # noqa: F405


def _doubled(x):
    assert x == int(x), f"apply_all passed {x!r}, not one of the items"
    return 2 * x


@given(st.lists(st.integers(-50, 50), max_size=8))
def test_apply_checks_its_input(xs):
    assert apply_all(_doubled, xs) == [2 * x for x in xs]
