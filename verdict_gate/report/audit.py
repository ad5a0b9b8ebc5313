"""What ``verdict-gate audit`` prints: the text for a person, one JSON document for a script. Pure."""

from __future__ import annotations

import json
from typing import Any

from verdict_gate import __version__
from verdict_gate.report.text import printable

AUDIT_FORMAT = "verdict-gate/audit/v1"
SHOWN = 200  # findings printed; the JSON document has every one


def audit_text(audit: Any, directory: str) -> str:
    """``audit`` (a :class:`verdict_gate.run.audit.Audit`) for a person: what the directory is, each finding on
    its own line, and the verdict of the audit."""
    what = {"run": f"a run, outcome {audit.outcome}", "void": "a void run",
            "shard": "one shard of a sharded run"}[audit.kind]
    head = f" of {audit.head_revision[:12]}" if audit.head_revision else ""
    lines = [f"verdict-gate audit {printable(directory)}: {what}{head}, written by verdict-gate "
             f"{printable(audit.gate_version) or '(no version recorded)'}"]
    checked = audit.checked
    lines.append(f"checked {checked['files']} files (schemas, their exact form, every sha256 and signature), "
                 f"the inventory ({checked['properties']} runs, {checked['tries']} base replay tries)"
                 + (", and the decision re-derived and every derived file rendered again" if audit.kind != "shard"
                    else ", and shard.json against the shard's files"))
    if audit.ok:
        lines.append(f"ok: every file agrees with the others and with the rules of verdict-gate {__version__}")
        return "\n".join(lines) + "\n"
    lines += [f"DIFFERS {printable(f.line())}" for f in audit.findings[:SHOWN]]
    if len(audit.findings) > SHOWN:
        lines.append(f"… and {len(audit.findings) - SHOWN} more (--format json lists every one)")
    lines.append(f"{len(audit.findings)} difference{'s' if len(audit.findings) != 1 else ''}: the evidence does not "
                 "re-check (a file was changed after the gate wrote it, or another gate version wrote it)")
    return "\n".join(lines) + "\n"


def audit_document(audit: Any, directory: str) -> dict[str, Any]:
    """The ``audit --format json`` document: ``ok``, ``exit_code``, every finding, and what the evidence says it is."""
    return {"format": AUDIT_FORMAT, "ok": audit.ok, "exit_code": 0 if audit.ok else 1, "directory": directory,
            "kind": audit.kind, "outcome": audit.outcome, "head_revision": audit.head_revision,
            "gate_version": audit.gate_version, "audited_by": __version__, "checked": dict(audit.checked),
            "findings": [f.to_json() for f in audit.findings]}


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
