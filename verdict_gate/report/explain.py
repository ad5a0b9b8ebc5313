"""``verdict-gate explain DIR ID``: why one property got its verdict, in two columns (docs/design.md §9.1). Pure.

Each freeze of the property in the ledger as scored is set against this run, row by row in the order the
verdict table checks them (the oracle edit, the run, the isolation, the fixtures, the seed and hits, each
failure of the set with each signature part, the fixture digest, the base revision, the base replay, the
expiry, the examples that held on the base): ``!`` marks a row that differs, ``<- first difference`` the
first one, as diffoscope and ``bazel-execlog-cmp`` show differences side by side. The last line is the fix.
The job summary shows the same lines for every property that did not pass.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from verdict_gate.core.evidence import Evidence
from verdict_gate.core.signature import PART_NAMES, differing_parts
from verdict_gate.core.verdict import ISOLATION_RANK, FailureRef, Freeze, shows_within
from verdict_gate.report.rows import new_failing_example
from verdict_gate.report.rules import RULES, help_uri
from verdict_gate.report.text import printable

LABEL, LEFT = 24, 36  # column widths: the row's label, the freeze's column; this run's column follows
Row = tuple[str, str, str, bool]  # label, the freeze's value, this run's value, whether they differ
MAX_FAILURES = 10


def _cut(value: Any, width: int) -> str:
    text = printable(value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str))
    return text if len(text) <= width else text[: width - 1] + "…"


def _short(digest: str | None) -> str:
    return "—" if not digest else (digest[:19] + "…" if digest.startswith("sha256:") else digest[:12])


def table(rows: Sequence[Row], left: str, right: str = "this run") -> list[str]:
    """The rows as two aligned columns under the headers ``left`` and ``right``; ``!`` on each row that
    differs, ``<- first difference`` after the first one."""
    lines = [f"  {'':<{LABEL}}{_cut(left, LEFT - 2):<{LEFT}}{right}"]
    first = True
    for label, a, b, differs in rows:
        mark = "!" if differs else " "
        tail = "   <- first difference" if differs and first else ""
        first = first and not differs
        lines.append(f"{mark} {_cut(label, LABEL - 2):<{LABEL}}{_cut(a, LEFT - 2):<{LEFT}}{_cut(b, 60)}{tail}".rstrip())
    return lines


def _run_rows(ev: Evidence, pid: str, frozen: bool) -> list[Row]:
    """The rows that concern the run alone, in the verdict table's order: the oracle edit (V4, V5), a result (V6),
    the isolation (V17), the fixtures (V12), the seed and the examples that ran (V14), then the outcome: a pass,
    or with a freeze (``frozen``) a failure for it to forgive."""
    moved = ev.diff is not None and pid in ev.diff.oracle_edited
    prop, run = ev.properties.get(pid), ev.run_of(pid)
    path = f"{ev.pack.get('pack_root') or 'oracle'}/{prop.oracle}" if prop else "(its oracle file)"
    rows: list[Row] = [("oracle file", "as reviewed", f"edited in the diff: {path}" if moved else "unchanged", moved)]
    if moved or prop is None:
        return rows
    rows.append(("run", "a result", "reported" if run else "no result (the runner reported nothing)", run is None))
    if run is None:
        return rows
    level, method = str(run.isolation.get("level", "none")), str(run.isolation.get("method", "unknown"))
    low = method == "unavailable" or ISOLATION_RANK.get(level, -1) < ISOLATION_RANK.get(prop.isolation, 2)
    got = f"{level} via {method}" + (f": {run.isolation.get('why')}" if run.isolation.get("why") else "")
    rows.append(("isolation", f"{prop.isolation} (the catalog)", got, low))
    if run.boundary:
        rows.append(("boundary", "every value crosses", f"{len(run.boundary)} limit(s): {run.boundary[0][0]}", True))
    mutated = run.fixture_mutated and not prop.mutates_fixture
    rows.append(("fixtures", "unchanged" if not prop.mutates_fixture else "may change (mutates_fixture)",
                 "changed while it ran" if run.fixture_mutated else "unchanged", mutated))
    if prop.kind == "property":
        rows.append(("seed", str(prop.seed), str(run.seed) if run.seed is not None else "none (unseeded)",
                     run.seed is None))
    rows.append(("examples that ran", "at least one", "unknown" if run.hits is None else str(run.hits),
                 run.hits == 0))
    want = "fail (a failure the freeze names)" if frozen else "pass"
    rows.append(("outcome", want, run.status, run.status != ("fail" if frozen else "pass")))
    return rows


def _pairs(frozen: Sequence[FailureRef], ran: Sequence[FailureRef]) -> list[tuple[FailureRef | None,
                                                                                   FailureRef | None]]:
    """Each failure of the run beside the frozen failure with its signature, else the nearest one (fewest
    differing parts); then each frozen failure the run does not show."""
    out: list[tuple[FailureRef | None, FailureRef | None]] = []
    for r in ran:
        same = next((f for f in frozen if f.signature == r.signature), None)
        near = same or min(frozen, key=lambda f: len(differing_parts(f.parts, r.parts)), default=None)
        out.append((near, r))
    shown = {r.signature for r in ran}
    out += [(f, None) for f in frozen if f.signature not in shown]
    return out


def _failure_rows(freeze: Freeze | None, ran: Sequence[FailureRef]) -> list[Row]:
    frozen = freeze.failure_set() if freeze is not None else ()
    rows: list[Row] = [("failures in the set", str(len(frozen)) if freeze else "—", str(len(ran)),
                        {f.signature for f in ran} - {f.signature for f in frozen} != set())]
    for i, (f, r) in enumerate(_pairs(frozen, ran)[:MAX_FAILURES], 1):
        outside = r is not None and r.signature not in {x.signature for x in frozen}
        rows.append((f"failure {i}", _short(f.signature) if f else "—",
                     _short(r.signature) if r else "not shown (fixed, or a flake that did not show)", outside))
        names = [n for n in PART_NAMES if (f and n in f.parts) or (r and n in r.parts)]
        for name in names:
            a = f.parts.get(name) if f else None
            b = r.parts.get(name) if r else None
            rows.append((f"  {name}", "—" if f is None else _cut(a, LEFT - 2), "—" if r is None else _cut(b, 60),
                         f is not None and r is not None and a != b))
    return rows


def _freeze_rows(ev: Evidence, pid: str, freeze: Freeze) -> list[Row]:
    """The freeze's own checks against this run: the fixture digest, the base revision, the base replay, the
    expiry (docs/design.md §3, V8–V11)."""
    run = ev.run_of(pid)
    base = ev.base_revision
    digest = run.fixture_digest if run else ""
    exact = ev.freeze_base == "exact"
    ancestor = freeze.base_revision == base or (not exact and ev.ancestors.get(freeze.base_revision, False))
    relation = ("equal" if freeze.base_revision == base else
                ("the freeze's is not equal (freeze_base: exact)" if exact else
                 "the freeze's is an ancestor" if ancestor else "the freeze's is not an ancestor"))
    tries = [r.base_sig() for r in (ev.base_sig.replays if ev.base_sig else ()) if r.prop_id == pid
             and r.base_revision == base and r.fixture_digest == freeze.fixture_digest]
    names = freeze.names()
    if freeze.flaky:
        reproduced = shows_within(freeze, tries)
    else:
        seen = set().union(*[t.failure_set() for t in tries]) if tries else set()
        reproduced = bool(tries) and names <= seen
    shown = "; ".join(sorted({("passed" if not t.failure_set() else "the frozen set" if t.failure_set() <= names
                               else "other failures") for t in tries})) or "no try under this fixture digest"
    expired = freeze.expires_on is not None and ev.today is not None and freeze.expires_on < ev.today
    return [
        ("fixture digest", _short(freeze.fixture_digest), _short(digest), freeze.fixture_digest != digest),
        ("base revision", _short(freeze.base_revision), f"{_short(base)} ({relation})", not ancestor),
        ("base replay", "reproduces the frozen set", f"{len(tries)} tr{'y' if len(tries) == 1 else 'ies'} on "
         f"{_short(base)}: {shown}", not reproduced),
        ("expires on", freeze.expires_on.isoformat() if freeze.expires_on else "never",
         f"today {ev.today.isoformat()}" if ev.today else "—", expired),
        ("kind", freeze.kind_label(), "", False),
    ]


def _example_row(ev: Evidence, pid: str) -> list[Row]:
    found = new_failing_example(ev, pid)
    if found is None:
        return []
    return [("examples", "each one that held on the base holds", f"held on the base, fails now: "
             f"{json.dumps(found.input, sort_keys=True, default=repr)}", True)]


def fix(ev: Evidence, pid: str) -> str:
    """The fix for ``pid``'s verdict, with the command to run where there is one."""
    verdict = ev.verdicts[pid]
    freezes = ev.ledger.for_id(pid) if ev.ledger is not None else ()
    root = ev.pack.get("pack_root") or "oracle"
    freeze = (f"verdict-gate freeze --rev {ev.base_revision[:12]} --pack {shlex.quote(str(ev.pack.get('source')))} "
              f"--id {pid} --reason \"…\" --ledger {root}/freeze_ledger.json")
    ids = ", ".join(f.id for f in freezes[:3])
    if verdict.reason in ("digest_mismatch", "base_mismatch") and freezes:
        return (f"if the failure is the known one, reproduce it on this base and re-record the freeze: `{freeze}` "
                f"(then remove the old one: verdict-gate ledger remove {freezes[0].id})")
    if verdict.reason == "not_reproduced_on_base":
        return (f"the base did not show the failure, so it is the patch's: fix it. If the property is flaky on the "
                f"base too, record the freeze again from several replays: `{freeze}`")
    if verdict.reason == "freeze_expired" and freezes:
        return f"fix the failure, or review the freeze and extend it: verdict-gate ledger extend {ids} " \
               "--expires-on YYYY-MM-DD"
    if verdict.reason in ("signature_mismatch", "unfrozen_failure", "no_freeze"):
        return f"fix the failure; if it is a known failure of the base too, freeze it after review: `{freeze}`"
    if verdict.reason == "frozen":
        return f"nothing to do for this patch; fix the known failure, then remove the freeze ({ids}) " \
               "through the oracle's review path"
    if verdict.reason == "held":
        return "nothing to do" + (f"; the freeze {ids} is stale: verdict-gate ledger remove it through the "
                                  "oracle's review path" if "freeze_stale" in verdict.notes else "")
    return RULES[verdict.reason].fix


def explain_lines(ev: Evidence, pid: str) -> list[str]:
    """Why ``pid`` got its verdict: the headline, one two-column table per freeze of it (or the run alone when it
    has none), and the fix. ``ev`` is a scored run (its verdicts, ledger, ancestry and date set)."""
    verdict = ev.verdicts[pid]
    run = ev.run_of(pid)
    lines = [f"{pid}: {verdict.verdict}, reason {verdict.reason} (row {verdict.row}): {printable(verdict.detail)}"]
    freezes = ev.ledger.for_id(pid) if ev.ledger is not None else ()
    ran = run.run_result(ev.properties[pid]).failure_set() if run and pid in ev.properties else ()
    head = _run_rows(ev, pid, bool(freezes))
    if not freezes:
        lines.append("the ledger has no freeze of this property: this run alone, against what a pass needs")
        lines += table(head + (_failure_rows(None, ran) if ran else []) + _example_row(ev, pid), "a pass needs")
    for freeze in freezes:
        lines.append(f"the freeze {freeze.id} of the ledger ({freeze.kind_label()}, first seen "
                     f"{freeze.first_seen.isoformat()}) against this run:")
        stop = any(label in ("oracle file", "run") and differs for label, _a, _b, differs in head)
        rows = head if stop else head + _failure_rows(freeze, ran) + _freeze_rows(ev, pid, freeze) \
            + _example_row(ev, pid)
        lines += table(rows, f"freeze {freeze.id}")
    lines.append(f"fix: {fix(ev, pid)}")
    lines.append(f"rule: {help_uri(verdict.reason)}")
    return lines


def explain_text(ev: Evidence, pid: str) -> str:
    return "\n".join(explain_lines(ev, pid)) + "\n"
