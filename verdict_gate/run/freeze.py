"""Freeze a reproduced failure: append a reviewed record to a ledger file (``verdict-gate freeze``).

The record itself is built and checked by :func:`verdict_gate.core.ledger.add_freeze`; this
edge reads ``base.sig.json`` and the ledger, reads today's date and writes the file.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from verdict_gate.core.errors import GateError
from verdict_gate.core.ledger import EMPTY_LEDGER, add_freeze, parse_date, parse_json
from verdict_gate.host import schemas
from verdict_gate.host.files import parse_ledger, read_utf8
from verdict_gate.run.pipeline import today


def freeze(base_sig_path: Path, prop_id: str, ledger_path: Path, *, reason: str, first_seen: str | None,
           expires_on: str | None) -> dict[str, Any]:
    """Add the freeze to the ledger file (the library form of ``verdict-gate freeze``); return the replay frozen.

    Raises:
        GateError: the base replay did not reproduce a failure of ``prop_id``, the ledger is
            invalid, or the record is (nothing is written then).
    """
    # The flags first: a bad flag is the flag's fault, never the ledger file's.
    if not reason.strip():
        raise GateError("--reason", repr(reason), "is empty; a freeze needs the reason a human wrote",
                        'say why the failure is known and forgiven, e.g. --reason "rounds half to even; ORD-17"')
    for flag, value in (("--first-seen", first_seen), ("--expires-on", expires_on)):
        if value is not None:
            parse_date(value, flag, repr(value))
    base_sig = parse_json(read_utf8(base_sig_path, "base.sig.json", "pass the file `verdict-gate replay --out` wrote"),
                          "base.sig.json", str(base_sig_path))
    schemas.check("base_sig", base_sig, str(base_sig_path))
    found = [r for r in base_sig["replays"] if r["prop_id"] == prop_id]
    if not found:
        raise GateError("base.sig.json", str(base_sig_path), f"has no replay of {prop_id!r}",
                        f"replay it on the base revision first: verdict-gate replay … --only-id {prop_id}")
    rec = found[0]
    if not rec["signature"]:
        raise GateError("base.sig.json", str(base_sig_path),
                        f"shows {prop_id!r} {rec['status']} on {rec['base_revision'][:12]}: "
                        "there is no failure to freeze",
                        "freeze only a failure the base replay reproduced; a passing property needs no freeze")
    limits = [f for f in rec.get("failures") or [] if (f.get("signature_parts") or {}).get("origin") == "boundary"]
    if limits:
        # A failure the isolation boundary caused is the gate's, not the project's: freezing it would
        # forbid the real fix for as long as the freeze lives (docs/design.md §8.1).
        raise GateError("base.sig.json", str(base_sig_path),
                        f"shows {prop_id!r} failing because of the isolation boundary, not the code: "
                        f"{limits[0]['exc_type']}: {str(limits[0]['message'])[:300]}",
                        "this cannot be frozen; `verdict-gate check` names the line and the catalog switch "
                        "(`isolation: none` for this property)")
    if ledger_path.exists():
        text = read_utf8(ledger_path, "freeze ledger", "pass the pack's freeze_ledger.json")
    elif ledger_path.parent.is_dir():
        text = EMPTY_LEDGER
    else:
        raise GateError("--ledger", str(ledger_path), "is in a directory that does not exist",
                        "pass the pack's freeze_ledger.json, e.g. oracle/freeze_ledger.json")
    seen = first_seen or today().isoformat()
    parse_ledger(text, str(ledger_path))  # the ledger as it is must load: its schema, dates and signatures
    new_text = add_freeze(text, str(ledger_path), rec, reason=reason, first_seen=seen, expires_on=expires_on)
    parse_ledger(new_text, str(ledger_path))  # and so must the result
    if expires_on and expires_on < today().isoformat():
        print(f"warning: --expires-on {expires_on} is in the past: this freeze will not apply", file=sys.stderr)
    ledger_path.write_text(new_text, encoding="utf-8")
    return rec
