"""The Markdown job summary (docs/design.md §9). Pure: it returns text.

GitHub drops a step's whole summary over 1 MiB ("Adding a job summary",
https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#adding-a-job-summary),
so the size cap lives here, once: the report's own summary stays under
:data:`SUMMARY_BUDGET` and says what it cut; the action keeps the whole file under
:data:`SUMMARY_LIMIT` minus :data:`SUMMARY_MARGIN` when it appends its own lines.
"""

from __future__ import annotations

from verdict_gate.core.evidence import Evidence
from verdict_gate.report.rows import artifact_note, cause, counts, ordered
from verdict_gate.report.text import md_cell

SUMMARY_LIMIT = 1024 * 1024  # bytes: GitHub's cap per step; over it the whole summary is dropped
SUMMARY_MARGIN = 64 * 1024  # bytes kept free under the cap (a summary just under it has been seen to vanish)
ACTION_ROOM = 60 * 1024  # bytes left for the action's own lines after the report's summary
SUMMARY_BUDGET = SUMMARY_LIMIT - SUMMARY_MARGIN - ACTION_ROOM  # 900 KiB for the report's summary


def summary_markdown(ev: Evidence, budget: int = SUMMARY_BUDGET) -> str:
    """The job summary: outcome, revisions, pack, notices and the verdict table (worst first).

    Rows that would push the text past ``budget`` bytes (UTF-8) are cut, and a final line
    says how many and where the rest is (``verdicts.json``, ``results.sarif``).
    """
    c = counts(ev)
    head = [
        f"## verdict-gate: **{ev.outcome}**",
        "",
        f"- head `{ev.head_revision[:12]}`, base `{ev.base_revision[:12]}` (merge base of `{md_cell(ev.base_ref)}`)",
        f"- oracle pack `{md_cell(str(ev.pack.get('source', '')))}`"
        + (f" sha256 `{ev.pack['sha256']}`" if ev.pack.get("sha256") else "") + md_cell(artifact_note(ev.pack)),
        f"- {c['pass']} pass · {c['fail']} fail · {c['inconclusive']} inconclusive · policy `{ev.policy}`",
    ]
    if ev.void_reason:
        head.append("- void: " + "<br>".join(md_cell(line.strip()) for line in ev.void_reason.splitlines()))
    if ev.why and ev.outcome != "void":
        head.append(f"- promotion: {md_cell(ev.why)}")
    head += [f"- note: {md_cell(n)}" for n in ev.notices]
    head += ["", "| property | verdict | reason | detail |", "| --- | --- | --- | --- |"]
    text = "\n".join(head) + "\n"
    rows = ordered(ev)
    for i, (pid, v) in enumerate(rows):
        why = md_cell(cause(ev, pid)).replace("`", "'")  # it goes inside a code span
        detail = md_cell(v.detail)[:500] + (f"<br>`{why}`" if why else "")
        row = f"| `{md_cell(pid)}` | {v.verdict} | `{v.reason}` | {detail} |\n"
        tail = (f"\n_{len(rows) - i} more row(s) cut to keep the summary under 1 MiB; "
                "see verdicts.json and results.sarif._\n")
        if len((text + row + tail).encode()) > budget:
            return text + tail
        text += row
    return text
