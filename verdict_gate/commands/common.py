"""What several commands share: the progress printer, the help texts, the pack source options and the
options of a command that decides."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verdict_gate.pack import PackOptions

EPILOG = """\
exit codes: 0 promoted, 1 blocked, 2 usage or configuration error, 3 void, 4 incomplete.
verdicts: pass, fail, inconclusive. A freeze can make a failure inconclusive, never pass.
docs: README.md and docs/design.md in the verdict-gate repository."""

RAW = argparse.RawDescriptionHelpFormatter


def progress(message: str) -> None:
    """One progress line on stderr (stdout carries the results)."""
    from verdict_gate.report.publish import printer

    printer(sys.stderr)(message)


def add_pack_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pack-sha256", metavar="HEX", default=None,
                        help="sha256 the pack's bytes must have: required for https:// (or #sha256=HEX in the URL), "
                             "optional for an archive or an artifact's zip")
    parser.add_argument("--pack-workflow", metavar="FILE", default=None,
                        help="artifact:NAME only: the workflow file that uploads the pack (e.g. oracle-pack.yml)")
    parser.add_argument("--pack-branch", metavar="BRANCH", default=None,
                        help="artifact:NAME only: branch of the successful run (default: the repository's default)")
    parser.add_argument("--pack-repository", metavar="OWNER/NAME", default=None,
                        help="artifact:NAME only: repository of the run (default: $GITHUB_REPOSITORY); the token "
                             "is read from $GITHUB_TOKEN, the API from $GITHUB_API_URL")


def pack_options(args: argparse.Namespace) -> PackOptions:
    """The pack source options of ``run``/``replay`` (the token is never an option: GITHUB_TOKEN only)."""
    from verdict_gate.pack import PackOptions

    return PackOptions(sha256=args.pack_sha256 or None, workflow=args.pack_workflow or None,
                       branch=args.pack_branch or None, repository=args.pack_repository or None)


def add_decision_options(cmd: argparse.ArgumentParser) -> None:
    """``--out``, ``--policy``, ``--today``, ``--sarif-category``: the options of a command that decides
    (``run``, ``merge``)."""
    cmd.add_argument("--out", required=True, help="directory for the evidence files (created)")
    cmd.add_argument("--policy", choices=["lenient", "strict"], default=None,
                     help="promotion policy (default: the catalog's, else lenient)")
    cmd.add_argument("--today", metavar="YYYY-MM-DD", default=None,
                     help="date freezes expire against (default: today, UTC)")
    cmd.add_argument("--sarif-category", default="verdict-gate",
                     help="SARIF runAutomationDetails id (default: verdict-gate)")


def write_decision(ev: Any, args: argparse.Namespace) -> int:
    """Publish a finished run into ``--out`` (:func:`verdict_gate.report.publish.publish`) and return its
    exit code: the outcome's, or for a shard 0 once written (the merge decides) and the void code when void."""
    from pathlib import Path

    from verdict_gate.core.errors import EXIT_CODES
    from verdict_gate.report.publish import publish

    publish(ev, Path(args.out), stdout=sys.stdout, log=sys.stderr, sarif_category=args.sarif_category,
            format=getattr(args, "format", "text"))
    if ev.shard is not None:
        return EXIT_CODES["void"] if ev.outcome == "void" else 0
    assert ev.outcome is not None
    return EXIT_CODES[ev.outcome]
