"""Tax in integer cents; rates in basis points, read from fixtures/tax_rates.json."""

import json
from pathlib import Path

RATES = Path(__file__).resolve().parents[2] / "fixtures" / "tax_rates.json"


def region_rate_bp(region: str) -> int:
    """The region's tax rate in basis points (1 bp = 0.01 %)."""
    return json.loads(RATES.read_text(encoding="utf-8"))[region]


def tax_cents(amount_cents: int, rate_bp: int) -> int:
    """Tax on ``amount_cents`` at ``rate_bp``, rounded to a whole cent.

    Known bug (frozen in the ledger): Python's round() rounds half to even, the tax
    authority rounds half up.
    """
    return round(amount_cents * rate_bp / 10_000)
