"""The verdict table for a terminal: fixed columns, no colour (docs/design.md §9). Pure."""

from __future__ import annotations

from verdict_gate.core.evidence import Evidence
from verdict_gate.report.rows import artifact_note, cause, counts, isolation, isolation_line, ordered


def terminal_table(ev: Evidence) -> str:
    """The verdict table for a terminal: fixed columns, no colour."""
    lines = [f"outcome: {ev.outcome}",
             f"head {ev.head_revision[:12]}  base {ev.base_revision[:12]}  pack {ev.pack.get('source', '')}"
             + (f"  sha256 {ev.pack['sha256'][:16]}…" if ev.pack.get("sha256") else "") + artifact_note(ev.pack)]
    if ev.void_reason:
        lines.append(f"void: {ev.void_reason}")
    lines += [f"isolation: {isolation_line(g)}" for g in isolation(ev)]
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
