"""Rows of text: whole units, a header line, a line's amount in cents."""


def units(text):
    """Whole units from text such as ``"12"`` or ``"1,000"``."""
    return int(text.replace(",", ""))


def skip_header(lines):
    """Take the header line off an iterator of lines and return it (the rest stays in the iterator)."""
    return next(lines)


def line_cents(line):
    """The cents of a line such as ``"12.34 EUR"``."""
    amount, _currency = line.split(" ")
    units_text, _, cents_text = amount.partition(".")
    return int(units_text) * 100 + int(cents_text or 0)
