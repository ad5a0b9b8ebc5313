"""Errors that reach the user, and the exit-code table (docs/design.md, "Pipeline"). Pure.

Each error names what was read, where, what is wrong and the fix. :data:`EXIT_CODES` is the one
table from a run's outcome to the process exit code; every command and the action use it.
"""

from __future__ import annotations

from dataclasses import dataclass

EXIT_PROMOTED = 0
EXIT_BLOCKED = 1
EXIT_USAGE = 2
EXIT_VOID = 3
EXIT_INCOMPLETE = 4
EXIT_INTERRUPTED = 130  # SIGINT/SIGTERM: the shell's 128 + SIGINT

# outcome → exit code: 0 promoted · 1 blocked · 2 usage or configuration error · 3 void · 4 incomplete
EXIT_CODES = {"promoted": EXIT_PROMOTED, "blocked": EXIT_BLOCKED, "void": EXIT_VOID, "incomplete": EXIT_INCOMPLETE}


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
