"""Renderers: evidence → text (DESIGN.md §7, §9). Pure: they return strings; the writer writes.

- :func:`render_all` gives every evidence file as ``name → text`` (JSON validated against
  ``schemas/`` by the writer), with ``verdicts.json`` carrying the sha256 of the others.
- :func:`sarif` follows SARIF 2.1.0 (OASIS, 2020): one ``run`` (§3.14) with
  ``automationDetails.id`` as the category (§3.17), one ``result`` (§3.27) per non-pass
  verdict, ``ruleId`` = the verdict reason, ``partialFingerprints`` (§3.27.17) from the
  failure signature (never line numbers), repo-relative ``artifactLocation`` with
  ``uriBaseId`` ``%SRCROOT%``.
- :func:`summary_markdown` stays under GitHub's 1 MiB job-summary cap with a margin
  (docs.github.com, "Adding a job summary") and says what it cut.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from gate import __version__
from gate.pipeline import Evidence, printable
from gate.verdict import REASON_ROWS, Verdict

SUMMARY_BUDGET = 900 * 1024  # bytes: 1 MiB cap minus a margin (a summary just under the cap can vanish)
INFO_URI = "https://github.com/verdict-gate/verdict-gate"
FILES = ("fixture.digest", "oracle_edited.json", "base.sig.json", "runs.json", "verdicts.json",
         "results.sarif", "summary.md")
SCHEMA_OF = {"fixture.digest": "fixture_digest", "oracle_edited.json": "oracle_edited",
             "base.sig.json": "base_sig", "runs.json": "runs", "verdicts.json": "verdicts",
             "results.sarif": "sarif-2.1.0"}

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
SEVERITY = {"fail": 0, "inconclusive": 1, "pass": 2}


def dumps(doc: Any) -> str:
    """Evidence JSON: sorted keys, two-space indent, trailing newline."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=True) + "\n"


def counts(ev: Evidence) -> dict[str, int]:
    out = {"pass": 0, "fail": 0, "inconclusive": 0}
    for v in ev.verdicts.values():
        out[v.verdict] += 1
    return out


def ordered(ev: Evidence) -> list[tuple[str, Verdict]]:
    """Verdicts worst first (fail, inconclusive, pass), then by id."""
    return sorted(ev.verdicts.items(), key=lambda kv: (SEVERITY[kv[1].verdict], kv[0]))


def cause(ev: Evidence, prop_id: str, limit: int = 300) -> str:
    """Why the run failed, from ``runs.json``: ``ExcType: first message line [counterexample]``,
    or "" when the property passed or has no run. Cut to ``limit`` characters."""
    entry = (ev.runs or {}).get("runs", {}).get(prop_id) or {}
    if entry.get("status") in (None, "pass") or not entry.get("exc_type"):
        return ""
    exc = str(entry["exc_type"]).removeprefix("builtins.")
    message = (entry.get("message") or "").strip().splitlines()
    text = printable(f"{exc}: {message[0]}" if message else exc)
    if entry.get("counterexample") is not None:
        text += f" [counterexample {json.dumps(entry['counterexample'], sort_keys=True)}]"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def location(ev: Evidence, prop_id: str) -> tuple[str, int]:
    """Repo-relative file and line for a property: the deepest traceback frame inside the
    repository, else the property's oracle file at line 1."""
    entry = (ev.runs or {}).get("runs", {}).get(prop_id) or {}
    frames = entry.get("traceback") or []
    if frames:
        return frames[-1]["path"], int(frames[-1]["line"])
    prop = ev.properties.get(prop_id)
    root = (ev.pack.get("pack_root") or "oracle")
    return (f"{root}/{prop.oracle}" if prop else root), 1


def verdicts_doc(ev: Evidence, digests: dict[str, str]) -> dict[str, Any]:
    runs = (ev.runs or {}).get("runs", {})
    return {
        "version": 1,
        "outcome": ev.outcome,
        "promoted": ev.promoted,
        "promotion": ev.why,
        "void_reason": ev.void_reason or None,
        "policy": ev.policy,
        "freeze_base": ev.freeze_base,
        "head_revision": ev.head_revision,
        "base_ref": ev.base_ref,
        "base_revision": ev.base_revision,
        "pack": ev.pack,
        "claimed": list(ev.claimed),
        "counts": counts(ev),
        "verdicts": {
            pid: {"verdict": v.verdict, "reason": v.reason, "row": v.row, "detail": v.detail, "notes": list(v.notes),
                  "claimed": pid in ev.claimed, "signature": (runs.get(pid) or {}).get("signature")}
            for pid, v in sorted(ev.verdicts.items())
        },
        "notices": ev.notices,
        "evidence": digests,
    }


def sarif(ev: Evidence, category: str = "verdict-gate") -> dict[str, Any]:
    """The SARIF 2.1.0 log for ``ev``: one run, one result per non-pass verdict (or one ``void`` result)."""
    runs = (ev.runs or {}).get("runs", {})
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
        sig = (runs.get(pid) or {}).get("signature") or fallback
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
            "properties": {"outcome": ev.outcome, "promoted": ev.promoted},
        }],
    }


def _loc(path: str, line: int) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": _uri(path), "uriBaseId": "%SRCROOT%"},
                                 "region": {"startLine": max(1, line)}}}


def _uri(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/")


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _artifact_note(pack: dict[str, Any]) -> str:
    """``, artifact ID of run RUN (SHA on BRANCH)`` for a pack from a GitHub artifact, else ""."""
    art = pack.get("artifact")
    if not art:
        return ""
    return (f", artifact {art['name']} {art['artifact_id']} of run {art['run_id']} "
            f"({str(art.get('head_sha', ''))[:12]} on {art['branch']})")


def summary_markdown(ev: Evidence, budget: int = SUMMARY_BUDGET) -> str:
    """The job summary: outcome, revisions, pack, notices and the verdict table (worst first).

    Rows that would push the text past ``budget`` bytes (UTF-8) are cut, and a final line
    says how many and where the rest is (``verdicts.json``, ``results.sarif``).
    """
    c = counts(ev)
    head = [
        f"## verdict-gate: **{ev.outcome}**",
        "",
        f"- head `{ev.head_revision[:12]}`, base `{ev.base_revision[:12]}` (merge base of `{_cell(ev.base_ref)}`)",
        f"- oracle pack `{_cell(str(ev.pack.get('source', '')))}`"
        + (f" sha256 `{ev.pack['sha256']}`" if ev.pack.get("sha256") else "") + _cell(_artifact_note(ev.pack)),
        f"- {c['pass']} pass · {c['fail']} fail · {c['inconclusive']} inconclusive · policy `{ev.policy}`",
    ]
    if ev.void_reason:
        head.append("- void: " + "<br>".join(_cell(line.strip()) for line in ev.void_reason.splitlines()))
    if ev.why and ev.outcome != "void":
        head.append(f"- promotion: {_cell(ev.why)}")
    head += [f"- note: {_cell(n)}" for n in ev.notices]
    head += ["", "| property | verdict | reason | detail |", "| --- | --- | --- | --- |"]
    text = "\n".join(head) + "\n"
    rows = ordered(ev)
    for i, (pid, v) in enumerate(rows):
        why = _cell(cause(ev, pid)).replace("`", "'")  # it goes inside a code span
        detail = _cell(v.detail)[:500] + (f"<br>`{why}`" if why else "")
        row = f"| `{_cell(pid)}` | {v.verdict} | `{v.reason}` | {detail} |\n"
        tail = (f"\n_{len(rows) - i} more row(s) cut to keep the summary under 1 MiB; "
                "see verdicts.json and results.sarif._\n")
        if len((text + row + tail).encode()) > budget:
            return text + tail
        text += row
    return text


def terminal_table(ev: Evidence) -> str:
    """The verdict table for a terminal: fixed columns, no colour."""
    lines = [f"outcome: {ev.outcome}",
             f"head {ev.head_revision[:12]}  base {ev.base_revision[:12]}  pack {ev.pack.get('source', '')}"
             + (f"  sha256 {ev.pack['sha256'][:16]}…" if ev.pack.get("sha256") else "") + _artifact_note(ev.pack)]
    if ev.void_reason:
        lines.append(f"void: {ev.void_reason}")
    lines += [f"note: {n}" for n in ev.notices]
    if ev.verdicts:
        width = max(len("property"), *(len(p) for p in ev.verdicts))
        lines.append(f"{'property'.ljust(width)}  {'verdict'.ljust(12)}  {'reason'.ljust(22)}  detail")
        for pid, v in ordered(ev):
            mark = "" if pid in ev.claimed else " (unclaimed)"
            lines.append(f"{pid.ljust(width)}  {v.verdict.ljust(12)}  {v.reason.ljust(22)}  {v.detail}{mark}")
            if why := cause(ev, pid):
                lines.append(f"{''.ljust(width)}  {'':12}  {'':22}  run: {why}")
        c = counts(ev)
        lines.append(f"{c['pass']} pass, {c['fail']} fail, {c['inconclusive']} inconclusive; {ev.why}")
    return "\n".join(lines) + "\n"


def render_all(ev: Evidence, category: str = "verdict-gate") -> dict[str, str]:
    """Every evidence file present for ``ev`` as ``name → text``, ``verdicts.json`` last but one."""
    out: dict[str, str] = {}
    if ev.fixture is not None:
        out["fixture.digest"] = dumps(ev.fixture)
    if ev.oracle_edited is not None:
        out["oracle_edited.json"] = dumps(ev.oracle_edited)
    if ev.base_sig is not None:
        out["base.sig.json"] = dumps(ev.base_sig)
    if ev.runs is not None:
        out["runs.json"] = dumps(ev.runs)
    digests = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in out.items()}
    out["verdicts.json"] = dumps(verdicts_doc(ev, digests))
    out["results.sarif"] = dumps(sarif(ev, category))
    out["summary.md"] = summary_markdown(ev)
    return out
