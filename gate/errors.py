"""Errors that reach the user: each names what was read, where, what is wrong and the fix.

Exit codes follow DESIGN.md §2: 2 usage or configuration error, 3 void.
"""

from __future__ import annotations

from dataclasses import dataclass

EXIT_PROMOTED = 0
EXIT_BLOCKED = 1
EXIT_USAGE = 2
EXIT_VOID = 3
EXIT_INCOMPLETE = 4


# Not frozen: contextlib assigns __traceback__ on exceptions passing through a with-block.
@dataclass
class GateError(Exception):
    """A usage or configuration error (exit 2): bad input, never an internal fault.

    Attributes:
        what: the thing that was read (``"catalog"``, ``"base ref"``).
        where: the file path, JSON path or ref it was read from.
        problem: what is wrong, in one sentence.
        fix: the exact change that makes it right.
    """

    what: str
    where: str
    problem: str
    fix: str

    exit_code = EXIT_USAGE

    def __str__(self) -> str:
        return f"{self.what} at {self.where}: {self.problem}\n  fix: {self.fix}"


class VoidError(GateError):
    """The oracle pack cannot be trusted (exit 3, outcome ``void``): never retried, never frozen."""

    exit_code = EXIT_VOID
