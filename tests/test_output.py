"""Output that says what happened (issue 25, item 5): the new failing example of a `new_failing_examples`
verdict, a progress counter that counts, one shape for verdicts, `check --format json` per property."""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_failure_sets_e2e import ADD, HALF, HALF_EVEN, HALF_FILES, HALF_PROPS, OK, project

from conftest import cli, commit_all, validate_evidence


def test_new_failing_examples_shows_the_new_example_not_the_frozen_one(tmp_path: Path) -> None:
    """Floors instead of rounding half to even: n = 1 fails as the frozen bug does (the run's first failure,
    shrunk), n = 3 held on the base and fails now. The terminal and the summary show n = 3 and its assertion."""
    repo = project(tmp_path, HALF_FILES, HALF_PROPS, ["prop.half"])
    (repo / "src" / "calc.py").write_text("def half_up(n):\n    return n // 2\n" + ADD)
    commit_all(repo, "candidate")
    out = tmp_path / "out"
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out),
               "--today", "2026-11-30")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    docs = validate_evidence(out)
    assert docs["verdicts.json"]["verdicts"]["prop.half"]["reason"] == "new_failing_examples"  # type: ignore[index]
    run = docs["runs.json"]["runs"]["prop.half"]  # type: ignore[index]
    assert run["counterexample"] == {"n": 1}  # the run's own first failure is the frozen one
    line = next(line for line in proc.stdout.splitlines() if "run:" in line and "new failing example" in line)
    shown = int(re.search(r'input \{"n": (\d+)\}', line).group(1))  # type: ignore[union-attr]
    assert shown % 4 == 3, line  # held on the base (round half to even), fails on the candidate
    assert f"AssertionError: half_up({shown})" in line, line
    summary = (out / "summary.md").read_text()
    assert "**new failing example**" in summary and f'{{"n": {shown}}}' in summary
    assert f"AssertionError: half_up({shown})" in summary


def test_progress_counts_each_property_once_in_order_with_two_processes(tmp_path: Path) -> None:
    """Four property files (four shares) in two oracle processes at once: the numbered lines are exactly
    [1/4] … [4/4], in order; a property that starts carries no number (two start at once)."""
    from conftest import git

    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "oracle" / "properties").mkdir(parents=True)
    (repo / "src" / "calc.py").write_text(ADD)
    props = []
    for i in range(4):
        (repo / "oracle" / "properties" / f"test_p{i}.py").write_text(
            f"import time\nfrom calc import add\n\n\ndef test_p{i}():\n"
            f"    time.sleep(0.3)\n    assert add({i}, 1) == {i + 1}\n")
        props.append(f"  - id: prop.p{i}\n    oracle: properties/test_p{i}.py\n    kind: example\n")
    (repo / "oracle" / "catalog.yaml").write_text("version: 1\npython_path: [src]\nproperties:\n" + "".join(props))
    (repo / "oracle" / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}')
    assert cli("manifest", "write", str(repo / "oracle")).returncode == 0
    git(repo, "init", "--quiet")
    commit_all(repo, "base")
    proc = cli("run", "--repo", str(repo), "--base", "HEAD", "--pack", "git:HEAD:oracle", "--out", str(tmp_path / "o"),
               "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    numbers = [(int(m.group(1)), int(m.group(2))) for m in re.finditer(r"\[(\d+)/(\d+)\]", proc.stderr)]
    assert numbers == [(1, 4), (2, 4), (3, 4), (4, 4)], proc.stderr
    assert all(f"prop.p{i} …" in proc.stderr for i in range(4))


def test_check_format_json_gives_per_property_data(tmp_path: Path) -> None:
    needs = "def test_needs(no_such_fixture):\n    assert no_such_fixture\n"
    files = {"src/calc.py": HALF_EVEN + ADD, "oracle/properties/test_half.py": HALF,
             "oracle/properties/test_add.py": OK, "oracle/properties/test_needs.py": needs}
    props = HALF_PROPS + [{"id": "prop.needs", "oracle": "properties/test_needs.py", "kind": "example"}]
    repo = project(tmp_path, files, props, [])
    proc = cli("check", str(repo / "oracle"), "--repo", str(repo), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["format"] == "verdict-gate/check/v2" and doc["ok"] is False and "lines" not in doc
    by_id = {p["id"]: p for p in doc["properties"]}
    assert list(by_id) == ["prop.half", "prop.add", "prop.needs"]  # catalog order
    keys = {"id", "ran", "status", "would_freeze", "why_not"}
    assert all(keys <= set(p) for p in doc["properties"])
    half, add, needs_ = by_id["prop.half"], by_id["prop.add"], by_id["prop.needs"]
    assert (half["ran"], half["status"], half["would_freeze"], half["why_not"]) == (True, "fail", True, None)
    assert half["signature"].startswith("sha256:") and "verdict-gate freeze" in half["freeze_command"]
    assert (add["ran"], add["status"], add["would_freeze"], add["why_not"]) == (True, "pass", False, None)
    assert (needs_["ran"], needs_["would_freeze"]) == (False, False)
    assert "fixture" in needs_["why_not"] and "no_such_fixture" in needs_["error"]


def test_an_unavailable_isolation_level_is_said_plainly() -> None:
    """A level the host cannot give: the table says the properties did not run, never that they ran
    "at 'sandbox' via unavailable", and the verdict's reason is not repeated as a `run:` line."""
    from test_sarif_and_summary import ENV, _run

    from verdict_gate.core.evidence import Evidence
    from verdict_gate.core.records import RunsRecord
    from verdict_gate.core.verdict import Verdict
    from verdict_gate.report.summary import summary_markdown
    from verdict_gate.report.terminal import terminal_table

    why = "isolation level sandbox is not available on this host: bwrap is not installed"
    ev = Evidence(repo="/repo", head_revision="h" * 40, base_ref="main", base_revision="b" * 40,
                  pack={"source": "git:main:oracle", "pack_root": "oracle"})
    ev.verdicts = {"prop.x": Verdict("fail", "isolation_unavailable", f"this host could not give the isolation "
                                     f"level 'sandbox' the catalog asks for: {why}")}
    ev.claimed = ("prop.x",)
    ev.runs = RunsRecord(revision="h" * 40, base_revision="b" * 40, fixture_digest="d" * 64, environment=ENV,
                         runs={"prop.x": _run(hits=0, exc_type="verdict_gate.IsolationUnavailable", message=why,
                                              isolation={"level": "sandbox", "method": "unavailable", "fences": {},
                                                         "why": why})})
    ev.outcome, ev.why = "incomplete", "1 property could not be isolated"
    for text in (terminal_table(ev), summary_markdown(ev)):
        assert "via unavailable" not in text and "ran at" not in text, text
        assert "not run: isolation sandbox is unavailable on this host" in text, text
    assert not [line for line in terminal_table(ev).splitlines() if line.lstrip().startswith("run: ")]
