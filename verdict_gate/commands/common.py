"""What several commands share: the progress printer, the help texts, the pack source options and the
options of a command that decides."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verdict_gate.pack import PackOptions

DOCS_URL = "https://github.com/verdict-gate/verdict-gate/blob/main/README.md"  # pyproject's Documentation URL
RULES_URL = "https://github.com/verdict-gate/verdict-gate/blob/main/docs/rules.md"

EPILOG = f"""\
exit codes: 0 promoted, 1 blocked, 2 usage or configuration error, 3 void, 4 incomplete.
verdicts: pass, fail, inconclusive. A freeze can make a failure inconclusive, never pass.
docs: {DOCS_URL}
every verdict's reason and its fix: {RULES_URL}"""

RAW = argparse.RawDescriptionHelpFormatter


class LinkFormatter(argparse.HelpFormatter):
    """argparse's formatter, with the epilog's last line (``docs: URL``) kept whole: the default one wraps a URL
    at its hyphens."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        body, sep, link = text.rpartition("\ndocs: ")
        if not sep:
            return super()._fill_text(text, width, indent)
        return super()._fill_text(body, width, indent) + f"\n{indent}docs: {link}"


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


def add_replay_source(cmd: argparse.ArgumentParser, rev_help: str, replays_help: str) -> None:
    """``--base-sig FILE`` or ``--rev REV --pack SOURCE [--repo .] [--replays N]`` (and the pack options): where a
    command that judges base replays (``freeze``, ``ledger prune``) gets them."""
    source = cmd.add_mutually_exclusive_group(required=True)
    source.add_argument("--base-sig", metavar="FILE",
                        help="base.sig.json of replays already made (`verdict-gate replay`)")
    source.add_argument("--rev", metavar="REV", help=rev_help)
    cmd.add_argument("--pack", metavar="SOURCE", help="with --rev: the oracle pack, as for run")
    cmd.add_argument("--repo", default=".", help="git repository (default: .)")
    add_pack_options(cmd)
    cmd.add_argument("--replays", type=int, metavar="N", default=None, help=replays_help)


def check_replay_flags(args: argparse.Namespace) -> None:
    """The flags of a command that takes its evidence from a replay made now (``--rev``, ``--pack``,
    ``--replays``) or from a file (``--base-sig``): ``freeze`` and ``ledger prune``.

    Raises:
        GateError: ``--rev`` without ``--pack``, ``--pack`` without ``--rev``, ``--replays`` out of 1..100.
    """
    from verdict_gate.core.errors import GateError

    if args.replays is not None and not 1 <= args.replays <= 100:
        raise GateError("--replays", str(args.replays), "is not between 1 and 100", "e.g. --replays 5")
    if args.rev is not None and not args.pack:
        raise GateError("--pack", "(missing)", "is needed with --rev: the oracle pack to replay",
                        "e.g. --pack git:origin/main:oracle")
    if args.rev is None and args.pack:
        raise GateError("--pack", args.pack, "is only read with --rev (--base-sig holds replays already made)",
                        "drop --pack, or replay now with --rev REV --pack SOURCE")


def print_commit(written: Any, message: str) -> None:
    """What to commit after a ledger change (:class:`verdict_gate.pack.build.LedgerWrite`): the files written,
    a warning when the manifest could not record it alone, and one ``git add`` and ``git commit`` to run."""
    import shlex

    files = [str(written.ledger)] + ([str(written.manifest)] if written.manifest else [])
    print(f"wrote {' and '.join(files)}")
    if written.manifest is None:
        print(f"warning: no manifest.sha256 beside {written.ledger}: after review run "
              f"`verdict-gate manifest write {written.ledger.parent}`", file=sys.stderr)
    elif written.others:
        print(f"warning: {written.manifest} records only the ledger's change; the pack has other differences, "
              "left for review:\n" + "\n".join(written.others), file=sys.stderr)
    print("next: review the change, then commit it through the oracle's review path:")
    print(f"  git add -- {' '.join(shlex.quote(f) for f in files)}")
    print(f"  git commit -m {shlex.quote(message)}")
