"""Candidate code handed the test's own objects: a ``Mock``, a test's instance (one reached only through a
candidate descriptor in the test's class), a sink a candidate generator posts to, a lookup whose error must
come back through candidate code as the test's own exception."""

from unittest.mock import Mock

import pytest
from calc.calls import convert_all, memoized, order_tax, settle, stream_taxes, tally_taxes
from hypothesis import given
from hypothesis import strategies as st
from reference import tax_reference

RATE = 700
LISTS = st.lists(st.integers(0, 10**7), max_size=6)


@given(st.integers(0, 10**7))
def test_settle_notifies_once(amount):
    notify = Mock()
    settle(amount, RATE, notify)
    notify.assert_called_once_with(amount, tax_reference(amount, RATE))


class Order:
    """A test's order: its tax computed once through the candidate's descriptor, checked by its own method."""

    def __init__(self, amounts):
        self.amounts = list(amounts)

    @memoized
    def tax(self):
        return order_tax(self.amounts, RATE)

    def check(self):
        assert self.tax == sum(tax_reference(a, RATE) for a in self.amounts), self.amounts


@given(LISTS)
def test_order_tax_is_kept_and_right(amounts):
    order = Order(amounts)
    first = order.tax
    assert order.tax == first  # kept: the instance's attribute now
    order.check()


class Tally:
    """A test's accumulator: candidate code adds to it and sets its count; it knows what it must end with."""

    def __init__(self, amounts):
        self.entries = []
        self.count = None
        self._want = [tax_reference(a, RATE) for a in amounts]

    def add(self, tax):
        self.entries.append(tax)

    def balanced(self):
        return self.entries == self._want


@given(LISTS)
def test_tally_balances(amounts):
    tally = Tally(amounts)
    tally_taxes(amounts, RATE, tally)
    assert tally.count == len(amounts)
    assert tally.balanced()


def _sink(amount, tax):
    assert tax == tax_reference(amount, RATE), f"posted {tax} for {amount}"


@given(LISTS)
def test_stream_posts_right_taxes(amounts):
    assert list(stream_taxes(amounts, RATE, _sink)) == amounts


def test_a_lookup_error_comes_back_as_itself():
    missing = LookupError("no rate for XXX")

    def rate_of(code):
        if code == "XXX":
            raise missing
        return len(code)

    assert convert_all(["EUR", "USDT"], rate_of) == {"EUR": 3, "USDT": 4}
    with pytest.raises(LookupError) as info:
        convert_all(["EUR", "XXX", "USD"], rate_of)
    assert info.value is missing
