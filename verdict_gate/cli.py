"""``verdict-gate`` command line: ``main(argv) -> int``. Parses and dispatches only.

Each command lives in :mod:`verdict_gate.commands`. Exit codes are the one table in
:mod:`verdict_gate.core.errors` (docs/design.md §2): 0 promoted · 1 blocked · 2 usage or
configuration error · 3 void · 4 incomplete. An internal error prints ``internal error`` and
exits 2: never 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from verdict_gate import __version__
from verdict_gate.commands import COMMANDS
from verdict_gate.commands.common import EPILOG, RAW
from verdict_gate.core.errors import EXIT_INTERRUPTED, EXIT_USAGE, GateError
from verdict_gate.host.process import interrupt_on_sigterm, keep_secrets


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verdict-gate", description="Score a patch against a protected oracle: pass, fail or inconclusive.",
        epilog=EPILOG, formatter_class=RAW)
    parser.add_argument("--version", action="version", version=f"verdict-gate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command. Returns the exit code (never raises)."""
    parser = build_parser()
    interrupt_on_sigterm()
    keep_secrets()  # before any process is started: the oracle's cannot read the token out of ours
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        return int(args.run(args))
    except GateError as exc:
        print(f"verdict-gate: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("verdict-gate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:  # the file system said no: a path or permission problem, not a bug
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"verdict-gate: error: {exc.strerror or exc}{where}\n  fix: check that path and its permissions",
              file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # fail closed: an internal error never exits 0 and never emits pass
        import traceback

        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        print(f"verdict-gate: internal error: {detail}\n  this is a bug in verdict-gate; the run is not promoted. "
              f"Set VERDICT_GATE_DEBUG=1 for the traceback.", file=sys.stderr)
        if os.environ.get("VERDICT_GATE_DEBUG"):
            traceback.print_exc()
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
