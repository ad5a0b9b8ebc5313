"""Oracle classes that subclass the candidate's, as real suites do: a register whose hook the test overrides to
check each entry (then ``super()``), a till whose subclass guards its amounts with the test's own table."""

from calc.hooks import Register, Till
from hypothesis import given
from hypothesis import strategies as st
from reference import tax_reference

RATE = 700


class AuditedRegister(Register):
    """Checks every entry the candidate's ``add`` books through the hook, then books it as the base does."""

    def book(self, amount, tax):
        assert tax == tax_reference(amount, self.rate), f"booked {tax} for {amount}"
        super().book(amount, tax)


@given(st.lists(st.integers(0, 10**7), max_size=8))
def test_register_books_right_taxes(amounts):
    register = AuditedRegister(RATE)
    for amount in amounts:
        register.add(amount)
    assert register.count == len(amounts)


AMOUNTS = (0, 1, 99, 12_345, 999_999, 10**7)
TAXES = {amount: tax_reference(amount, RATE) for amount in AMOUNTS}


class GuardedTill(Till):
    """Rings up only amounts of the test's table (a test's guard on its own inputs)."""

    def ring(self, amount):
        assert amount in TAXES, f"{amount} is not in the table"
        super().ring(amount)


def test_till_table():
    till = GuardedTill(RATE)
    for amount in AMOUNTS:
        till.ring(amount)
    assert till.taxes() == [TAXES[amount] for amount in AMOUNTS]
