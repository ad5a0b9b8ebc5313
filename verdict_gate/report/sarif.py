"""SARIF 2.1.0 (OASIS, 2020) for an :class:`~verdict_gate.core.evidence.Evidence`. Pure.

One ``run`` (§3.14) with ``automationDetails.id`` as the category (§3.17), one ``result``
(§3.27) per non-pass verdict, ``ruleId`` = the verdict reason, ``partialFingerprints``
(§3.27.17) from the failure signature (never line numbers), repo-relative
``artifactLocation`` with ``uriBaseId`` ``%SRCROOT%``.
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import quote

from verdict_gate import __version__
from verdict_gate.core.evidence import Evidence
from verdict_gate.core.verdict import REASON_ROWS
from verdict_gate.report.rows import cause, location, ordered, signature

INFO_URI = "https://github.com/verdict-gate/verdict-gate"
RULE_TEXT = {
    "held": "The property held.",
    "no_freeze": "The property failed and no freeze covers it.",
    "frozen": "A known failure, frozen by a reviewed ledger record and reproduced on the base revision.",
    "oracle_moved": "The candidate edits this property's oracle file; any freeze is void.",
    "catalog_drift": "The property passed, but the candidate edits its oracle file.",
    "missing_run": "The runner produced no result for this property.",
    "signature_mismatch": "The failure's signature differs from every freeze of this property.",
    "digest_mismatch": "The fixture digest differs from the freeze's.",
    "base_mismatch": "The freeze's base revision does not fit the run's base revision.",
    "not_reproduced_on_base": "The base replay did not reproduce the frozen signature.",
    "freeze_expired": "The freeze has expired.",
    "fixture_mutated": "A property declared mutates_fixture: false changed the fixtures.",
    "timed_out": "The property exceeded its timeout.",
    "crashed": "The property's process crashed.",
    "unseeded": "A seeded property ran without a recorded seed.",
    "vacuous": "The property checked no example.",
    "void": "The oracle pack or its control files cannot be trusted for this run.",
}

def sarif(ev: Evidence, category: str = "verdict-gate") -> dict[str, Any]:
    """The SARIF 2.1.0 log for ``ev``: one run, one result per non-pass verdict (or one ``void`` result)."""
    results: list[dict[str, Any]] = []
    used: list[str] = []

    def rule_index(reason: str) -> int:
        if reason not in used:
            used.append(reason)
        return used.index(reason)

    if ev.outcome == "void":
        path = ((ev.oracle_edited or {}).get("control_edits") or [""])[0] or "."
        results.append({
            "ruleId": "void", "ruleIndex": rule_index("void"), "level": "error",
            "message": {"text": f"verdict-gate outcome void: {ev.void_reason}"[:4000]},
            "locations": [_loc(path, 1)],
            "partialFingerprints": {"verdictGate/v1": hashlib.sha256(ev.void_reason.encode()).hexdigest()},
        })
    for pid, v in ordered(ev):
        if v.verdict == "pass":
            continue
        path, line = location(ev, pid)
        fallback = "sha256:" + hashlib.sha256(f"{pid}\0{v.reason}".encode()).hexdigest()
        sig = signature(ev, pid) or fallback
        results.append({
            "ruleId": v.reason, "ruleIndex": rule_index(v.reason),
            "level": "error" if v.verdict == "fail" else "warning",
            "message": {"text": f"{pid}: {v.verdict} ({v.reason}) — {v.detail}"
                        + (f"\nrun: {why}" if (why := cause(ev, pid, 2000)) else "")},
            "locations": [_loc(path, line)],
            "partialFingerprints": {"verdictGate/v1": sig.removeprefix("sha256:")},
            "properties": {"prop_id": pid, "verdict": v.verdict, "reason": v.reason, "row": v.row},
        })
    rules = [{
        "id": reason, "name": reason,
        "shortDescription": {"text": RULE_TEXT[reason]},
        "helpUri": f"{INFO_URI}#verdicts",
        "defaultConfiguration": {"level": "warning" if reason == "frozen" else "error"},
        "properties": {"row": REASON_ROWS.get(reason, "void")},
    } for reason in used]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "verdict-gate", "version": __version__, "informationUri": INFO_URI,
                                "rules": rules}},
            "automationDetails": {"id": category.rstrip("/") + "/"},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the repository root"}}},
            "results": results[:25_000],
            "properties": {"outcome": ev.outcome or "void", "promoted": ev.promoted},
        }],
    }


def _loc(path: str, line: int) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": quote(path, safe="/"), "uriBaseId": "%SRCROOT%"},
                                 "region": {"startLine": max(1, line)}}}
