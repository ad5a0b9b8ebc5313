"""Examples for calc.parse: a dataclass result and a custom ValueError subclass."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc.errors import BadInput
from calc.parse import CURRENCIES, Money, parse_money

CASES = [("12.34 EUR", 1234, "EUR"), ("0.05 USD", 5, "USD"), ("100 JPY", 10_000, "JPY")]


@pytest.mark.parametrize(("text", "cents", "currency"), CASES)
def test_parse_money(text, cents, currency):
    money = parse_money(text)
    assert isinstance(money, Money)
    assert money == Money(cents, currency)


@given(st.integers(0, 10**8), st.sampled_from(CURRENCIES))
def test_parse_round_trip(cents, currency):
    assert parse_money(f"{cents // 100}.{cents % 100:02d} {currency}") == Money(cents, currency)


def test_bad_input_is_rejected():
    with pytest.raises(BadInput):
        parse_money("twelve euros")
    with pytest.raises(ValueError):
        parse_money("")
