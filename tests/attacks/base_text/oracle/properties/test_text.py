"""Round trips through text and bytes, as real suites check them: a repr read back with eval, and bytes
read back with pickle.loads."""

import pickle

from calc.parse import CURRENCIES, Money, parse_money
from calc.store import dump
from hypothesis import given
from hypothesis import strategies as st


def test_repr_round_trip():
    money = parse_money("12.34 EUR")
    assert eval(repr(money), {"Money": Money}) == money


def test_repr_reads_back_here():
    money = parse_money("0.05 USD")
    assert eval(repr(money)) == money


@given(st.integers(0, 10**6), st.sampled_from(CURRENCIES))
def test_pickle_round_trip(cents, currency):
    money = Money(cents, currency)
    assert pickle.loads(dump(money)) == money
