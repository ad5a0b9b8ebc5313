"""``verdict-gate explain DIR ID``: why one property got its verdict, from an evidence directory alone."""

from __future__ import annotations

import argparse
from typing import Any

from verdict_gate.commands.common import RAW

EXIT_HELP = "exit codes: 0 explained, 2 usage (not an evidence directory, a void run or a shard's, or an unknown ID)."


def add_parser(sub: Any) -> None:
    cmd = sub.add_parser("explain", help="why one property got its verdict, freeze against run, side by side",
                         epilog=EXIT_HELP, formatter_class=RAW,
                         description="Read an evidence directory and set each freeze of the property (the ledger "
                                     "as the run scored it) against this run in two columns: the oracle edit, the "
                                     "result, the isolation, each failure of the set with each signature part, the "
                                     "fixture digest, the base revision, the base replay, the expiry. '!' marks "
                                     "each row that differs and '<- first difference' the first; the last lines "
                                     "are the fix and the rule (docs/rules.md). The job summary shows the same "
                                     "lines for every property that did not pass.")
    cmd.add_argument("dir", metavar="DIR", help="the evidence directory (verdict-gate run/merge --out DIR)")
    cmd.add_argument("id", metavar="ID", help="the property id, e.g. prop.tax_round")
    cmd.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from verdict_gate.core.errors import GateError
    from verdict_gate.host.evidence import read_dir
    from verdict_gate.report.explain import explain_text
    from verdict_gate.run.audit import evidence_of, load

    loaded = load(read_dir(Path(args.dir)).files)
    if loaded.kind == "shard":
        raise GateError("evidence directory", args.dir, "is one shard's: a shard decides nothing",
                        "explain the evidence `verdict-gate merge` wrote")
    ev = evidence_of(loaded)
    if ev is None:
        problems = "; ".join(f.line() for f in loaded.findings[:3]) or "a file the decision reads is missing"
        raise GateError("evidence directory", args.dir, f"cannot be read back: {problems}",
                        "run `verdict-gate audit DIR` to see every problem")
    if ev.outcome == "void":
        raise GateError("evidence directory", args.dir, f"is a void run: nothing was scored ({ev.void_reason})",
                        "the summary says which control file was edited or why the pack was refused")
    if args.id not in ev.verdicts:
        known = ", ".join(sorted(ev.verdicts)[:20])
        raise GateError("property id", args.id, "has no verdict in this evidence", f"pass one of: {known}")
    recorded = (loaded.docs.get("verdicts.json") or {}).get("verdicts", {}).get(args.id) or {}
    derived = ev.verdicts[args.id]
    if (recorded.get("verdict"), recorded.get("reason")) != (derived.verdict, derived.reason):
        print(f"note: verdicts.json says {recorded.get('verdict')}/{recorded.get('reason')}, but the evidence "
              f"re-derives {derived.verdict}/{derived.reason}: run `verdict-gate audit {args.dir}`")
    print(explain_text(ev, args.id), end="")
    return 0
