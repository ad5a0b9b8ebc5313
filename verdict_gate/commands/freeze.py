"""``verdict-gate freeze``: append a reviewed freeze to a ledger, from base replays (run now, or in a file)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from verdict_gate.commands.common import (
    RAW,
    add_replay_source,
    check_replay_flags,
    pack_options,
    print_commit,
    progress,
)

EXIT_HELP = "exit codes: 0 freeze added, 2 usage error (nothing written), 3 the pack cannot be trusted (--rev)."

DESCRIPTION = """\
Append a ledger record for --id from base replays that reproduced its failure. The reason is yours
to write; it is required.

The evidence is either replayed now, or read from a file:
  --rev REV --pack SOURCE [--repo .] [--replays N]
      replay the property N times (default 5) on a detached worktree of REV, then record it;
  --base-sig FILE [--replays N]
      every try of the property in FILE (written by `verdict-gate replay [--replays N]`, or a gate's
      evidence); with --replays, FILE must hold at least N tries.

With --rev, the property first runs once under the gate and once with no isolation boundary (as
`verdict-gate check` runs it: REV's code then runs as plain pytest runs it, so freeze revisions you
would run pytest on); a test that ends differently is refused, because its failure would be the
boundary's, not the project's (with --kind flaky, unless the replays differ among themselves too: the
flake explains it). --base-sig runs nothing: run `verdict-gate check --rev REV` first.

The replays stop as soon as the answer is known: at a replay that cannot be frozen, at the first that
differs under --kind deterministic, and after the first when it passes (a passing property needs no
freeze; a flake you know of is frozen with --kind flaky, which runs every replay).

The replays decide the kind: a failure set that showed on every replay is a deterministic freeze;
replays that differ (some passed, or failed differently) make a flaky freeze, recording the union of
the failures seen and the rate (failed k of n replays). --kind deterministic refuses replays that
differ; --kind flaky records a flaky freeze even when every replay failed alike. A failure that never
reached the property's body (an import or collection error, a missing pytest fixture, zero hits) is
refused. The ledger and its entry in the pack's manifest.sha256 are written; commit both through the
oracle's review path."""


def add_parser(sub: Any) -> None:
    frz = sub.add_parser("freeze", epilog=EXIT_HELP, formatter_class=RAW,
                         help="add a reviewed freeze to a ledger from base replays",
                         description=DESCRIPTION)
    add_replay_source(frz, "replay the property on this revision now (needs --pack)",
                      "with --rev: replays to run (default 5); with --base-sig: tries FILE must hold at least")
    frz.add_argument("--kind", choices=["deterministic", "flaky"], default=None,
                     help="default: decided by the replays; deterministic refuses replays that differ")
    frz.add_argument("--id", required=True, help="property id to freeze")
    frz.add_argument("--reason", required=True, help="why this failure is known and forgiven (human-written)")
    frz.add_argument("--ledger", required=True, metavar="FILE", help="freeze_ledger.json to append to (created)")
    frz.add_argument("--first-seen", metavar="YYYY-MM-DD", help="default: today")
    frz.add_argument("--expires-on", metavar="YYYY-MM-DD", help="optional expiry date")
    frz.set_defaults(run=run)


def boundary_differences(args: argparse.Namespace) -> str:
    """Before the replays: run the property on ``--rev`` under the gate and with no boundary (as
    ``verdict-gate check`` does), so that a failure the boundary makes, even one that raises nothing, is
    never recorded as the project's. Returns the differences, shown (``""``: none). What a freeze of the
    property's tests could not see (``check``'s warnings) is printed now, before anything is recorded.

    Raises:
        GateError: a test node ends differently with no boundary and ``--kind flaky`` was not given (nothing is
            written); with it, the replays decide (:func:`refuse_boundary_differences`).
    """
    from verdict_gate.commands.check import check

    report = check(Path(args.repo), args.pack, args.rev, pack_options(args), only=[args.id])
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    differing = [d for c in report.properties for d in c.boundary]
    if not differing:
        return ""
    shown = "; ".join(f"{node}: {gate} under the gate, {plain} with no boundary" for node, gate, plain in differing[:5])
    shown += f" (and {len(differing) - 5} more)" if len(differing) > 5 else ""
    if args.kind != "flaky":
        refuse_boundary_differences(args, shown, " If the property is flaky, its two runs may differ by chance: "
                                                 "freeze it with --kind flaky, and the replays tell the two apart.")
    return shown


def refuse_boundary_differences(args: argparse.Namespace, shown: str, more: str = "") -> None:
    """Raises the GateError for a test that ends differently with no isolation boundary (``shown``)."""
    from verdict_gate.commands.check import BOUNDARY_FIX
    from verdict_gate.core.errors import GateError

    raise GateError("--id", args.id, f"ends differently with no isolation boundary on {args.rev} ({shown}): "
                    "a freeze would record a failure the boundary makes as the project's",
                    BOUNDARY_FIX + ("." if more else "") + more)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.core.errors import EXIT_PROMOTED
    from verdict_gate.run.freeze import DEFAULT_REPLAYS, check_flags, record, tries_by_replay, tries_from_file

    ledger_path = Path(args.ledger)
    check_replay_flags(args)
    check_flags(args.reason, args.first_seen, args.expires_on)  # before a replay: a bad flag fails now
    if args.rev is not None:
        differing = boundary_differences(args)
        replays = args.replays or DEFAULT_REPLAYS
        tries = tries_by_replay(Path(args.repo), args.rev, args.pack, args.id, replays, options=pack_options(args),
                                progress=progress, notice=lambda n: print(f"note: {n}", file=sys.stderr),
                                kind=args.kind)
        if differing:
            # --kind flaky: a difference the flake explains (the replays differ among themselves too) is no
            # evidence against the boundary; replays all alike leave it the boundary's.
            outcomes = {frozenset(f["signature"] for f in (t.get("failures") or [])) for t in tries}
            if len(outcomes) < 2:
                refuse_boundary_differences(args, differing)
            print(f"note: the run with no boundary ended differently ({differing}); the {len(tries)} replays "
                  "differ among themselves too, so the flake explains it", file=sys.stderr)
    else:
        tries = tries_from_file(Path(args.base_sig), args.id, args.replays)
    frozen = record(tries, ledger_path, reason=args.reason, first_seen=args.first_seen, expires_on=args.expires_on,
                    kind=args.kind)
    seen = frozen.seen
    for n, t in enumerate(tries, 1):
        failures = len(t.get("failures") or ([t] if t["signature"] else []))
        print(f"  replay {t.get('try', n)}: {t['status']}" + (f" ({failures} failure(s))" if failures else ""))
    label = f"{seen.kind}, failed {seen.failed} of {seen.replays} replay{'s' if seen.replays != 1 else ''}"
    print(f"added a {seen.kind} freeze of {args.id} to {ledger_path}: failed {seen.failed} of {seen.replays} "
          f"replay{'s' if seen.replays != 1 else ''}, {len(seen.failures)} failure(s) ({seen.signature[:19]}…)")
    for warning in frozen.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print_commit(frozen.written, f"freeze {args.id} ({label})")
    return EXIT_PROMOTED  # 0: added

