"""The Hypothesis feature matrix (issue 42, docs/design.md §8.3): every entry point of Hypothesis a pack may use
runs under the gate as under plain pytest, at isolation ``sandbox`` and ``none``, and is a seeded trial.

The pack (tests/hypothesis_matrix/properties) has one file per entry point, each with a passing test (``*_ok``)
and a failing one (``*_bad``: the candidate's known bug, wrong on a 3); every test is a property at each level.
One base repository: its failing properties are replayed on the base and frozen with `verdict-gate freeze`.
Then two real `verdict-gate run`s:

- an honest patch: each node ends as plain pytest ends it on the same source (the passing ones pass, the failing
  ones fail), every property records its seed, trials and fresh examples, each failure carries its shrunk
  counterexample (a state machine's: its steps), the base replay reproduces it and the freeze forgives it;
- a second bug (also wrong on 8 and 9, which shrink to nothing smaller than the 3): no freeze forgives it, and
  where its failure prints the same signature as the frozen one, the differential check (the example logs of
  the base and the candidate) is what says so.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from fidelity import harness

from conftest import cli, commit_all, git, validate_evidence

MATRIX = Path(__file__).resolve().parent / "hypothesis_matrix"
# Entry point → (property file, the passing test's node, the failing test's node).
ENTRIES = {
    "given": ("test_given.py", "test_ok", "test_bad"),  # @given, @example, @settings
    "assume": ("test_assume.py", "test_ok", "test_bad"),  # assume, reject
    "target": ("test_target.py", "test_ok", "test_bad"),  # target, note, event
    "data": ("test_data.py", "test_ok", "test_bad"),  # st.data, data.draw
    "composite": ("test_composite.py", "test_ok", "test_bad"),
    "builds": ("test_builds.py", "test_ok", "test_bad"),
    "recursive": ("test_recursive.py", "test_ok", "test_bad"),
    "from_type": ("test_from_type.py", "test_ok", "test_bad"),
    "deferred": ("test_deferred.py", "test_ok", "test_bad"),
    "machine": ("test_machine.py", "TestOk", "TestBad"),  # RuleBasedStateMachine.TestCase
    "machine_run": ("test_machine_run.py", "test_ok", "test_bad"),  # run_state_machine_as_test
    "find": ("test_find.py", "test_ok", "test_bad"),
    # Not one of the entry points, but the numbers a drawn Random gives come through code Hypothesis writes
    # itself (file name <string>): its control flow there is Hypothesis's own (issue 42's real-project failure).
    "randoms": ("test_randoms.py", "test_ok", "test_bad"),
}
LEVELS = ("sandbox", "none")
MACHINES = ("machine", "machine_run")
SECOND_BUG = ("    return value == 3\n", "    return value == 3 or value >= 8\n")


def pid(level: str, entry: str, variant: str) -> str:
    return f"{level}.{entry}.{variant}"


def catalog() -> list[dict[str, str]]:
    return [{"id": pid(level, entry, variant), "oracle": f"properties/{file}", "node": node, "isolation": level}
            for level in LEVELS for entry, (file, ok, bad) in ENTRIES.items()
            for variant, node in (("ok", ok), ("bad", bad))]


BAD = [pid(level, entry, "bad") for level in LEVELS for entry in ENTRIES]
OK = [pid(level, entry, "ok") for level in LEVELS for entry in ENTRIES]


@pytest.fixture(scope="module")
def frozen_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``main``: the candidate module and the pack, every failing property frozen from a real base replay."""
    root = tmp_path_factory.mktemp("matrix")
    repo = root / "repo"
    shutil.copytree(MATRIX / "src", repo / "src")
    shutil.copytree(MATRIX / "properties", repo / "oracle" / "properties")
    (repo / "oracle" / "fixtures").mkdir()
    (repo / "oracle" / "fixtures" / "README").write_text("no fixtures\n")
    (repo / "oracle" / "catalog.yaml").write_text(yaml.safe_dump(
        {"version": 1, "seed": harness.SEED, "python_path": ["src"], "properties": catalog()}, sort_keys=False))
    (repo / "oracle" / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}\n')
    assert cli("manifest", "write", str(repo / "oracle")).returncode == 0
    git(repo, "init", "--quiet")
    commit_all(repo, "base: the candidate and the matrix pack")
    sig = root / "base.sig.json"
    proc = cli("replay", "--repo", str(repo), "--rev", "main", "--pack", "git:main:oracle", "--out", str(sig),
               *[arg for p in BAD for arg in ("--only-id", p)])
    assert proc.returncode == 0, proc.stderr
    for p in BAD:
        proc = cli("freeze", "--base-sig", str(sig), "--id", p, "--reason", "the known bug: wrong on a 3",
                   "--ledger", str(repo / "oracle" / "freeze_ledger.json"), "--first-seen", "2026-11-01")
        assert proc.returncode == 0, f"{p}: {proc.stderr}"
    assert cli("manifest", "write", str(repo / "oracle")).returncode == 0
    commit_all(repo, "freeze the known failures")
    return repo


def gate(base: Path, work: Path, edit: tuple[str, str] | None) -> tuple[int, dict]:
    repo = work / "repo"
    shutil.copytree(base, repo)
    git(repo, "checkout", "--quiet", "-b", "candidate")
    if edit is None:
        (repo / "README.md").write_text("an honest patch: documentation only\n")
    else:
        feat = repo / "src" / "feat.py"
        assert feat.read_text().count(edit[0]) == 1
        feat.write_text(feat.read_text().replace(*edit))
    commit_all(repo, "candidate")
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(work / "out"),
               "--today", "2026-11-30")
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, validate_evidence(work / "out")


def plain_outcomes(base: Path) -> dict[str, str]:
    """Each node's outcome under plain pytest on the base's source (the honest patch's), at the same seed."""
    files = [f"properties/{file}" for file, _, _ in ENTRIES.values()]
    return harness.plain_pytest(base / "oracle", files, [base / "src"])


def test_an_honest_patch_runs_every_entry_point_as_plain_pytest_and_each_known_bug_is_forgiven(frozen_base, tmp_path):
    code, docs = gate(frozen_base, tmp_path, None)
    runs, verdicts = docs["runs.json"]["runs"], docs["verdicts.json"]["verdicts"]
    replays = {r["prop_id"]: r for r in docs["base.sig.json"]["replays"]}
    plain = plain_outcomes(frozen_base)
    for level in LEVELS:
        for entry, (file, ok, bad) in ENTRIES.items():
            for variant, node in (("ok", ok), ("bad", bad)):
                p = pid(level, entry, variant)
                run = runs[p]
                assert run["isolation"]["level"] == level, p
                # The outcome plain pytest gives, node by node.
                nodes = {n: o for n, o in plain.items() if n == f"properties/{file}::{node}"
                         or n.startswith(f"properties/{file}::{node}::")}
                assert nodes and run["nodes"] == nodes, (p, run["nodes"], nodes)
                # A seeded trial: the seed, its trials, and examples of the run's fresh seed.
                assert run["seed"] == harness.SEED and run["trials"] > 0 and run["hits"] > 0, (p, run)
                assert run["fresh_seed"] is not None and run["fresh_log"], p
                if variant == "ok":
                    assert (verdicts[p]["verdict"], verdicts[p]["reason"]) == ("pass", "held"), (p, verdicts[p])
                    continue
                # The failure with its shrunk counterexample, reproduced on the base, forgiven by the freeze.
                assert (verdicts[p]["verdict"], verdicts[p]["reason"]) == ("inconclusive", "frozen"), (p, verdicts[p])
                (failure,) = run["failures"]
                example = failure["counterexample"]
                assert example is not None and failure["signature_parts"]["counterexample"] == json.dumps(
                    example, sort_keys=True, separators=(",", ":")), (p, failure)
                assert "DiscardedExample" not in failure["exc_type"], (p, failure)
                if entry in MACHINES:  # the shrunk step sequence, each step its rule and arguments
                    steps = example["data"]
                    assert steps and all("rule" in step for step in steps) and steps[0]["rule"] == "start", (p, steps)
                assert replays[p]["signature"] == run["signature"], p
                assert run["example_log"] and replays[p]["example_log"], p  # the differential check's inputs
    assert docs["verdicts.json"]["outcome"] == "promoted" and code == 0


def test_a_second_bug_behind_each_known_one_is_not_forgiven(frozen_base, tmp_path):
    code, docs = gate(frozen_base, tmp_path, SECOND_BUG)
    runs, verdicts = docs["runs.json"]["runs"], docs["verdicts.json"]["verdicts"]
    frozen = {r["prop_id"]: r["signature"] for r in docs["base.sig.json"]["replays"]}
    told_by_logs = []
    for p in OK:
        assert (verdicts[p]["verdict"], verdicts[p]["reason"]) == ("pass", "held"), (p, verdicts[p])
    for p in BAD:
        verdict = verdicts[p]
        assert verdict["verdict"] == "fail", (p, verdict)
        assert verdict["reason"] in ("signature_mismatch", "unfrozen_failure", "new_failing_examples"), (p, verdict)
        if runs[p]["signature"] == frozen[p]:
            # The same shrunk failure as the frozen one: only the example logs tell the bugs apart.
            assert verdict["reason"] == "new_failing_examples", (p, verdict)
            told_by_logs.append(p)
    assert told_by_logs, "no entry point's second bug printed the frozen signature: the differential check untested"
    assert docs["verdicts.json"]["outcome"] == "blocked" and code == 1
    print(json.dumps({p: verdicts[p]["reason"] for p in BAD}, indent=1))
