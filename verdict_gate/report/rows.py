"""What every renderer reads off the evidence: counts, order, the cause and place of a failure. Pure."""

from __future__ import annotations

import json
from typing import Any

from verdict_gate.boundary.fence.policy import FENCES
from verdict_gate.core.evidence import Evidence
from verdict_gate.core.verdict import STOPPED, Example, Verdict
from verdict_gate.report.text import printable

SEVERITY = {"fail": 0, "inconclusive": 1, "pass": 2}


def counts(ev: Evidence) -> dict[str, int]:
    out = {"pass": 0, "fail": 0, "inconclusive": 0}
    for v in ev.verdicts.values():
        out[v.verdict] += 1
    return out


def ordered(ev: Evidence) -> list[tuple[str, Verdict]]:
    """Verdicts worst first (fail, inconclusive, pass), then by id."""
    return sorted(ev.verdicts.items(), key=lambda kv: (SEVERITY[kv[1].verdict], kv[0]))


def signature(ev: Evidence, prop_id: str) -> str | None:
    """The failure signature of ``prop_id``'s candidate run, or None (a pass, or no run)."""
    run = ev.run_of(prop_id)
    return run.signature if run is not None else None


def new_failing_example(ev: Evidence, prop_id: str) -> Example | None:
    """For a ``new_failing_examples`` verdict: the first example the candidate failed (its example log, then
    its fresh log, in draw order) that held on the base replay, or the entry saying a log stopped early;
    ``None`` for any other verdict or when the logs do not show one."""
    verdict = ev.verdicts.get(prop_id)
    run = ev.run_of(prop_id)
    if verdict is None or verdict.reason != "new_failing_examples" or run is None:
        return None
    replays = [r for r in (ev.base_sig.replays if ev.base_sig is not None else ()) if r.prop_id == prop_id]
    held = {e.digest for r in replays for log in (r.example_log, r.fresh_log) for e in (log or ()) if e.held}
    failing = [e for log in (run.example_log, run.fresh_log) for e in (log or ()) if not e.held]
    return next((e for e in failing if e.digest in held), next((e for e in failing if e.digest == STOPPED), None))


def example_text(example: Example) -> str:
    """``input {json}: ExcType: message`` for one failing example (plain text, unprintables escaped)."""
    shown = json.dumps(example.input, sort_keys=True, default=repr) if example.input is not None else "(not kept)"
    return printable(f"input {shown}: {example.error or 'its exception was not kept'}")


def cause(ev: Evidence, prop_id: str, limit: int = 300) -> str:
    """Why the run failed, from its run record: ``ExcType: first message line [counterexample]``,
    or "" when the property passed or has no run. Cut to ``limit`` characters. For ``new_failing_examples``,
    the new failing example's input and exception (not the run's first failure, which a freeze may cover)."""
    run = ev.run_of(prop_id)
    if run is None:
        return ""
    verdict = ev.verdicts.get(prop_id)
    if verdict is not None and verdict.reason == "isolation_unavailable" and \
            run.isolation.get("method") == "unavailable":
        return ""  # the verdict's detail already says why, word for word: the property never ran
    example = new_failing_example(ev, prop_id)
    if example is not None:
        text = "new failing example (held on the base): " + example_text(example)
        return text if len(text) <= limit else text[: limit - 1] + "…"
    if run.status == "pass" or not run.exc_type:
        return ""
    exc = run.exc_type.removeprefix("builtins.")
    message = (run.message or "").strip().splitlines()
    text = printable(f"{exc}: {message[0]}" if message else exc)
    if run.counterexample is not None:
        text += f" [counterexample {json.dumps(run.counterexample, sort_keys=True)}]"
    if len(run.failures) > 1:
        text += f" (+{len(run.failures) - 1} more failure(s))"
    if run.output_tail:  # a lost process explains itself: pytest's own last lines (docs/design.md §8.5)
        tail = [line.strip() for line in run.output_tail.splitlines() if line.strip()][-3:]
        text += " | pytest: " + printable(" | ".join(tail))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def location(ev: Evidence, prop_id: str) -> tuple[str, int]:
    """Repo-relative file and line for a property: the deepest traceback frame inside the
    repository, else the property's oracle file at line 1."""
    run = ev.run_of(prop_id)
    if run is not None and run.traceback:
        return run.traceback[-1].path, run.traceback[-1].line
    prop = ev.properties.get(prop_id)
    root = (ev.pack.get("pack_root") or "oracle")
    return (f"{root}/{prop.oracle}" if prop else f"{root}/catalog.yaml"), 1  # a file, never a directory


def artifact_note(pack: dict[str, Any]) -> str:
    """``, artifact ID of run RUN (SHA on BRANCH)`` for a pack from a GitHub artifact, else ""."""
    art = pack.get("artifact")
    if not art:
        return ""
    return (f", artifact {art['name']} {art['artifact_id']} of run {art['run_id']} "
            f"({str(art.get('head_sha', ''))[:12]} on {art['branch']})")


def _fence_rank(name: str) -> tuple[int, str]:
    return (FENCES.index(name) if name in FENCES else len(FENCES), name)


def isolation(ev: Evidence) -> list[dict[str, Any]]:
    """How the candidate runs were fenced, grouped: one ``{"level", "method", "held", "open", "properties"}``
    per distinct level, method and set of fences (``held``/``open``: fence names; ``properties``: how many
    ran so), most properties first. From ``runs.json``; ``[]`` without runs."""
    groups: dict[tuple[str, str, tuple[str, ...], tuple[str, ...]], int] = {}
    runs = ev.runs.runs if ev.runs is not None else {}
    for run in runs.values():
        # In the policy's fence order, however the record was read (runs.json is written with sorted keys).
        fences = dict(sorted((run.isolation.get("fences") or {}).items(), key=lambda kv: _fence_rank(kv[0])))
        key = (str(run.isolation.get("level", "")), str(run.isolation.get("method", "")),
               tuple(f for f, ok in fences.items() if ok), tuple(f for f, ok in fences.items() if not ok))
        groups[key] = groups.get(key, 0) + 1
    return [{"level": level, "method": method, "held": list(held), "open": list(open_), "properties": n}
            for (level, method, held, open_), n in sorted(groups.items(), key=lambda kv: (-kv[1], kv[0]))]


def isolation_line(group: dict[str, Any]) -> str:
    """``3 properties at sandbox via landlock: network, filesystem, processes, limits held`` (plain text); at
    ``none`` and ``process`` it says those levels are for candidates the user trusts."""
    n = group["properties"]
    if group["method"] == "unavailable":  # nothing ran: there is no method, and no fence to speak of
        return (f"{n} propert{'y' if n == 1 else 'ies'} not run: isolation {group['level']} is unavailable on this "
                "host (the verdicts say why; `verdict-gate doctor` shows what it can give)")
    held = f"{', '.join(group['held'])} held" if group["held"] else "no fence held"
    open_ = f"; not held: {', '.join(group['open'])}" if group["open"] else ""
    # docs/isolation.md: at these levels the candidate's code could write whatever the gate's user can,
    # this run's results and what later runs load (the gate's bytecode cache and install) included.
    trusted = ("; a level for candidates you trust: its code could write whatever the gate's user can"
               if group["level"] in ("none", "process") else "")
    return f"{n} propert{'y' if n == 1 else 'ies'} at {group['level']} via {group['method']}: {held}{open_}{trusted}"
