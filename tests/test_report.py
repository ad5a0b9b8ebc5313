"""The renderers (verdict_gate/report/): pure functions of an Evidence record."""

from __future__ import annotations

import json

import pytest

from verdict_gate.core.evidence import Evidence
from verdict_gate.core.records import Frame, RunRecord, RunsRecord
from verdict_gate.core.verdict import Verdict
from verdict_gate.report import render_all
from verdict_gate.report.summary import SUMMARY_BUDGET, SUMMARY_LIMIT, SUMMARY_MARGIN, summary_markdown
from verdict_gate.report.text import md_cell, md_line, printable

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)


def _evidence(rows: int) -> Evidence:
    ev = Evidence(repo="/repo", head_revision="h" * 40, base_ref="main", base_revision="b" * 40,
                  pack={"source": "git:main:oracle", "pack_root": "oracle"})
    ev.verdicts = {f"prop.p{i:04d}": Verdict("fail", "no_freeze", "x" * 200) for i in range(rows)}
    ev.claimed = tuple(ev.verdicts)
    ev.outcome, ev.why = "blocked", f"{rows} claimed properties failed"
    return ev


def test_summary_is_cut_under_the_budget_and_says_so() -> None:
    ev = _evidence(400)
    whole = summary_markdown(ev)
    assert whole.count("| `prop.p") == 400 and "cut" not in whole
    budget = 20_000
    cut = summary_markdown(ev, budget=budget)
    assert len(cut.encode()) <= budget < len(whole.encode())
    kept = cut.count("| `prop.p")
    assert 0 < kept < 400
    assert cut.rstrip().endswith("see verdicts.json and results.sarif._")
    assert f"_{400 - kept} more row(s) cut to keep the summary under 1 MiB" in cut
    assert cut.startswith(whole[: len(cut) - 200])  # the rows kept are the first ones, worst first


def test_the_summary_cap_has_one_home() -> None:
    assert SUMMARY_BUDGET == 900 * 1024 < SUMMARY_LIMIT - SUMMARY_MARGIN < SUMMARY_LIMIT == 1024 * 1024


def test_void_is_explicit() -> None:
    ev = Evidence(repo="/repo")
    with pytest.raises(ValueError, match="no outcome"):
        render_all(ev)
    files = render_all(ev.void("the manifest does not match"))
    doc = json.loads(files["verdicts.json"])
    assert (doc["outcome"], doc["promoted"], doc["void_reason"]) == ("void", False, "the manifest does not match")


def test_renderers_read_the_typed_run_record() -> None:
    ev = _evidence(1)
    pid = next(iter(ev.verdicts))
    run = RunRecord(status="fail", node="properties/test_x.py::test_x", seed=1, trials=3, hits=3,
                    counterexample={"n": 2}, exc_type="builtins.AssertionError", message="boom\nmore",
                    traceback=(Frame("src/x.py", 7, "f"),), duration_s=0.1, fixture_digest="d" * 64,
                    base_revision="b" * 40, fixture_mutated=False, signature="sha256:" + "a" * 64,
                    signature_parts=None)
    ev.runs = RunsRecord(revision="h" * 40, base_revision="b" * 40, fixture_digest="d" * 64,
                         environment={"PYTHONHASHSEED": "0", "TZ": "UTC", "python": "3", "pytest": "8",
                                      "hypothesis": "6"}, runs={pid: run})
    files = render_all(ev)
    result = json.loads(files["results.sarif"])["runs"][0]["results"][0]
    assert result["partialFingerprints"]["verdictGate/v1"] == "a" * 64
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/x.py"
    assert 'AssertionError: boom [counterexample {"n": 2}]' in files["summary.md"]
    assert json.loads(files["verdicts.json"])["verdicts"][pid]["signature"] == run.signature


def test_escapers() -> None:
    assert printable("a\x1b[2Jb\n") == "a\\x1b[2Jb\\x0a"
    assert md_cell("a|b\\c\nd") == "a\\|b\\\\c d"
    assert md_line("a  `b`\n| c") == "a 'b' \\| c"


def test_every_output_names_the_isolation_method_and_each_fence() -> None:
    ev = _evidence(2)
    fenced = {"level": "sandbox", "method": "landlock",
              "fences": {"network": True, "filesystem": True, "processes": True, "limits": True}}
    lost = {"level": "sandbox", "method": "unavailable", "fences": {}}
    base = dict(node="properties/test_x.py::test_x", seed=None, trials=None, hits=None, counterexample=None,
                exc_type=None, message=None, traceback=(), duration_s=0.1, fixture_digest="d" * 64,
                base_revision="b" * 40, fixture_mutated=False, signature=None, signature_parts=None)
    pids = sorted(ev.verdicts)
    ev.runs = RunsRecord(revision="h" * 40, base_revision="b" * 40, fixture_digest="d" * 64, environment={},
                         runs={pids[0]: RunRecord(status="pass", isolation=fenced, **base),
                               pids[1]: RunRecord(status="fail", isolation=lost, **base)})
    files = render_all(ev)
    line = "1 property at sandbox via landlock: network, filesystem, processes, limits held"
    assert f"- isolation: {line}" in files["summary.md"]
    assert "- isolation: 1 property not run: isolation sandbox is unavailable on this host" in files["summary.md"]
    from verdict_gate.report.terminal import terminal_table

    assert f"isolation: {line}" in terminal_table(ev)
    groups = json.loads(files["results.sarif"])["runs"][0]["properties"]["isolation"]
    assert {"level": "sandbox", "method": "landlock", "held": ["network", "filesystem", "processes", "limits"],
            "open": [], "properties": 1} in groups


@pytest.mark.parametrize(("level", "method", "trusted"), [("none", "in-process", True), ("process", "process", True),
                                                          ("sandbox", "bwrap", False)])
def test_a_level_that_fences_nothing_says_it_is_for_trusted_candidates(level: str, method: str,
                                                                       trusted: bool) -> None:
    """A candidate at `none` or `process` can write what later runs load (tests/attacks/limits/
    none_level_writes_the_shared_cache): every output's isolation line says so."""
    from verdict_gate.report.rows import isolation_line

    line = isolation_line({"level": level, "method": method, "held": ["limits"] if level == "process" else [],
                           "open": [], "properties": 2})
    assert line.startswith(f"2 properties at {level} via {method}: ")
    assert ("for candidates you trust: its code could write whatever the gate's user can" in line) == trusted
