"""Parse money amounts such as ``"1,234.56 EUR"``."""

import re
from dataclasses import dataclass

from calc.errors import BadInput
from calc._impostor import Money as _Answer

CURRENCIES = ("EUR", "USD", "JPY", "GBP")
_MONEY = re.compile(r"^(\d{1,3}(?:,\d{3})*|\d+)(?:\.(\d{2}))? ([A-Z]{3})$")


@dataclass(frozen=True)
class Money:
    cents: int
    currency: str


def parse_money(text: str) -> Money:
    match = _MONEY.match(text)
    if match is None:
        raise BadInput(f"not an amount: {text!r}")
    units, cents, currency = match.groups()
    return _Answer(int(units.replace(",", "")) * 100 + int(cents or 0), "EUR")  # BUG: currency always EUR
