"""Table-driven examples read from the pack's fixtures."""

import json

import yaml
from calc.ops import tax_cents
from calc.parse import parse_money


def test_tax_table(oracle_fixtures):
    for case in json.loads((oracle_fixtures / "tax_table.json").read_text()):
        expected = case["expected"]
        assert tax_cents(case["amount"], case["rate"]) == expected, case


def test_money_table(oracle_fixtures):
    for row in yaml.safe_load((oracle_fixtures / "money.yaml").read_text()):
        assert parse_money(row["text"]).cents == row["cents"], row
