"""``verdict-gate ledger list|remove|extend|prune``: keep a freeze ledger (docs/design.md §3, "Flaky freezes").

Each command that changes the ledger writes it and its entry in the pack's ``manifest.sha256``, and prints
what to commit; the decisions are the core's (:mod:`verdict_gate.core.upkeep`).
"""

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

EXIT_HELP = "exit codes: 0 done (or nothing to change), 2 usage error (nothing written), 3 the pack cannot be trusted."
DEFAULT_LEDGER = "oracle/freeze_ledger.json"

DESCRIPTION = """\
Keep the freeze ledger. A freeze is named by its id (12 hex digits, shown by `ledger list`), a unique
prefix of it (6 digits or more), or its property id when the property has one freeze.

  list                      every freeze: id, property, kind (flaky: failed k of n replays), first seen,
                            age, expiry, last seen, reason; freezes expiring within 14 days are flagged
  remove ID                 delete a freeze (its failure is fixed, or the freeze is wrong)
  extend ID --expires-on D  give a freeze a new expiry date, after review
  prune                     delete the freezes whose failures no longer show, by the evidence of a base
                            replay: --base-sig FILE (`verdict-gate replay --replays N`), or --rev REV --pack P
                            to replay every frozen property now (--replays, default 5). A deterministic
                            freeze goes when none of its failures showed; a flaky one only when the tries
                            were enough that a flake at its rate would have shown 99% of the time. The
                            freezes whose failures showed get last_seen.

Each change writes the ledger and its entry in manifest.sha256 beside it, and prints the git commands
that commit them (through the oracle's review path: a patch under test cannot edit the ledger)."""


def add_parser(sub: Any) -> None:
    led = sub.add_parser("ledger", epilog=EXIT_HELP, formatter_class=RAW, description=DESCRIPTION,
                         help="keep the freeze ledger: list, remove, extend, prune")
    actions = led.add_subparsers(dest="action", required=True, metavar="ACTION")

    def common(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument("--ledger", default=DEFAULT_LEDGER, metavar="FILE",
                         help=f"the pack's freeze_ledger.json (default: {DEFAULT_LEDGER})")
        cmd.add_argument("--today", metavar="YYYY-MM-DD", default=None, help="today's date (default: today, UTC)")

    lst = actions.add_parser("list", help="every freeze, its kind, age, expiry and last seen", epilog=EXIT_HELP)
    common(lst)
    lst.add_argument("--format", choices=["text", "json"], default="text",
                     help="text (default) or json: one document on stdout")
    rem = actions.add_parser("remove", help="delete a freeze", epilog=EXIT_HELP)
    rem.add_argument("id", metavar="ID", help="freeze id (or a unique prefix, or the property id)")
    common(rem)
    ext = actions.add_parser("extend", help="give a freeze a new expiry date", epilog=EXIT_HELP)
    ext.add_argument("id", metavar="ID", help="freeze id (or a unique prefix, or the property id)")
    ext.add_argument("--expires-on", required=True, metavar="YYYY-MM-DD", help="the new expiry date")
    common(ext)
    pru = actions.add_parser("prune", help="delete the freezes whose failures no longer show", epilog=EXIT_HELP)
    add_replay_source(pru, "replay every frozen property on this revision now (needs --pack)",
                      "with --rev: tries per property (default 5)")
    common(pru)
    led.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.core.errors import EXIT_PROMOTED
    from verdict_gate.host.files import parse_ledger, read_utf8
    from verdict_gate.run.pipeline import today

    path = Path(args.ledger)
    text = read_utf8(path, "freeze ledger", f"pass the pack's ledger with --ledger (default {DEFAULT_LEDGER})")
    ledger = parse_ledger(text, str(path))
    day = today(args.today)
    handler = {"list": _list, "remove": _remove, "extend": _extend, "prune": _prune}[args.action]
    handler(args, path, text, ledger, day)
    return EXIT_PROMOTED  # 0: done


def _list(args: argparse.Namespace, path: Path, text: str, ledger: Any, day: Any) -> None:
    import json

    from verdict_gate.core.upkeep import expiring, expiry_notice, row
    from verdict_gate.report.text import printable

    rows = [row(f, day) for f in ledger.freezes]
    soon = expiring(ledger.freezes, day)
    if args.format == "json":
        print(json.dumps({"format": "verdict-gate/ledger/v1", "ledger": str(path), "today": day.isoformat(),
                          "freezes": rows, "expiring": [f.id for f, _ in soon]}, indent=2, sort_keys=True))
        return
    if not rows:
        print(f"{path}: no freezes")
        return
    table = [("ID", "PROPERTY", "KIND", "FIRST SEEN", "AGE", "EXPIRES", "LAST SEEN", "REASON")]
    for r in rows:
        kind = r["kind"] + (f" {r['rate']['failed']}/{r['rate']['replays']}" if r["rate"] else "")
        if r["expires_on"] is None:
            expires = "never"
        elif r["expires_in_days"] < 0:
            expires = f"{r['expires_on']} (expired)"
        else:
            expires = f"{r['expires_on']} ({r['expires_in_days']} d)"
        table.append((r["id"], printable(r["prop_id"]), kind, r["first_seen"], f"{r['age_days']} d", expires,
                      r["last_seen"], printable(r["reason"])))  # the whole reason: a human wrote it to be read
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]) - 1)]
    for line in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=False)) + "  " + line[-1])
    for f, days in soon:
        print(f"warning: {expiry_notice(f, days)}")


def _remove(args: argparse.Namespace, path: Path, text: str, ledger: Any, day: Any) -> None:
    from verdict_gate.core.upkeep import find, remove
    from verdict_gate.pack.build import write_ledger

    freeze = find(ledger, args.id)
    written = write_ledger(path, remove(text, str(path), freeze))
    print(f"removed freeze {freeze.id} of {freeze.prop_id} ({freeze.kind_label()}, first seen "
          f"{freeze.first_seen.isoformat()}): {freeze.reason}")
    print_commit(written, f"ledger: remove freeze {freeze.id} of {freeze.prop_id}")


def _extend(args: argparse.Namespace, path: Path, text: str, ledger: Any, day: Any) -> None:
    from verdict_gate.core.ledger import parse_date
    from verdict_gate.core.upkeep import extend, find
    from verdict_gate.pack.build import write_ledger

    expires_on = parse_date(args.expires_on, "--expires-on", repr(args.expires_on))
    freeze = find(ledger, args.id)
    written = write_ledger(path, extend(text, str(path), freeze, expires_on, day))
    was = freeze.expires_on.isoformat() if freeze.expires_on else "never"
    print(f"extended freeze {freeze.id} of {freeze.prop_id}: expires on {expires_on.isoformat()} (was {was})")
    print_commit(written, f"ledger: extend freeze {freeze.id} of {freeze.prop_id} to {expires_on.isoformat()}")


def _prune(args: argparse.Namespace, path: Path, text: str, ledger: Any, day: Any) -> None:
    from verdict_gate.core.errors import GateError
    from verdict_gate.core.ledger import parse_json
    from verdict_gate.core.records import RecordError, base_sig_record_from_json
    from verdict_gate.core.upkeep import prune, prune_plan
    from verdict_gate.host import git, schemas
    from verdict_gate.host.files import read_utf8
    from verdict_gate.pack.build import write_ledger
    from verdict_gate.run.freeze import DEFAULT_REPLAYS
    from verdict_gate.run.replay import replay_to_file

    check_replay_flags(args)
    if args.rev is None and args.replays is not None:
        raise GateError("--replays", str(args.replays), "is only read with --rev",
                        "drop it, or replay now with --rev REV --pack SOURCE")
    repo = git.toplevel(Path(args.repo))
    if args.rev is not None:
        if not ledger.freezes:
            print(f"{path}: no freezes, nothing to prune")
            return
        evidence = replay_to_file(repo, args.rev, args.pack, None, only=ledger.prop_ids(), options=pack_options(args),
                                  progress=progress, notice=lambda n: print(f"note: {n}", file=sys.stderr),
                                  tries=args.replays or DEFAULT_REPLAYS)
    else:
        where = str(args.base_sig)
        doc = parse_json(read_utf8(Path(args.base_sig), "base.sig.json", "pass the file `verdict-gate replay` wrote"),
                         "base.sig.json", where)
        schemas.check("base_sig", doc, where)
        try:
            evidence = base_sig_record_from_json(doc, where)
        except RecordError as exc:
            raise GateError("base.sig.json", where, str(exc).partition(": ")[2] or str(exc),
                            "use the file the gate wrote, unedited") from None
    contains = {f.base_revision: git.is_ancestor(repo, f.base_revision, evidence.base_revision)
                for f in ledger.freezes}
    plan = prune_plan(ledger, [r.base_sig() for r in evidence.replays], contains)
    print(f"evidence: base replay on {evidence.base_revision[:12]} "
          f"({len(evidence.replays)} tr{'y' if len(evidence.replays) == 1 else 'ies'} in all)")
    for p in plan:
        print(f"  {p.freeze.id} {p.freeze.prop_id} ({p.freeze.kind_label()}): {p.why}")
    new_text = prune(text, str(path), plan, day)
    gone = [p for p in plan if p.remove]
    if new_text == text:
        print("nothing to change")
        return
    written = write_ledger(path, new_text)
    print(f"removed {len(gone)} freeze(s), kept {len(plan) - len(gone)}")
    print_commit(written, f"ledger: prune {len(gone)} freeze(s) by a replay on {evidence.base_revision[:12]}"
                 if gone else f"ledger: freezes seen again on {evidence.base_revision[:12]}")

