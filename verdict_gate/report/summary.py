"""The Markdown job summary (docs/design.md §9). Pure: it returns text.

GitHub drops a step's whole summary over 1 MiB ("Adding a job summary",
https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#adding-a-job-summary),
so the size cap lives here, once: the report's own summary stays under
:data:`SUMMARY_BUDGET` and says what it cut; the action keeps the whole file under
:data:`SUMMARY_LIMIT` minus :data:`SUMMARY_MARGIN` when it appends its own lines.
"""

from __future__ import annotations

import html
import json
import re

from verdict_gate.core.evidence import Evidence
from verdict_gate.core.verdict import Verdict
from verdict_gate.report.explain import explain_lines
from verdict_gate.report.rows import (
    artifact_note,
    cause,
    counts,
    isolation,
    isolation_line,
    new_failing_example,
    ordered,
)
from verdict_gate.report.rules import RULES
from verdict_gate.report.text import md_cell, md_code, printable

SUMMARY_LIMIT = 1024 * 1024  # bytes: GitHub's cap per step; over it the whole summary is dropped
SUMMARY_MARGIN = 64 * 1024  # bytes kept free under the cap (a summary just under it has been seen to vanish)
ACTION_ROOM = 60 * 1024  # bytes left for the action's own lines after the report's summary
SUMMARY_BUDGET = SUMMARY_LIMIT - SUMMARY_MARGIN - ACTION_ROOM  # 900 KiB for the report's summary


def _base_label(ev: Evidence) -> str:
    """``ref (merge base abc123456789)``: the ref as the user wrote it, a commit id shortened."""
    ref = ev.base_ref or ""
    shown = ref[:12] if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", ref) else ref
    return f"`{md_cell(shown).replace('`', chr(39))}` (merge base `{ev.base_revision[:12]}`)"


def _fence(text: str) -> str:
    """``text`` in a fenced code block no line of it can close."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text}\n{fence}"


def _details(ev: Evidence, pid: str, v: Verdict, limit: int = 4000) -> str:
    """A collapsible block with the failed run's exception, message, counterexample and traceback."""
    run = ev.run_of(pid)
    parts = [f"**{v.verdict}** (`{v.reason}`, row {v.row}): {md_code(v.detail[:1000])}"]
    new = new_failing_example(ev, pid)
    if new is not None:
        shown = json.dumps(new.input, sort_keys=True, default=repr) if new.input is not None else "(not kept)"
        parts.append("**new failing example** (it held on the base revision and fails on the candidate)\n\n"
                     + _fence(printable_block(shown)[:limit]))
        parts.append("**its failure**\n\n" + _fence(printable_block(new.error or "(its exception was not kept)")))
        if run is not None and run.failed:
            parts.append("The run's first failure, below, is the one the freeze names; the example above is new.")
    if run is not None and run.failed:
        if run.exc_type:
            parts.append(f"**exception** `{md_cell(run.exc_type.removeprefix('builtins.'))}`"
                         + (f" · status `{run.status}`" if run.status != "fail" else ""))
        if run.message:
            parts.append(("**crash output**" if run.status == "crash" else "**message**") + "\n\n"
                         + _fence(printable_block(run.message)[:limit]))
        if run.counterexample is not None:
            example = json.dumps(run.counterexample, sort_keys=True)
            if len(example) > 100:
                example = json.dumps(run.counterexample, sort_keys=True, indent=2)
            parts.append("**counterexample** (shrunk by Hypothesis)\n\n" + _fence(printable_block(example)[:limit]))
        if run.traceback:
            frames = "\n".join(f"{f.path}:{f.line} in {f.function}" for f in run.traceback[-10:])
            parts.append("**traceback** (repository frames, innermost last)\n\n" + _fence(printable_block(frames)))
        if run.seed is not None:
            parts.append(f"seed `{run.seed}`" + (f" · {run.trials} examples tried" if run.trials is not None else ""))
    # The same lines as `verdict-gate explain DIR ID`: the freeze against this run, the first difference, the fix.
    parts.append("**why** (`verdict-gate explain` on the evidence shows the same)\n\n"
                 + _fence(printable_block("\n".join(explain_lines(ev, pid)))[:limit * 4]))
    body = "\n\n".join(parts)
    title = f"<code>{html.escape(pid)}</code>: {v.verdict} ({v.reason})"
    return f"<details><summary>{title}</summary>\n\n{body}\n\n</details>\n"


def printable_block(text: str) -> str:
    """Multi-line text with control characters other than newline and tab shown escaped."""
    return "\n".join(printable(line) for line in text.splitlines())


def summary_markdown(ev: Evidence, budget: int = SUMMARY_BUDGET) -> str:
    """The job summary: outcome, what happened, revisions, pack, notices, then the verdict table
    (failures first) and a collapsible ``<details>`` block per failed or inconclusive property.

    A void run says why nothing was scored and what to do, with no empty table; a run where no
    property produced a result says so. Rows and details that would push the text past
    ``budget`` bytes (UTF-8) are cut, and a final line says how many and where the rest is
    (``verdicts.json``, ``results.sarif``).
    """
    c = counts(ev)
    pack = (f"`{md_cell(str(ev.pack.get('source', '')))}`"
            + (f" sha256 `{ev.pack['sha256']}`" if ev.pack.get("sha256") else "")
            + md_cell(artifact_note(ev.pack)))
    head = [f"## verdict-gate: **{ev.outcome}**", ""]
    if ev.outcome == "void":
        head += ["**Nothing was scored:** the oracle cannot be trusted for this run.", "",
                 _fence(printable_block(ev.void_reason or "no reason recorded")), "",
                 f"**What to do:** {md_cell(RULES['void'].fix)}", ""]
    elif not ev.verdicts:
        head += ["**No property produced a result**, so nothing shows that the claimed properties hold.", ""]
    elif ev.why:
        head += [f"**{md_cell(ev.why)}**", ""]
    head += [f"- head `{ev.head_revision[:12]}` · base {_base_label(ev)}", f"- oracle pack {pack}"]
    if ev.verdicts:
        head.append(f"- {c['fail']} fail · {c['inconclusive']} inconclusive · {c['pass']} pass · "
                    f"policy `{ev.policy}`")
    head += [f"- isolation: {md_cell(isolation_line(g))}" for g in isolation(ev)]
    head += [f"- note: {md_code(n)}" for n in ev.notices]  # notes quote candidate text: never rendered
    text = "\n".join(head) + "\n"
    if not ev.verdicts:
        return text
    text += "\n| property | verdict | reason | detail |\n| --- | --- | --- | --- |\n"
    rows = ordered(ev)
    tail = "\n_{n} more row(s) cut to keep the summary under 1 MiB; see verdicts.json and results.sarif._\n"
    for i, (pid, v) in enumerate(rows):
        why = cause(ev, pid)
        detail = md_code(v.detail[:500], table=True) + (f"<br>{md_code(why, table=True)}" if why else "")
        row = f"| `{md_cell(pid)}` | {v.verdict} | `{v.reason}` | {detail} |\n"
        if len((text + row + tail.format(n=len(rows) - i)).encode()) > budget:
            return text + tail.format(n=len(rows) - i)
        text += row
    failed = [(pid, v) for pid, v in rows if v.verdict != "pass"]
    if failed:
        text += "\n### Failures\n\n"
    for i, (pid, v) in enumerate(failed):
        block = _details(ev, pid, v)
        cut = f"\n_details of {len(failed) - i} propert(ies) cut to keep the summary under 1 MiB; see runs.json._\n"
        if len((text + block + cut).encode()) > budget:
            return text + cut
        text += block
    return text
