"""``verdict-gate demo``: build the embedded example and gate its candidate patches (:mod:`verdict_gate.demo`)."""

from __future__ import annotations

import argparse
from typing import Any

EXIT_HELP = "exit codes: 0 every candidate got its expected outcome, 1 otherwise."


def add_parser(sub: Any) -> None:
    demo = sub.add_parser("demo", epilog=EXIT_HELP,
                          help="build the embedded example and gate its candidate patches",
                          description="Build examples/orders in a temp git repository, produce its freeze by a real "
                                      "base replay, gate each candidate patch and check the expected outcomes "
                                      "(exit 0 when all hold).")
    demo.add_argument("--keep", action="store_true", help="keep the temp repository and evidence")
    demo.add_argument("--refresh-ledger", action="store_true",
                      help="rewrite examples/orders/freeze_ledger.json from the replay (after editing the example)")
    demo.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from verdict_gate import demo

    return demo.main(keep=args.keep, refresh_ledger=args.refresh_ledger)
