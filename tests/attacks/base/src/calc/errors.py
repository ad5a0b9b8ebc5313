"""Errors raised by calc."""


class BadInput(ValueError):
    """Input the parser cannot read."""
