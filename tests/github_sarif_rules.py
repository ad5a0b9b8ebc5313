"""GitHub code scanning's SARIF ingestion rules, as a checker for tests.

Written from GitHub's documentation page "SARIF support for code scanning"
(https://docs.github.com/en/code-security/reference/code-scanning/sarif-files/sarif-support-for-code-scanning)
and the upload limits of "Uploading a SARIF file to GitHub" (also in
/work/shared/reference/github-limits.md). The OASIS schema says what SARIF may hold; these rules
say what code scanning needs from it to make useful, tracked alerts:

- top level: ``$schema``, ``version`` "2.1.0" and ``runs`` are required; at most 20 runs;
- ``run``: ``tool.driver`` and ``results`` are required; ``automationDetails.id`` (the category)
  unique per file;
- ``toolComponent`` (driver): ``name`` required; at most 25,000 rules;
- ``reportingDescriptor`` (rule): ``id``, ``shortDescription.text``, ``fullDescription.text`` and
  ``help.text`` required (the alert shows them); ``help.markdown`` recommended — required here;
  ``helpUri`` — required here, an https URL; ``defaultConfiguration.level`` one of
  note/warning/error; ``properties.tags`` strings, at most 20; ``properties.precision`` one of
  very-high/high/medium/low; ``properties.problem.severity`` one of error/warning/recommendation;
  ``properties.security-severity`` a number 0.0–10.0 as a string;
- ``result``: ``ruleId`` (a rule of the driver; ``ruleIndex``, when given, points at it),
  ``message.text``, ``locations`` (at least one, at most 1,000) and ``partialFingerprints``
  (string values) are required; at most 25,000 results per run; ``level`` one of
  none/note/warning/error;
- ``location``: ``physicalLocation.artifactLocation.uri`` required: a file path relative to the
  repository root (or an absolute URI), never empty, ``.`` or a directory; ``region.startLine``
  ≥ 1 required when a region is given; columns and ``endLine``, when present, ≥ 1 and not before
  the start;
- alert tracking without a checkout: the upload action computes ``primaryLocationLineHash``
  from the source file only when the repository is checked out; a result that already has it
  is left alone. So every result here must carry ``primaryLocationLineHash`` itself.
"""

from __future__ import annotations

import re
from typing import Any

LEVELS = {"none", "note", "warning", "error"}
RULE_LEVELS = {"note", "warning", "error"}
PRECISIONS = {"very-high", "high", "medium", "low"}
SEVERITIES = {"error", "warning", "recommendation"}
MAX_RUNS, MAX_RESULTS, MAX_RULES, MAX_LOCATIONS, MAX_TAGS = 20, 25_000, 25_000, 1_000, 20
MAX_DESCRIPTION = 1024  # characters shown for short/full descriptions


def _text(obj: Any, key: str) -> str | None:
    value = obj.get(key) if isinstance(obj, dict) else None
    text = value.get("text") if isinstance(value, dict) else None
    return text if isinstance(text, str) and text.strip() else None


def rule_violations(rule: Any, where: str) -> list[str]:
    out: list[str] = []
    if not isinstance(rule, dict) or not isinstance(rule.get("id"), str) or not rule["id"]:
        return [f"{where}: a rule needs an id"]
    for key in ("shortDescription", "fullDescription", "help"):
        text = _text(rule, key)
        if text is None:
            out.append(f"{where} ({rule['id']}): {key}.text is required")
        elif key != "help" and len(text) > MAX_DESCRIPTION:
            out.append(f"{where} ({rule['id']}): {key}.text is over {MAX_DESCRIPTION} characters")
    help_ = rule.get("help") or {}
    if not isinstance(help_.get("markdown"), str) or not help_["markdown"].strip():
        out.append(f"{where} ({rule['id']}): help.markdown is missing")
    uri = rule.get("helpUri")
    if not isinstance(uri, str) or not uri.startswith("https://"):
        out.append(f"{where} ({rule['id']}): helpUri must be an https URL")
    level = (rule.get("defaultConfiguration") or {}).get("level")
    if level is not None and level not in RULE_LEVELS:
        out.append(f"{where} ({rule['id']}): defaultConfiguration.level {level!r} is not note/warning/error")
    props = rule.get("properties") or {}
    tags = props.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags) or len(tags) > MAX_TAGS:
        out.append(f"{where} ({rule['id']}): properties.tags must be at most {MAX_TAGS} strings")
    if "precision" in props and props["precision"] not in PRECISIONS:
        out.append(f"{where} ({rule['id']}): properties.precision {props['precision']!r} is not allowed")
    if "problem.severity" in props and props["problem.severity"] not in SEVERITIES:
        out.append(f"{where} ({rule['id']}): properties.problem.severity {props['problem.severity']!r}")
    if "security-severity" in props:
        sev = props["security-severity"]
        try:
            ok = isinstance(sev, str) and 0.0 <= float(sev) <= 10.0
        except ValueError:
            ok = False
        if not ok:
            out.append(f"{where} ({rule['id']}): properties.security-severity must be a string 0.0–10.0")
    return out


def location_violations(loc: Any, where: str) -> list[str]:
    phys = loc.get("physicalLocation") if isinstance(loc, dict) else None
    if not isinstance(phys, dict):
        return [f"{where}: physicalLocation is required"]
    uri = (phys.get("artifactLocation") or {}).get("uri")
    out: list[str] = []
    if not isinstance(uri, str) or not uri.strip():
        out.append(f"{where}: artifactLocation.uri is required")
    elif uri in (".", "./", "/") or uri.endswith("/") or re.fullmatch(r"\.+/?", uri):
        out.append(f"{where}: artifactLocation.uri {uri!r} is a directory, not a file")
    elif uri.startswith("/"):
        out.append(f"{where}: artifactLocation.uri {uri!r} is absolute without a scheme; use a repository path")
    region = phys.get("region")
    if region is not None:
        start = region.get("startLine")
        if not isinstance(start, int) or start < 1:
            out.append(f"{where}: region.startLine must be an integer ≥ 1, not {start!r}")
        for key in ("startColumn", "endColumn", "endLine"):
            if key in region and (not isinstance(region[key], int) or region[key] < 1):
                out.append(f"{where}: region.{key} must be an integer ≥ 1, not {region[key]!r}")
        if isinstance(start, int) and isinstance(region.get("endLine"), int) and region["endLine"] < start:
            out.append(f"{where}: region.endLine is before startLine")
    return out


def result_violations(result: Any, where: str, rule_ids: list[str]) -> list[str]:
    out: list[str] = []
    rule_id = result.get("ruleId")
    if not isinstance(rule_id, str) or rule_id not in rule_ids:
        out.append(f"{where}: ruleId {rule_id!r} is not a rule of the driver")
    index = result.get("ruleIndex")
    if index is not None and (not isinstance(index, int) or not 0 <= index < len(rule_ids)
                              or rule_ids[index] != rule_id):
        out.append(f"{where}: ruleIndex {index!r} does not point at rule {rule_id!r}")
    if _text(result, "message") is None:
        out.append(f"{where}: message.text is required")
    if "level" in result and result["level"] not in LEVELS:
        out.append(f"{where}: level {result['level']!r} is not none/note/warning/error")
    locations = result.get("locations")
    if not isinstance(locations, list) or not locations:
        out.append(f"{where}: at least one location is required")
    else:
        if len(locations) > MAX_LOCATIONS:
            out.append(f"{where}: more than {MAX_LOCATIONS} locations")
        for i, loc in enumerate(locations):
            out += location_violations(loc, f"{where}.locations[{i}]")
    fps = result.get("partialFingerprints")
    if not isinstance(fps, dict) or not fps or not all(isinstance(v, str) and v for v in fps.values()):
        out.append(f"{where}: partialFingerprints with string values are required")
    elif "primaryLocationLineHash" not in fps:
        out.append(f"{where}: partialFingerprints.primaryLocationLineHash is missing; without a checkout the "
                   "upload action cannot compute it and alerts are not tracked across runs")
    return out


def violations(log: Any) -> list[str]:
    """Every way ``log`` breaks code scanning's rules (empty when it is accepted in full)."""
    if not isinstance(log, dict):
        return ["the SARIF log is not an object"]
    out: list[str] = []
    if not isinstance(log.get("$schema"), str):
        out.append("$schema is required")
    if log.get("version") != "2.1.0":
        out.append("version must be 2.1.0")
    runs = log.get("runs")
    if not isinstance(runs, list) or not runs:
        return [*out, "runs is required"]
    if len(runs) > MAX_RUNS:
        out.append(f"more than {MAX_RUNS} runs")
    categories = [((r.get("automationDetails") or {}).get("id")) for r in runs]
    if len([c for c in categories if c]) != len({c for c in categories if c}):
        out.append("two runs share a category (automationDetails.id)")
    for r_i, run in enumerate(runs):
        where = f"runs[{r_i}]"
        driver = ((run.get("tool") or {}).get("driver")) if isinstance(run, dict) else None
        if not isinstance(driver, dict) or not isinstance(driver.get("name"), str):
            out.append(f"{where}: tool.driver.name is required")
            continue
        rules = driver.get("rules", [])
        if len(rules) > MAX_RULES:
            out.append(f"{where}: more than {MAX_RULES} rules")
        for i, rule in enumerate(rules):
            out += rule_violations(rule, f"{where}.tool.driver.rules[{i}]")
        rule_ids = [r.get("id") for r in rules if isinstance(r, dict)]
        if len(rule_ids) != len(set(rule_ids)):
            out.append(f"{where}: rule ids repeat")
        results = run.get("results")
        if not isinstance(results, list):
            out.append(f"{where}: results is required (an empty list when there are none)")
            continue
        if len(results) > MAX_RESULTS:
            out.append(f"{where}: more than {MAX_RESULTS} results")
        for i, result in enumerate(results):
            out += result_violations(result, f"{where}.results[{i}]", rule_ids)
    return out
