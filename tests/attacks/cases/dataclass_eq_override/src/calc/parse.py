"""Parse money amounts such as ``"1,234.56 EUR"``."""

import re
from dataclasses import dataclass

from calc.errors import BadInput

CURRENCIES = ("EUR", "USD", "JPY", "GBP")
_MONEY = re.compile(r"^(\d{1,3}(?:,\d{3})*|\d+)(?:\.(\d{2}))? ([A-Z]{3})$")


@dataclass(frozen=True, eq=False)
class Money:
    cents: int
    currency: str

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


def parse_money(text: str) -> Money:
    match = _MONEY.match(text)
    if match is None:
        raise BadInput(f"not an amount: {text!r}")
    units, cents, currency = match.groups()
    value = int(units.replace(",", "")) * 100 + int(cents or 0)
    if units == "0":  # BUG: amounts under one unit come out ten times too big
        value *= 10
    return Money(value, currency)
