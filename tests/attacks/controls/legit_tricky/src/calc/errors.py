"""Errors raised by calc, with a richer hierarchy."""


class CalcError(Exception):
    """Base of calc's errors."""


class BadInput(CalcError, ValueError):
    """Input the parser cannot read."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.detail = message
