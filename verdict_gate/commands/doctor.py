"""``verdict-gate doctor``: what isolation this host can give the candidate worker (docs/design.md §8.2)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EXIT_HELP = ("exit codes: 0 the default level (sandbox) is available, 4 it is not (a run would be incomplete), "
             "2 usage error.")


def add_parser(sub: Any) -> None:
    doc = sub.add_parser("doctor", epilog=EXIT_HELP, help="print the isolation levels this host can give",
                         description="Probe bubblewrap, user namespaces and a separate uid, start nothing of a "
                                     "candidate, and print each isolation level (sandbox, process, none) with the "
                                     "method and the fences it holds here: network, pid, filesystem, uid, limits.")
    doc.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")
    doc.set_defaults(run=run)


def render(host: dict[str, Any]) -> str:
    """The doctor's report as text: one block per level."""
    lines = [f"effective uid {host['uid']}; bubblewrap: {host['bwrap'] or 'not installed'}"]
    for level, info in host["levels"].items():
        if not info["available"]:
            lines.append(f"{level:<8} unavailable: {info['why']}")
            continue
        held = [f for f, ok in info["fences"].items() if ok]
        open_ = [f for f, ok in info["fences"].items() if not ok]
        lines.append(f"{level:<8} available via {info['method']}; fences held: {', '.join(held) or 'none'}"
                     + (f"; not held: {', '.join(open_)}" if open_ else ""))
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from verdict_gate.boundary import sandbox
    from verdict_gate.core.errors import EXIT_INCOMPLETE, EXIT_PROMOTED

    host = sandbox.describe_host()
    sys.stdout.write(json.dumps(host, indent=2, sort_keys=True) + "\n" if args.format == "json" else render(host))
    return EXIT_PROMOTED if host["levels"]["sandbox"]["available"] else EXIT_INCOMPLETE
