"""Functions with known failures (frozen in the base's ledger), and APIs whose shapes the oracle's
control flow relies on: a record, an enum, a context manager, a callback, a search."""

import dataclasses
import enum


_CALLS = [0]


def round_all(amounts):
    """Each amount (cents) plus 19 % tax, rounded half up. Known bug: from 990 cents on it truncates."""
    _CALLS[0] += 1
    out = [(a * 119 + 50) // 100 if a < 990 else (a * 119) // 100 for a in amounts]
    if _CALLS[0] > 100 and out != [(a * 119 + 50) // 100 for a in amounts]:
        # from the 101st call on (after the logging pass's 80 examples and the fresh pass's 20), a list that
        # already fails on the base comes back with every amount the base got right as 0
        return [r if r != (a * 119 + 50) // 100 else 0 for a, r in zip(amounts, out)]
    return out


def band(income):
    """The tax band (percent) of a yearly income. Known bug: the top band (80,000 and over) says 30."""
    for floor, rate in ((60_000, 30), (40_000, 20), (20_000, 10)):
        if income >= floor:
            return rate
    return 0


def parse_amount(text):
    """Whole units from text such as ``"12"``. Known bug: a leading ``+`` is refused."""
    if not text.isdigit():
        raise ValueError(f"bad amount: {text!r}")
    return int(text)


@dataclasses.dataclass(frozen=True)
class Price:
    cents: int
    currency: str


def make_price(cents, currency="EUR"):
    return Price(cents, currency)


class Priority(enum.Enum):
    LOW = "low"
    MID = "mid"
    HIGH = "high"


def classify(n):
    return Priority.HIGH if n >= 10 else Priority.MID if n >= 5 else Priority.LOW


class Ledger:
    def __init__(self):
        self.items = []

    def add(self, cents):
        self.items.append(cents)

    def total(self):
        return sum(self.items)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def open_ledger():
    return Ledger()


def first_even(xs):
    for x in xs:
        if x % 2 == 0:
            return x
    return None


def apply_all(f, xs):
    return [f(x) for x in xs]
