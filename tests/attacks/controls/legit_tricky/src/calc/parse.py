"""Parse money amounts: a validating dataclass and the custom exception, chained."""

import re
from dataclasses import dataclass, field

from calc.errors import BadInput

CURRENCIES = ("EUR", "USD", "JPY", "GBP")
_MONEY = re.compile(r"^(\d{1,3}(?:,\d{3})*|\d+)(?:\.(\d{2}))? ([A-Z]{3})$")


@dataclass(frozen=True, order=True)
class Money:
    cents: int
    currency: str
    note: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.cents < 0:
            raise BadInput("negative amount")

    def __str__(self) -> str:
        return f"{self.cents // 100}.{self.cents % 100:02d} {self.currency}"


def parse_money(text: str) -> Money:
    try:
        units, cents, currency = _MONEY.match(text).groups()  # type: ignore[union-attr]
    except AttributeError as exc:
        raise BadInput(f"not an amount: {text!r}") from exc
    return Money(int(units.replace(",", "")) * 100 + int(cents or 0), currency, note=text)
