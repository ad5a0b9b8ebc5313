"""Run one command fenced as the candidate worker is (docs/design.md §8.1, "Child processes"): started as
``python -P -s -B load.py fenced POLICY -- COMMAND...`` inside the launcher of the policy's method (bubblewrap's
namespaces, or a uid of its own), it applies the policy's in-process fences to itself (:func:`.apply.confine`:
Landlock, seccomp) and then ``exec``s the command, which inherits them for good. A test's
``subprocess.run([sys.executable, "-m", "pkg"])`` runs the candidate's code this way, never as a plain child of
the oracle's process (:mod:`..proxy.children`).
"""

from __future__ import annotations

import json
import os
import sys

from .apply import confine
from .policy import Policy


def main(args: list[str]) -> int:
    """``args``: the policy (JSON), ``--``, then the command. Exits 126 when a required fence cannot be applied
    (the command never runs unfenced), 127 when the command cannot be executed."""
    if len(args) < 3 or args[1] != "--":
        print("verdict-gate: fenced: usage: fenced POLICY -- COMMAND...", file=sys.stderr)
        return 2
    policy = Policy.from_json(json.loads(args[0]))
    report = confine(policy)
    if report["errors"]:
        print(f"verdict-gate: a fence could not be applied, so the command was not run: {'; '.join(report['errors'])}",
              file=sys.stderr)
        return 126
    command = args[2:]
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"verdict-gate: {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    return 127  # not reached: exec replaced this process
