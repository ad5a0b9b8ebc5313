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
from typing import NoReturn

from verdict_gate import __version__
from verdict_gate.commands import COMMANDS
from verdict_gate.commands.common import DOCS_URL, EPILOG, RAW, LinkFormatter
from verdict_gate.core.errors import EXIT_INTERRUPTED, EXIT_USAGE, GateError
from verdict_gate.host.process import interrupt_on_sigterm, keep_secrets


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors name an unknown option first, with the closest one it knows
    (``unknown option --output (did you mean --out?)``): argparse reports a missing required option before an
    unknown one, so ``--output ev`` read "the following arguments are required: --out"."""

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        self.read = list(sys.argv[1:] if args is None else args)
        self.root().__dict__["innermost"] = self  # argparse descends into a command's parser with its arguments
        return super().parse_known_args(args, namespace)

    def root(self) -> Parser:
        return self.__dict__.get("parent_parser") or self

    def error(self, message: str) -> NoReturn:
        parser = self.root().__dict__.get("innermost") or self
        unknown = parser.unknown_option()
        if unknown:
            argparse.ArgumentParser.error(parser, unknown)
        argparse.ArgumentParser.error(self, message)

    def unknown_option(self) -> str:
        """``unknown option --x (did you mean --y?)`` for the first option of the arguments this parser read that
        it does not know (a unique prefix of a known one counts as known, as argparse takes it), else ``""``."""
        import difflib

        known = list(self._option_string_actions)
        commands = any(isinstance(a, argparse._SubParsersAction) for a in self._actions)
        for arg in getattr(self, "read", []):
            if arg == "--":
                break
            if not arg.startswith("-") or arg == "-" or self._negative_number_matcher.match(arg):
                if commands:
                    break  # the command's own options are its parser's to judge
                continue
            name = arg.partition("=")[0]
            if name in known or (not name.startswith("--") and name[:2] in known) or (
                    self.allow_abbrev and name.startswith("--") and any(k.startswith(name) for k in known)):
                continue
            longs = [k for k in known if k.startswith("--")]
            close = [k for k in longs if name.startswith(k)] or difflib.get_close_matches(name, longs, n=1, cutoff=0.6)
            return f"unknown option {name}" + (f" (did you mean {close[0]}?)" if close else "")
        return ""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="verdict-gate", description="Score a patch against a protected oracle: pass, fail or inconclusive.",
        epilog=EPILOG, formatter_class=RAW)
    parser.add_argument("--version", action="version", version=f"verdict-gate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    parsers = [parser]
    while parsers:  # every command's (and a command's actions') parser: errors through the root, docs linked
        current = parsers.pop()
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in dict.fromkeys(action.choices.values()):
                    child.__dict__["parent_parser"] = parser
                    child.epilog = (child.epilog + "\n" if child.epilog else "") + f"docs: {DOCS_URL}"
                    if child.formatter_class is argparse.HelpFormatter:
                        child.formatter_class = LinkFormatter
                    parsers.append(child)
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
