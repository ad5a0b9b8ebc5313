"""``verdict-gate doctor``: what isolation this host gives the candidate worker, proven by starting one
(docs/design.md §8.2)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EXIT_HELP = ("exit codes: 0 the default level (sandbox) holds here, 4 it does not (a run would be incomplete), "
             "2 usage error.")


def add_parser(sub: Any) -> None:
    doc = sub.add_parser("doctor", epilog=EXIT_HELP, help="prove which isolation levels this host gives",
                         description="Choose the method of each isolation level as a run would (bubblewrap, or "
                                     "Landlock with seccomp and, as root, a uid of its own), start a real candidate "
                                     "worker at it in a real work directory, and print what its probes found: each "
                                     "fence (network, filesystem, processes, limits) and each forbidden act it "
                                     "tried (sockets, the gate's canaries, writes, signals, ptrace).")
    doc.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")
    doc.set_defaults(run=run)


def examine(level: str) -> dict[str, Any]:
    """Start a worker at ``level`` in a fresh work directory (a one-module candidate tree) and return what
    it proved: ``{"available": True, "method", "fences", "probes", ...}`` or ``{"available": False, "why"}``."""
    from verdict_gate.boundary import proxy
    from verdict_gate.boundary.fence import host
    from verdict_gate.boundary.fence.errors import Unavailable
    from verdict_gate.boundary.fence.policy import FENCES
    from verdict_gate.host import workdir

    try:
        method = host.method(level)
    except Unavailable as exc:
        return {"available": False, "why": str(exc)}
    if level == "none":
        return {"available": True, "method": method, "fences": {f: False for f in FENCES}}
    with workdir.scratch_dir() as scratch:
        tree = scratch / "tree"
        (tree / "src").mkdir(parents=True)
        (tree / "src" / "doctor_probe.py").write_text("ANSWER = 42\n", encoding="utf-8")
        if method == "landlock":
            workdir.open_to_worker([tree, scratch])
        with workdir.home_canary() as canary:
            client = proxy.Client(level, [str(tree / "src")], str(tree), method=method, scratch=str(scratch),
                                  secrets=[str(canary)] if canary else [])
            try:
                client.start()
                client.request({"op": "import", "mod": "doctor_probe"})  # the worker serves, fenced
            except Exception as exc:  # IsolationUnavailable, a worker that did not serve
                return {"available": False, "method": method, "why": str(exc)}
            finally:
                client.close()
        return {"available": True, **client.info}


def render(host: dict[str, Any]) -> str:
    """The doctor's report as text: one block per level, each fence and, for a failed one, why."""
    lines = [f"effective uid {host['uid']}; bubblewrap: {host['bwrap'] or 'not installed'}; Landlock ABI: "
             f"{host['landlock_abi'] if host['landlock_abi'] is not None else 'none'}; seccomp: "
             f"{'yes' if host['seccomp'] else 'no'}"]
    for level, info in host["levels"].items():
        if not info["available"]:
            lines.append(f"{level:<8} unavailable{' via ' + info['method'] if info.get('method') else ''}: "
                         f"{info['why']}")
            continue
        held = [f for f, ok in info["fences"].items() if ok]
        open_ = [f for f, ok in info["fences"].items() if not ok]
        lines.append(f"{level:<8} available via {info['method']}; fences held: {', '.join(held) or 'none'}"
                     + (f"; not held: {', '.join(open_)}" if open_ else ""))
        for label, probe in (info.get("probes") or {}).items():
            lines.append(f"           {'held' if probe['held'] else 'OPEN'}  {label}: {probe['detail']}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from verdict_gate.boundary.fence.host import describe_host
    from verdict_gate.boundary.fence.policy import LEVELS
    from verdict_gate.core.errors import EXIT_INCOMPLETE, EXIT_PROMOTED

    host = describe_host()
    host["levels"] = {level: examine(level) for level in LEVELS}
    sys.stdout.write(json.dumps(host, indent=2, sort_keys=True) + "\n" if args.format == "json" else render(host))
    return EXIT_PROMOTED if host["levels"]["sandbox"]["available"] else EXIT_INCOMPLETE
