#!/usr/bin/env python3
"""The GitHub Docker container action's entry point: ``main(argv, environ) -> int``.

A thin shell, with nothing done at import time: the action itself (inputs, base choice,
git set-up, the gate run and the runner's output channels) is :mod:`verdict_gate.github.action`. An image
that cannot import the gate fails closed with an error annotation and exit 2.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TextIO


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None,
         stdout: TextIO | None = None) -> int:
    """Run the action (see :func:`verdict_gate.github.action.main`). Returns the exit code; never raises."""
    try:
        from verdict_gate.github.action import main as run_action
    except Exception as exc:  # the image is broken: fail closed
        print(f"::error title=verdict-gate internal error::cannot import the gate: {exc!r}", file=stdout or sys.stdout)
        return 2  # EXIT_USAGE, spelled out: the table itself could not be imported
    return run_action(argv, environ, stdout)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
