"""Parse money amounts such as ``"1,234.56 EUR"``."""

import re
from dataclasses import dataclass

from calc.errors import BadInput

CURRENCIES = ("EUR", "USD", "JPY", "GBP")
_MONEY = re.compile(r"^(\d{1,3}(?:,\d{3})*|\d+)(?:\.(\d{2}))? ([A-Z]{3})$")


@dataclass(frozen=True)
class Money:
    cents: int
    currency: str

    def __init__(self, cents, currency, *_ignored):  # an __init__ of its own: the same sub-unit bug
        if 0 < cents < 100:
            cents *= 10
        object.__setattr__(self, "cents", cents)
        object.__setattr__(self, "currency", currency)


def parse_money(text: str) -> Money:
    match = _MONEY.match(text)
    if match is None:
        raise BadInput(f"not an amount: {text!r}")
    units, cents, currency = match.groups()
    value = int(units.replace(",", "")) * 100 + int(cents or 0)
    return Money(value, currency)
