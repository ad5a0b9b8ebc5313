"""SARIF 2.1.0 (OASIS, 2020) for an :class:`~verdict_gate.core.evidence.Evidence`. Pure.

One ``run`` (§3.14) with ``automationDetails.id`` as the category (§3.17), one ``result``
(§3.27) per non-pass verdict, ``ruleId`` = the verdict reason, ``partialFingerprints``
(§3.27.17) from the failure signature (never line numbers), repo-relative
``artifactLocation`` with ``uriBaseId`` ``%SRCROOT%``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from verdict_gate import __version__
from verdict_gate.core.evidence import Evidence
from verdict_gate.core.verdict import REASON_ROWS
from verdict_gate.report.rows import cause, isolation, location, ordered, signature
from verdict_gate.report.rules import INFO_URI, RULES, help_markdown, help_text, help_uri

# The rule texts (short, full, help, helpUri) live in verdict_gate/report/rules.py, one per reason.


# GitHub code scanning accepts at most 25,000 results per run (its SARIF limits); the rest are dropped.
MAX_RESULTS = 25_000


@dataclass(frozen=True)
class Finding:
    """One non-pass verdict, or a void outcome, as SARIF (a ``result``) and the action (an annotation) show it.

    ``rule`` is the verdict reason (``void`` for a void outcome); ``level`` is ``error`` (fail, void) or
    ``warning`` (inconclusive); ``path`` is repository-relative (``""``: none) and ``line`` 1-based;
    ``fingerprint`` is the failure signature's hex digest (never a line number); ``prop_id``,
    ``verdict`` and ``row`` are empty for a void outcome.
    """

    rule: str
    level: str
    text: str
    path: str
    line: int
    fingerprint: str
    prop_id: str = ""
    verdict: str = ""
    row: str = ""

    def result(self, rule_index: int) -> dict[str, Any]:
        """The SARIF ``result`` (§3.27) of this finding, its rule at ``rule_index`` of the driver's rules."""
        out: dict[str, Any] = {
            "ruleId": self.rule, "ruleIndex": rule_index, "level": self.level, "message": {"text": self.text},
            "locations": [_loc(self.path, self.line)], "partialFingerprints": fingerprints(self.fingerprint),
        }
        if self.prop_id:
            out["properties"] = {"prop_id": self.prop_id, "verdict": self.verdict, "reason": self.rule,
                                 "row": self.row}
        return out


def findings(ev: Evidence) -> list[Finding]:
    """``ev``'s findings in report order: the void outcome's first, then each non-pass verdict's."""
    out: list[Finding] = []
    if ev.outcome == "void":
        path = (ev.diff.control_edits[0] if ev.diff is not None and ev.diff.control_edits else "") or void_location(ev)
        out.append(Finding("void", "error", f"verdict-gate outcome void: {ev.void_reason}"[:4000], path, 1,
                           hashlib.sha256(ev.void_reason.encode()).hexdigest()))
    for pid, v in ordered(ev):
        if v.verdict == "pass":
            continue
        path, line = location(ev, pid)
        fallback = "sha256:" + hashlib.sha256(f"{pid}\0{v.reason}".encode()).hexdigest()
        sig = signature(ev, pid) or fallback
        why = cause(ev, pid, 2000)
        out.append(Finding(v.reason, "error" if v.verdict == "fail" else "warning",
                           f"{pid}: {v.verdict} ({v.reason}) — {v.detail}" + (f"\nrun: {why}" if why else ""),
                           path, max(1, line), sig.removeprefix("sha256:"), pid, v.verdict, v.row))
    return out


def sarif(ev: Evidence, category: str = "verdict-gate") -> dict[str, Any]:
    """The SARIF 2.1.0 log for ``ev``: one run, one result per finding (:func:`findings`)."""
    used: list[str] = []
    results: list[dict[str, Any]] = []
    for found in findings(ev):
        if found.rule not in used:
            used.append(found.rule)
        results.append(found.result(used.index(found.rule)))
    rules = [rule(reason) for reason in used]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "verdict-gate", "version": __version__, "informationUri": INFO_URI,
                                "rules": rules}},
            "automationDetails": {"id": category.rstrip("/") + "/"},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the repository root"}}},
            "results": results[:MAX_RESULTS],
            "properties": {"outcome": ev.outcome or "void", "promoted": ev.promoted, "isolation": isolation(ev)},
        }],
    }


def rule(reason: str) -> dict[str, Any]:
    """The ``reportingDescriptor`` (§3.49) of ``reason``, with everything code scanning shows."""
    level = "warning" if reason == "frozen" else "error"
    known = RULES.get(reason)
    short = known.short if known else f"verdict reason {reason}"
    return {
        "id": reason, "name": "".join(w.capitalize() for w in reason.split("_")),
        "shortDescription": {"text": short},
        "fullDescription": {"text": known.full if known else short},
        "help": {"text": help_text(reason) if known else short,
                 "markdown": help_markdown(reason) if known else short},
        "helpUri": help_uri(reason) if known else f"{INFO_URI}#verdicts",
        "defaultConfiguration": {"level": level},
        "properties": {"row": REASON_ROWS.get(reason, "void"), "tags": ["verdict-gate", "correctness"],
                       "precision": "very-high", "problem.severity": level},
    }


def fingerprints(hex_digest: str) -> dict[str, str]:
    """``partialFingerprints`` (§3.27.17) from a failure signature, never from line numbers.

    ``primaryLocationLineHash`` is the key code scanning matches alerts by; the upload action
    computes it from the source file only when the job has a checkout, and skips results that
    already have one. Setting it here (the signature's first 16 hex digits, CodeQL's
    ``HASH:1`` shape) keeps alerts tracked across runs when the upload job has no checkout.
    ``verdictGate/v1`` carries the full digest.
    """
    return {"primaryLocationLineHash": f"{hex_digest[:16]}:1", "verdictGate/v1": hex_digest}


def void_location(ev: Evidence) -> str:
    """Where a void run points without a control edit to name: the pack's catalog, never ``.``."""
    root = str(ev.pack.get("pack_root") or "")
    source = str(ev.pack.get("source") or "")
    if not root and source.startswith("git:"):
        root = source[4:].partition(":")[2].strip("/")
    return f"{root or 'oracle'}/catalog.yaml"


def _loc(path: str, line: int) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": quote(path, safe="/"), "uriBaseId": "%SRCROOT%"},
                                 "region": {"startLine": max(1, line)}}}
