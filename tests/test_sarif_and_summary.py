"""SARIF that code scanning accepts in full, a job summary that says what happened, the
``--format json`` documents, and the rules page in step with the code."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

import github_sarif_rules
import jsonschema
import pytest

from conftest import ROOT, SHARED_SARIF
from verdict_gate.core.evidence import Evidence
from verdict_gate.core.records import Frame, RunRecord, RunsRecord
from verdict_gate.core.verdict import REASON_ROWS, Verdict
from verdict_gate.report import render_all
from verdict_gate.report.jsonout import run_document
from verdict_gate.report.rules import RULES, rules_markdown
from verdict_gate.report.sarif import findings, rule, sarif
from verdict_gate.report.summary import summary_markdown

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

ENV = {"PYTHONHASHSEED": "0", "TZ": "UTC", "python": "3", "pytest": "8", "hypothesis": "6"}


def _run(status: str = "fail", line: int = 7, **kw: object) -> RunRecord:
    fields: dict[str, object] = dict(
        status=status, node="properties/test_x.py::test_x", seed=1, trials=3, hits=3, counterexample={"n": 2},
        exc_type="builtins.AssertionError", message="boom\nsecond line", traceback=(Frame("src/x.py", line, "f"),),
        duration_s=0.1, fixture_digest="d" * 64, base_revision="b" * 40, fixture_mutated=False,
        signature="sha256:" + "a" * 64, signature_parts=None)
    fields.update(kw)
    return RunRecord(**fields)  # type: ignore[arg-type]


def _blocked() -> Evidence:
    ev = Evidence(repo="/repo", head_revision="h" * 40, base_ref="c" * 40, base_revision="b" * 40,
                  pack={"source": "git:main:oracle", "pack_root": "oracle", "sha256": "e" * 64})
    ev.verdicts = {"prop.ok": Verdict("pass", "held", "held"),
                   "prop.bad": Verdict("fail", "no_freeze", "failed, no freeze"),
                   "prop.known": Verdict("inconclusive", "frozen", "frozen failure")}
    ev.claimed = tuple(ev.verdicts)
    ev.runs = RunsRecord(revision="h" * 40, base_revision="b" * 40, fixture_digest="d" * 64, environment=ENV,
                         runs={"prop.bad": _run(), "prop.known": _run(line=0, signature="sha256:" + "c" * 64)})
    ev.outcome, ev.why = "blocked", "1 claimed property failed"
    return ev


def _schema_ok(log: dict) -> None:
    if SHARED_SARIF.exists():
        jsonschema.validate(log, json.loads(SHARED_SARIF.read_text()))


def test_every_reason_has_a_complete_rule() -> None:
    for reason in [*REASON_ROWS, "void", "isolation_unavailable", "unfrozen_failure", "new_failing_examples"]:
        assert reason in RULES and RULES[reason].short, reason
        assert github_sarif_rules.rule_violations(rule(reason), reason) == []


def test_blocked_sarif_passes_schema_and_github_rules() -> None:
    log = sarif(_blocked())
    _schema_ok(log)
    assert github_sarif_rules.violations(log) == []
    results = log["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"no_freeze", "frozen"}
    for r in results:  # tracked without a checkout: the fingerprint comes from the signature, not the line
        assert r["partialFingerprints"]["primaryLocationLineHash"].endswith(":1")
        assert r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1


def test_fingerprints_do_not_move_with_lines() -> None:
    a, b = _blocked(), _blocked()
    assert b.runs is not None
    b.runs.runs["prop.bad"] = _run(line=99)
    fa = [r["partialFingerprints"] for r in sarif(a)["runs"][0]["results"]]
    fb = [r["partialFingerprints"] for r in sarif(b)["runs"][0]["results"]]
    assert fa == fb


@pytest.mark.parametrize("pack", [{}, {"source": "git:main:checks"}, {"source": "/tmp/p.tgz", "pack_root": "qa"}])
def test_void_points_at_a_file(pack: dict) -> None:
    ev = Evidence(repo="/repo", pack=pack).void("the manifest does not match")
    log = sarif(ev)
    _schema_ok(log)
    assert github_sarif_rules.violations(log) == []
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.endswith("catalog.yaml") and uri != "."


def test_the_checker_catches_what_github_refuses() -> None:
    log = sarif(_blocked())
    log["runs"][0]["tool"]["driver"]["rules"][0].pop("fullDescription")
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "."
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    log["runs"][0]["results"][1]["partialFingerprints"] = {"verdictGate/v1": "x"}
    found = "\n".join(github_sarif_rules.violations(log))
    for needle in ("fullDescription", "directory", "startLine", "primaryLocationLineHash"):
        assert needle in found


def test_rules_doc_is_in_step() -> None:
    assert (ROOT / "docs" / "rules.md").read_text() == rules_markdown(), \
        "regenerate: python -m verdict_gate.report.rules > docs/rules.md"


def test_summary_blocked_puts_failures_first_with_details() -> None:
    text = summary_markdown(_blocked())
    assert text.count("## verdict-gate") == 1  # one heading, not doubled
    assert f"`{'c' * 12}` (merge base `{'b' * 12}`)" in text  # the base as ref and short id
    rows = [line for line in text.splitlines() if line.startswith("| `prop.")]
    assert [r.split("`")[1] for r in rows] == ["prop.bad", "prop.known", "prop.ok"]
    assert "<details><summary><code>prop.bad</code>: fail (no_freeze)</summary>" in text
    block = text.split("<details><summary><code>prop.bad</code>")[1].split("</details>")[0]
    assert "AssertionError" in block and "second line" in block and '"n": 2' in block and "src/x.py:7" in block
    assert "<details><summary><code>prop.ok</code>" not in text


def test_summary_void_says_what_happened() -> None:
    ev = Evidence(repo="/repo", head_revision="h" * 40, base_ref="main", base_revision="b" * 40,
                  pack={"source": "git:main:oracle"}).void("manifest at oracle/manifest.sha256: does not match\n"
                                                           "  fix: restore the pack")
    text = summary_markdown(ev)
    assert "Nothing was scored" in text and "does not match" in text and "What to do" in text
    assert "0 pass" not in text and "| property |" not in text


def test_summary_with_no_result_says_so() -> None:
    ev = Evidence(repo="/repo", head_revision="h" * 40, base_ref="main", base_revision="b" * 40)
    ev.outcome = "incomplete"
    text = summary_markdown(ev)
    assert "No property produced a result" in text and "| property |" not in text


def test_summary_crash_output_is_fenced_and_escaped() -> None:
    ev = _blocked()
    assert ev.runs is not None
    ev.runs.runs["prop.bad"] = _run(status="crash", message="Segmentation fault\n```\n</details>\x1b[2J")
    text = summary_markdown(ev)
    block = text.split("<code>prop.bad</code>")[1].split("\n</details>")[0]
    assert "**crash output**" in block and "````text" in block and "\x1b" not in block


def test_run_json_document() -> None:
    doc = run_document(_blocked(), "out")
    assert doc["format"] == "verdict-gate/run/v2"
    assert (doc["outcome"], doc["exit_code"], doc["promoted"]) == ("blocked", 1, False)
    assert doc["counts"] == {"pass": 1, "fail": 1, "inconclusive": 1}
    assert doc["worst_first"] == ["prop.bad", "prop.known", "prop.ok"]
    # One shape for verdicts: the --format json document's are verdicts.json's, entry for entry.
    assert doc["verdicts"] == json.loads(render_all(_blocked())["verdicts.json"])["verdicts"]
    assert set(doc["verdicts"]["prop.bad"]) == {"verdict", "reason", "row", "detail", "notes", "claimed", "signature"}
    assert doc["evidence_dir"] == "out" and doc["files"]["verdicts.json"] == "out/verdicts.json"
    json.dumps(doc)


def test_render_all_still_validates() -> None:
    files = render_all(_blocked())
    assert set(files) >= {"verdicts.json", "results.sarif", "summary.md"}


def _as_github_reads_sarif(log: dict) -> list[tuple]:
    """What each SARIF result says to a reader of the log: level, text, file (decoded), line, and the
    property it is about (as GitHub code scanning shows an alert)."""
    out = []
    for r in log["runs"][0]["results"]:
        phys = r["locations"][0]["physicalLocation"]
        uri = unquote(phys["artifactLocation"]["uri"])
        props = r.get("properties", {})
        out.append((r["level"], r["message"]["text"], uri, phys["region"]["startLine"], props.get("prop_id", ""),
                    props.get("verdict", ""), r["ruleId"]))
    return out


@pytest.mark.parametrize("ev", [_blocked(), Evidence(repo="/repo", pack={"pack_root": "q a"}).void("no manifest")])
def test_annotations_come_from_the_evidence_and_say_what_sarif_says(ev: Evidence) -> None:
    from verdict_gate.github.workflow import annotations_of

    found = findings(ev)
    said = [(f.level, f.text, f.path, f.line, f.prop_id, f.verdict, f.rule) for f in found]
    assert said == _as_github_reads_sarif(sarif(ev))
    anns = annotations_of(found, "sub")
    assert sorted((a.level, a.message, a.file, a.line) for a in anns) == sorted(
        (level, text, f"sub/{path}", line) for level, text, path, line, *_ in said)
    assert {a.title for a in anns} >= {f"verdict-gate: {f.prop_id} {f.verdict} ({f.rule})" for f in found if f.prop_id}


def test_each_evidence_document_is_rendered_once_and_written_as_digested(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The digests in verdicts.json and the attestation are taken of the very texts the writer writes, and no
    JSON document is rendered twice for them (runs.json at 2,000 properties: 0.17 s a rendering, issue 43)."""
    import hashlib

    from verdict_gate.report import documents, verdicts
    from verdict_gate.report.writer import write_files

    ev = Evidence(repo="/repo", pack={"source": "git:main:oracle"}).void("no manifest")  # valid: it is written
    expected = render_all(ev)
    rendered: list[int] = []
    real = verdicts.dumps

    def counting(doc: object) -> str:
        rendered.append(id(doc))
        return real(doc)

    monkeypatch.setattr(verdicts, "dumps", counting)
    docs = documents(ev)
    texts = write_files(tmp_path, docs)
    assert texts == expected
    assert sorted(rendered) == sorted({id(doc) for doc in docs.values() if not isinstance(doc, str)})
    named = json.loads(texts["verdicts.json"])["evidence"]
    assert named == {name: hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() for name in named}
    docs["verdicts.json"] = {**docs["verdicts.json"], "run_id": "another"}  # another object: rendered anew
    assert json.loads(docs.text("verdicts.json"))["run_id"] == "another"


def test_the_writer_validates_the_document_it_writes(tmp_path: Path) -> None:
    from verdict_gate.core.errors import GateError
    from verdict_gate.report import documents
    from verdict_gate.report.writer import write_files

    ev = Evidence(repo="/repo", pack={"source": "git:main:oracle"}).void("no manifest")
    docs = documents(ev)
    texts = write_files(tmp_path / "ok", docs)
    assert texts == render_all(ev)
    assert {p.name: p.read_text() for p in (tmp_path / "ok").iterdir()} == texts
    docs["verdicts.json"]["outcome"] = "winning"  # not an outcome: the schema refuses it, nothing is written
    with pytest.raises(GateError, match="verdicts.json"):
        write_files(tmp_path / "bad", docs)
    assert not (tmp_path / "bad" / "verdicts.json").exists()


@pytest.mark.slow
def test_json_format_on_the_command_line(example_repo: Path, tmp_path: Path) -> None:
    from conftest import cli, commit_all

    (example_repo / "README.md").write_text("docs only\n")
    commit_all(example_repo, "docs")
    proc = cli("run", "--repo", str(example_repo), "--base", "main", "--pack", "git:main:oracle",
               "--out", str(tmp_path / "out"), "--today", "2026-11-30", "--format", "json")
    doc = json.loads(proc.stdout)  # stdout is exactly one JSON document
    assert doc["outcome"] == "promoted" and doc["exit_code"] == proc.returncode == 0
    assert doc["counts"] == {"pass": 1, "fail": 0, "inconclusive": 1}
    proc = cli("replay", "--repo", str(example_repo), "--rev", "main", "--pack", "git:main:oracle",
               "--out", str(tmp_path / "b.json"), "--format", "json")
    doc = json.loads(proc.stdout)
    assert doc["format"] == "verdict-gate/replay/v1" and doc["replays"][0]["status"] == "fail"


def test_documented_upload_job_needs_no_checkout() -> None:
    """The `sarif` job of docs/action.md has no checkout, so the results must carry the fingerprint the
    upload action would otherwise compute from the source (tested above for every result)."""
    page = (ROOT / "docs" / "action.md").read_text()
    job = page.split("\n  sarif:", 1)[1].split("\n  promoted:", 1)[0]
    assert "upload-sarif" in job and "actions/checkout" not in job
    for result in sarif(_blocked())["runs"][0]["results"]:
        assert "primaryLocationLineHash" in result["partialFingerprints"]


def test_docs_reference_the_screenshots() -> None:
    text = (ROOT / "docs" / "operating.md").read_text()
    for png in ("summary-blocked.png", "summary-void.png"):
        assert f"]({png})" in text
        assert (ROOT / "docs" / png).stat().st_size < 300_000
        assert (ROOT / "docs" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
