"""A Hypothesis property over the decision's inputs: on every generated run, ``verdict-gate audit`` agrees with the
pipeline (docs/design.md §9.1).

Each example is a catalog, a ledger, the candidate's runs, the base replay's tries, the diff's edited properties,
the ancestry of each freeze's base revision and a date. The pipeline's own scoring step
(:func:`verdict_gate.run.pipeline.score_run`, git's ancestry answered from the generated map) decides, the report
renders every evidence file, and the audit re-checks them: it finds nothing. Then the decision is forged
consistently (one verdict changed, the counts, outcome and statement made to agree, every digest refit), and a
multi-failure set is reordered: the audit finds each.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_audit import _forge_verdict, refit

from verdict_gate.core.diffsplit import Split
from verdict_gate.core.evidence import Evidence
from verdict_gate.core.records import (
    BaseSigRecord,
    DiffRecord,
    FailureRecord,
    FixtureRecord,
    ReplayRecord,
    RunRecord,
    RunsRecord,
)
from verdict_gate.core.signature import make_signature, set_signature
from verdict_gate.core.verdict import Example
from verdict_gate.host import git
from verdict_gate.host.files import parse_catalog, parse_ledger
from verdict_gate.pack.verify import Pack
from verdict_gate.report import render_all
from verdict_gate.report.verdicts import dumps
from verdict_gate.run import pipeline
from verdict_gate.run.audit import audit
from verdict_gate.run.execute import Execution

pytestmark = pytest.mark.fast

HEAD, BASE, OLD, OTHER = "1" * 40, "2" * 40, "3" * 40, "4" * 40  # OLD: an ancestor of BASE; OTHER: not
DIGEST, MOVED_DIGEST = "d" * 64, "e" * 64
IDS = ("p0", "p1", "p2", "p3")


def _failure(pid: str, n: int, seed: int | None = 7) -> FailureRecord:
    sig = make_signature(prop_id=pid, node=f"properties/test_{pid}.py::test_{n}", seed=seed,
                         exc_type="builtins.AssertionError", message=f"wrong {n}", counterexample={"x": n})
    return FailureRecord(node=sig.parts["node"], exc_type="builtins.AssertionError", message=f"wrong {n}",
                         counterexample={"x": n}, traceback=(), signature=sig.value, signature_parts=dict(sig.parts))


# (property, seed) → its three failures: a failure is signed with the seed its run had (none for an example)
POOL = {(pid, seed): [_failure(pid, n, seed) for n in range(3)] for pid in IDS for seed in (7, None)}
failure_sets = st.lists(st.integers(0, 2), min_size=1, max_size=3, unique=True)
RARELY = st.sampled_from([False] * 11 + [True])
SOMETIMES = st.sampled_from([False] * 3 + [True])


@st.composite
def example_logs(draw: st.DrawFn) -> tuple[Example, ...] | None:
    if draw(st.booleans()):
        return None
    out = []
    for i in draw(st.lists(st.integers(0, 3), max_size=4, unique=True)):
        held = draw(st.booleans())
        out.append(Example(f"{i:032x}", held) if held else
                   Example(f"{i:032x}", False, input={"x": i}, error="AssertionError: wrong",
                           fails=draw(st.sampled_from(["a" * 16, "b" * 16]))))
    return tuple(out)


def _sorted(failures: list[FailureRecord]) -> tuple[FailureRecord, ...]:
    return tuple(sorted({f.signature: f for f in failures}.values(), key=lambda f: f.signature))


@st.composite
def run_records(draw: st.DrawFn, pid: str, kind: str) -> RunRecord:
    status = draw(st.sampled_from(["fail", "pass", "fail", "pass", "fail", "timeout", "crash", "skipped"]))
    seed = draw(st.sampled_from([7] * 7 + [None])) if kind == "property" else None
    failures = _sorted([POOL[pid, seed][i] for i in draw(failure_sets)]) if status in ("fail", "timeout", "crash") \
        else ()
    level = draw(st.sampled_from(["sandbox"] * 7 + ["process"]))
    return RunRecord(
        status=status, node=f"properties/test_{pid}.py", seed=seed, trials=10,
        hits=draw(st.sampled_from([10] * 5 + [0, None])), counterexample=None,
        exc_type=failures[0].exc_type if failures else None, message=failures[0].message if failures else None,
        traceback=(), duration_s=0.5, fixture_digest=DIGEST, base_revision=BASE,
        fixture_mutated=draw(RARELY),
        signature=set_signature(f.signature for f in failures) if failures else None,
        signature_parts=dict(failures[0].signature_parts) if len(failures) == 1 else None,
        isolation={"level": level, "method": "bwrap" if level == "sandbox" else "process",
                   "fences": {"network": True}},
        failures=failures, example_log=draw(example_logs()))


@st.composite
def freezes(draw: st.DrawFn, pid: str, seed: int | None) -> dict[str, Any]:
    failures = _sorted([POOL[pid, seed][i] for i in draw(failure_sets)])
    flaky = draw(SOMETIMES)
    doc: dict[str, Any] = {
        "prop_id": pid, "signature": set_signature(f.signature for f in failures),
        "failures": [{"signature": f.signature, "signature_parts": dict(f.signature_parts)} for f in failures],
        "fixture_digest": draw(st.sampled_from([DIGEST] * 5 + [MOVED_DIGEST])), "fixture_format": "tree-v2",
        "base_revision": draw(st.sampled_from([BASE, OLD, BASE, OLD, OTHER])), "reason": f"known failure of {pid}",
        "first_seen": "2026-11-01", "kind": "flaky" if flaky else "deterministic"}
    if flaky:
        doc["rate"] = {"failed": 2, "replays": 5}
    if draw(SOMETIMES):
        doc["expires_on"] = draw(st.sampled_from(["2027-01-01", "2026-11-15"]))
    return doc


@st.composite
def gated_runs(draw: st.DrawFn) -> dict[str, Any]:
    ids = list(IDS[: draw(st.integers(1, len(IDS)))])
    kinds = {pid: draw(st.sampled_from(["property", "example"])) for pid in ids}
    moved = [pid for pid in ids if draw(RARELY)]
    frozen = [pid for pid in ids if draw(st.booleans())]
    seeds = {pid: 7 if kinds[pid] == "property" else None for pid in ids}  # the catalog's, as freezes record
    records = [draw(freezes(pid, seeds[pid])) for pid in frozen for _ in range(draw(st.integers(1, 2)))]
    unique = {(f["signature"], f["fixture_digest"], f["base_revision"]): f for f in records}  # one per identity
    ledger = {"version": 1, "freezes": list(unique.values())}
    runs = {pid: draw(run_records(pid, kinds[pid])) for pid in ids if pid not in moved and not draw(RARELY)}
    tries = []
    for pid in frozen:
        if pid in moved:
            continue
        for n in range(1, draw(st.integers(1, 3)) + 1):
            failures = _sorted([POOL[pid, seeds[pid]][i] for i in draw(failure_sets)]) if not draw(SOMETIMES) else ()
            tries.append(ReplayRecord(
                prop_id=pid, status="fail" if failures else "pass",
                signature=set_signature(f.signature for f in failures) if failures else None,
                signature_parts=dict(failures[0].signature_parts) if len(failures) == 1 else None,
                fixture_digest=DIGEST, base_revision=BASE, failures=failures, hits=10,
                example_log=draw(example_logs()), try_no=n))
    catalog = {"version": 1, "seed": 7, "policy": draw(st.sampled_from(["lenient", "strict"])),
               "freeze_base": draw(st.sampled_from(["reproduced", "exact"])),
               "properties": [{"id": pid, "oracle": f"properties/test_{pid}.py", "kind": kinds[pid],
                               "stale": draw(st.sampled_from(["note", "fail"]))} for pid in ids]}
    if draw(st.booleans()):
        catalog["claimed"] = sorted(draw(st.sets(st.sampled_from(ids), min_size=1)), key=ids.index)
    return {"catalog": catalog, "ledger": ledger, "runs": runs, "tries": tries, "moved": moved,
            "ancestors": {BASE: True, OLD: True, OTHER: False},
            "today": draw(st.sampled_from([dt.date(2026, 11, 30), dt.date(2026, 11, 10)])),
            "items": draw(st.integers(0, 20)), "phase_failures": draw(st.sampled_from([[], ["collection over its "
                                                                                             "bound"]]))}


def pipeline_files(gen: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """The evidence the pipeline writes for ``gen``: its scoring step decides, the report renders."""
    catalog_text = json.dumps(gen["catalog"], indent=2) + "\n"  # YAML reads JSON
    ledger_text = json.dumps(gen["ledger"], indent=2) + "\n"
    catalog = parse_catalog(catalog_text, "catalog.yaml")
    ledger = parse_ledger(ledger_text, "freeze_ledger.json", known_ids=[p.id for p in catalog.properties])
    manifest = {"catalog.yaml": hashlib.sha256(catalog_text.encode()).hexdigest(),
                "freeze_ledger.json": hashlib.sha256(ledger_text.encode()).hexdigest(),
                **{f"properties/test_{p.id}.py": "0" * 64 for p in catalog.properties}}
    manifest_text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    sha = hashlib.sha256(manifest_text.encode()).hexdigest()
    pack = Pack(dir=Path("/nonexistent"), source="git:main:oracle", sha256=sha, catalog=catalog, ledger=ledger,
                manifest=manifest, texts={"catalog.yaml": catalog_text, "freeze_ledger.json": ledger_text,
                                          "manifest.sha256": manifest_text})
    ev = Evidence(repo="/nonexistent", head_revision=HEAD, base_ref="main", base_revision=BASE,
                  pack={"source": pack.source, "kind": "git", "sha256": sha, "files": len(manifest),
                        "pack_root": "oracle"},
                  policy=catalog.policy, freeze_base=catalog.freeze_base, claimed=catalog.claimed,
                  properties=catalog.by_id(), oracle_files=dict(pack.texts), run_id="run-1")
    ev.fixture = FixtureRecord(format="tree-v2", digest=DIGEST, revision=HEAD, repo_roots=(), files=0, bytes=0)
    moved = tuple(gen["moved"])
    ev.diff = DiffRecord(base_revision=BASE, head_revision=HEAD,
                         buckets={"oracle": tuple(sorted(f"oracle/properties/test_{pid}.py" for pid in moved)),
                                  "control": (), "fixtures": (), "src": (), "generated": (), "other": ()},
                         oracle_edited=moved, control_edits=())
    ev.runs = RunsRecord(revision=HEAD, base_revision=BASE, fixture_digest=DIGEST,
                         environment={"PYTHONHASHSEED": "0", "TZ": "UTC", "python": "3", "pytest": "8",
                                      "hypothesis": "6"}, runs=gen["runs"], run_id="run-1")
    ev.base_sig = BaseSigRecord(base_revision=BASE, fixture_digest=DIGEST, replays=tuple(gen["tries"]))
    done = Execution(records=dict(gen["runs"]), fixture=ev.fixture, items=gen["items"], notices=[],
                     phase_failures=list(gen["phase_failures"]))
    monkeypatch.setattr(git, "is_ancestor", lambda _repo, rev, base: gen["ancestors"][rev])
    pipeline.score_run(ev, pack, Split(changes=(), oracle_edited=moved), done, gen["today"])
    return {name: text.encode() for name, text in render_all(ev).items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(gen=gated_runs())
def test_audit_agrees_with_the_pipeline_on_every_generated_run(gen: dict[str, Any],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    files = pipeline_files(gen, monkeypatch)
    result = audit(files)
    assert result.ok, [f.line() for f in result.findings]
    verdicts = json.loads(files["verdicts.json"])["verdicts"]
    for pid, v in verdicts.items():  # any other verdict, made consistent: only the re-derivation can tell
        for verdict, reason in (("pass", "held"), ("inconclusive", "frozen"), ("fail", "no_freeze")):
            if (verdict, reason) != (v["verdict"], v["reason"]):
                assert not audit(_forge_verdict(files, pid, verdict, reason)).ok, (pid, verdict, reason)
    runs = json.loads(files["runs.json"])
    for pid, run in runs["runs"].items():
        if len(run["failures"]) > 1:
            run_doc = json.loads(files["runs.json"])
            run_doc["runs"][pid]["failures"].reverse()
            assert not audit(refit({**files, "runs.json": dumps(run_doc).encode()})).ok, pid
