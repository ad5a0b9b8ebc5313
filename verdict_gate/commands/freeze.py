"""``verdict-gate freeze``: append a reviewed freeze to a ledger, from a base replay."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_HELP = "exit codes: 0 freeze added, 2 usage error (nothing written)."


def add_parser(sub: Any) -> None:
    frz = sub.add_parser("freeze", epilog=EXIT_HELP,
                         help="add a reviewed freeze to a ledger from a base replay",
                         description="Append a ledger record for --id from a base.sig.json that reproduced its "
                                     "failure. The reason is yours to write; it is required.")
    frz.add_argument("--base-sig", required=True, metavar="FILE", help="base.sig.json from `verdict-gate replay`")
    frz.add_argument("--id", required=True, help="property id to freeze")
    frz.add_argument("--reason", required=True, help="why this failure is known and forgiven (human-written)")
    frz.add_argument("--ledger", required=True, metavar="FILE", help="freeze_ledger.json to append to (created)")
    frz.add_argument("--first-seen", metavar="YYYY-MM-DD", help="default: today")
    frz.add_argument("--expires-on", metavar="YYYY-MM-DD", help="optional expiry date")
    frz.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate.core.errors import EXIT_PROMOTED
    from verdict_gate.run.freeze import freeze

    ledger_path = Path(args.ledger)
    rec = freeze(Path(args.base_sig), args.id, ledger_path, reason=args.reason, first_seen=args.first_seen,
                 expires_on=args.expires_on)
    print(f"added a freeze of {args.id} ({rec['signature'][:19]}…) to {ledger_path}")
    print(f"next: review the reason, then run `verdict-gate manifest write {ledger_path.parent}` "
          "(the manifest covers the ledger)", file=sys.stderr)
    return EXIT_PROMOTED  # 0: added
