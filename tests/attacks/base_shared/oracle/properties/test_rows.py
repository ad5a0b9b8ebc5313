"""Rows of text: whole units checked against Python's own int() (which cannot read a thousands separator: the
pack's known failure, frozen in the ledger), and lines after a header the candidate takes off an iterator."""

from calc.rows import line_cents, skip_header, units

ROWS = ["12", "7", "250", "1,000"]


def test_units_rows():
    for text in ROWS:
        assert units(text) == int(text)


LINES = ("amount currency", "12.34 EUR", "0.05 USD", "100 JPY", "7.10 GBP", "0.99 CHF")


def test_lines_after_the_header():
    lines = iter(LINES)
    assert skip_header(lines) == "amount currency"
    for line in lines:
        units_text, _, cents_text = line.split(" ")[0].partition(".")
        assert line_cents(line) == int(units_text) * 100 + int(cents_text or 0), line
