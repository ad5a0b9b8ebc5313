"""``verdict-gate replay``: the base replay alone, written as ``base.sig.json``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from verdict_gate.commands.common import add_pack_options, pack_options, progress

EXIT_HELP = "exit codes: 0 base.sig.json written, 2 usage or configuration error, 3 the pack cannot be trusted."


def add_parser(sub: Any) -> None:
    rep = sub.add_parser("replay", epilog=EXIT_HELP,
                         help="base replay alone: run frozen properties on a revision",
                         description="Run the ledger's properties (or --only-id) on a detached worktree of --rev "
                                     "and write base.sig.json to --out.")
    rep.add_argument("--repo", default=".", help="git repository (default: .)")
    rep.add_argument("--rev", required=True, help="revision to replay on")
    rep.add_argument("--pack", required=True, metavar="SOURCE", help="oracle pack, as for run")
    add_pack_options(rep)
    rep.add_argument("--out", required=True, metavar="FILE", help="where to write base.sig.json")
    rep.add_argument("--only-id", action="append", metavar="ID", help="replay only this property (repeatable)")
    rep.add_argument("--replays", type=int, metavar="N", default=1,
                     help="replay each property N times, each try in fresh processes (default 1); every try is "
                          "kept in base.sig.json, and `verdict-gate freeze --base-sig` records a flaky freeze when "
                          "they differ (5 tell a flake that fails half the time with 94%% chance)")
    rep.add_argument("--format", choices=["text", "json"], default="text",
                     help="stdout: one line per property (text, default) or one JSON document (json)")
    rep.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.core.errors import EXIT_PROMOTED, GateError
    from verdict_gate.run.replay import replay_to_file

    if not 1 <= args.replays <= 100:
        raise GateError("--replays", str(args.replays), "is not between 1 and 100", "e.g. --replays 5")
    doc = replay_to_file(Path(args.repo), args.rev, args.pack, Path(args.out), only=args.only_id or None,
                         options=pack_options(args), progress=progress,
                         notice=lambda n: print(f"note: {n}", file=sys.stderr), tries=args.replays)
    if getattr(args, "format", "text") == "json":
        from verdict_gate.report.jsonout import dumps, replay_document

        sys.stdout.write(dumps(replay_document(doc, str(args.out))))
    for r in doc.replays if getattr(args, "format", "text") != "json" else ():
        print(f"{r.prop_id}{f' (try {r.try_no})' if args.replays > 1 else ''}: {r.status} {r.signature or ''}")
    print(f"wrote {args.out}", file=sys.stderr)
    return EXIT_PROMOTED  # 0: written
