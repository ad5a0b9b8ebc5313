"""prop.tax_round: tax is rounded half up to a whole cent."""

from hypothesis import given
from hypothesis import strategies as st
from orders.tax import tax_cents


@given(amount=st.integers(min_value=0, max_value=100_000), rate=st.sampled_from([1900, 2000, 2100, 2500]))
def test_tax_round_half_up(amount, rate):
    expected = (amount * rate + 5_000) // 10_000
    got = tax_cents(amount, rate)
    assert got == expected, f"tax_cents({amount}, {rate}) = {got}, expected {expected}"
