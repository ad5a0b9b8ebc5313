"""``verdict-gate explain``: one case per reason of docs/rules.md, each decided by the pipeline's scoring step and
read back from its evidence; the lines name the reason, mark the row that differs first (the check of the verdict
table that decided) and end with the fix and the rule (docs/design.md §9.1)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest
from test_audit_property import BASE, DIGEST, MOVED_DIGEST, OTHER, POOL, _sorted, pipeline_files

from verdict_gate.core.records import ReplayRecord, RunRecord
from verdict_gate.core.signature import set_signature
from verdict_gate.core.verdict import Example
from verdict_gate.report.explain import explain_lines
from verdict_gate.report.rules import RULES
from verdict_gate.run.audit import audit, evidence_of, load

pytestmark = pytest.mark.fast


def _run(status: str = "fail", failures: tuple[int, ...] = (0,), **over: Any) -> RunRecord:
    fs = _sorted([POOL["p0", 7][i] for i in failures]) if status != "pass" else ()
    run = RunRecord(status=status, node="properties/test_p0.py", seed=7, trials=10, hits=10, counterexample=None,
                    exc_type=fs[0].exc_type if fs else None, message=fs[0].message if fs else None, traceback=(),
                    duration_s=0.5, fixture_digest=DIGEST, base_revision=BASE, fixture_mutated=False,
                    signature=set_signature(f.signature for f in fs) if fs else None,
                    signature_parts=dict(fs[0].signature_parts) if len(fs) == 1 else None,
                    isolation={"level": "sandbox", "method": "bwrap", "fences": {"network": True}}, failures=fs)
    return dataclasses.replace(run, **over)


def _try(failures: tuple[int, ...] = (0,), **over: Any) -> ReplayRecord:
    fs = _sorted([POOL["p0", 7][i] for i in failures])
    rec = ReplayRecord(prop_id="p0", status="fail" if fs else "pass",
                       signature=set_signature(f.signature for f in fs) if fs else None,
                       signature_parts=dict(fs[0].signature_parts) if len(fs) == 1 else None, fixture_digest=DIGEST,
                       base_revision=BASE, failures=fs, hits=10)
    return dataclasses.replace(rec, **over)


def _freeze(**over: Any) -> dict[str, Any]:
    f = POOL["p0", 7][0]
    return {"prop_id": "p0", "signature": set_signature([f.signature]),
            "failures": [{"signature": f.signature, "signature_parts": dict(f.signature_parts)}],
            "fixture_digest": DIGEST, "fixture_format": "tree-v2", "base_revision": BASE,
            "reason": "known failure of p0", "first_seen": "2026-11-01", **over}


def gen(*, run: RunRecord | None = None, freeze: dict[str, Any] | None = None, tries: list[ReplayRecord] | None = None,
        moved: bool = False, stale: str = "note") -> dict[str, Any]:
    freezes = [freeze] if freeze else []
    return {"catalog": {"version": 1, "seed": 7, "properties": [{"id": "p0", "oracle": "properties/test_p0.py",
                                                                 "kind": "property", "stale": stale}]},
            "ledger": {"version": 1, "freezes": freezes}, "runs": {"p0": run} if run else {},
            "tries": tries if tries is not None else [_try()] if freezes and not moved else [],
            "moved": ["p0"] if moved else [], "ancestors": {BASE: True, OTHER: False},
            "today": dt.date(2026, 11, 30), "items": 10, "phase_failures": []}


HELD, FAILED = Example("0" * 32, True), Example("0" * 32, False, input={"x": 0}, error="AssertionError: x",
                                                fails="a" * 16)
# reason → (the generated run, the row marked as the first difference; None: nothing differs)
CASES = {
    "held": (gen(run=_run("pass")), None),
    "no_freeze": (gen(run=_run()), "outcome"),
    "frozen": (gen(run=_run(), freeze=_freeze()), None),
    "oracle_moved": (gen(freeze=_freeze(), moved=True), "oracle file"),
    "catalog_drift": (gen(run=_run("pass"), moved=True), "oracle file"),
    "missing_run": (gen(), "run"),
    "signature_mismatch": (gen(run=_run(failures=(1,)), freeze=_freeze()), "failures in the set"),
    "digest_mismatch": (gen(run=_run(), freeze=_freeze(fixture_digest=MOVED_DIGEST)), "fixture digest"),
    "base_mismatch": (gen(run=_run(), freeze=_freeze(base_revision=OTHER)), "base revision"),
    "not_reproduced_on_base": (gen(run=_run(), freeze=_freeze(), tries=[_try(())]), "base replay"),
    "freeze_expired": (gen(run=_run(), freeze=_freeze(expires_on="2026-11-15")), "expires on"),
    "fixture_mutated": (gen(run=_run(fixture_mutated=True)), "fixtures"),
    "timed_out": (gen(run=_run("timeout")), "outcome"),
    "crashed": (gen(run=_run("crash")), "outcome"),
    "unseeded": (gen(run=_run("pass", seed=None)), "seed"),
    "vacuous": (gen(run=_run("pass", hits=0)), "examples that ran"),
    "unfrozen_failure": (gen(run=_run(failures=(0, 1)), freeze=_freeze()), "failures in the set"),
    "new_failing_examples": (gen(run=_run(example_log=(FAILED,)), freeze=_freeze(),
                                 tries=[_try(example_log=(HELD,))]), "examples"),
    "isolation_unavailable": (gen(run=_run("pass", isolation={"level": "process", "method": "process",
                                                              "fences": {}})), "isolation"),
    "freeze_stale": (gen(run=_run("pass"), freeze=_freeze(), stale="fail"), "outcome"),
    # the pack fails before its body on the base too (its base run is in base.sig.json with no freeze)
    "oracle_error": (gen(run=_run(hits=0), tries=[_try(hits=0)]), "examples that ran"),
}


def test_every_reason_of_the_rules_has_a_case() -> None:
    assert set(CASES) == set(RULES) - {"void"}  # a void run scores nothing: explain says so (tests/test_audit.py)


@pytest.mark.parametrize("reason", sorted(CASES))
def test_explain_names_the_first_difference_and_the_fix(reason: str, monkeypatch: pytest.MonkeyPatch) -> None:
    generated, first = CASES[reason]
    files = pipeline_files(generated, monkeypatch)
    if reason != "catalog_drift":  # a run of an edited oracle: the pipeline never has one (so the audit says)
        assert audit(files).ok, [f.line() for f in audit(files).findings]
    ev = evidence_of(load(files))
    assert ev is not None and ev.verdicts["p0"].reason == reason
    lines = explain_lines(ev, "p0")
    assert lines[0].startswith(f"p0: {ev.verdicts['p0'].verdict}, reason {reason} (row {ev.verdicts['p0'].row})")
    marked = [line for line in lines if line.endswith("<- first difference")]
    if first is None:
        assert marked == [], lines
    else:
        assert len(marked) == 1 and marked[0][1:].lstrip().startswith(first), "\n".join(lines)
        assert marked[0].startswith("!")
    assert lines[-2].startswith("fix: ") and len(lines[-2]) > 12
    assert lines[-1].endswith(f"docs/rules.md#{reason}")
    if reason in ("digest_mismatch", "base_mismatch", "not_reproduced_on_base"):  # re-record, if it is the known one
        assert "verdict-gate freeze --rev 222222222222 --pack git:main:oracle --id p0" in lines[-2]
    if reason == "freeze_expired":
        assert "verdict-gate ledger extend" in lines[-2]


def test_the_docs_schemas_and_help_agree_on_the_evidence() -> None:
    """docs/evidence.md, docs/cli.md, docs/design.md, the schemas and --help name the same evidence files, predicate
    type and commands."""
    import io
    import json
    from contextlib import redirect_stdout
    from pathlib import Path

    from verdict_gate.cli import build_parser, main
    from verdict_gate.report.attestation import PREDICATE_TYPE
    from verdict_gate.report.verdicts import FILES, INPUT_FILES

    root = Path(__file__).resolve().parent.parent
    schema = {n: json.loads((root / "schemas" / f"{n}.schema.json").read_text()) for n in ("verdicts", "shard",
                                                                                           "attestation")}
    assert schema["verdicts"]["properties"]["evidence"]["propertyNames"]["enum"] == list(INPUT_FILES)
    assert schema["shard"]["properties"]["evidence"]["propertyNames"]["enum"] == list(INPUT_FILES)
    assert schema["attestation"]["properties"]["predicateType"]["const"] == PREDICATE_TYPE
    section = (root / "docs" / "evidence.md").read_text()
    commands = (root / "docs" / "cli.md").read_text()
    design = (root / "docs" / "design.md").read_text()
    for name in FILES:
        assert f"`{name}`" in section and f"`{name}`" in design, name
    assert PREDICATE_TYPE in section and PREDICATE_TYPE in design
    for command in ("audit", "explain"):
        assert f"| `verdict-gate {command} DIR" in commands
        out = io.StringIO()
        with redirect_stdout(out):
            assert main([command, "--help"]) == 0
        assert "DIR" in out.getvalue() and "exit codes" in out.getvalue()
    assert "audit" in build_parser().format_help() and "explain" in build_parser().format_help()
