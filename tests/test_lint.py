"""House rules for the workflows, the action and the README's workflow examples.

`make lint` runs hadolint, zizmor and check-jsonschema over the files themselves; these tests add
the rules those tools do not check (a timeout on every job, full-SHA pins with a version comment,
no `${{ }}` inside `run:`, minimal permissions) and validate the YAML shown in README.md, which
no linter sees.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
PIN = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def _load(path: Path) -> dict[str, Any]:
    return yaml.load(path.read_text(), Loader=yaml.BaseLoader)  # keys stay strings ("on" is not True)


def _steps(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name, job in (doc.get("jobs") or {}).items():
        for step in job.get("steps") or []:
            out.append((name, step))
    return out


def test_the_three_workflows_exist() -> None:
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "gate.yml", "base-replay.yml"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_house_rules(path: Path) -> None:
    doc = _load(path)
    text = path.read_text()
    assert doc.get("permissions") == {}, "top-level permissions: {} (each job asks for what it needs)"
    for name, job in doc["jobs"].items():
        assert "timeout-minutes" in job, f"{path.name}: job {name} has no timeout-minutes"
        assert "permissions" in job, f"{path.name}: job {name} does not declare its permissions"
        for perm, level in (job["permissions"] or {}).items():
            assert level in ("read", "write", "none"), f"{name}: {perm}: {level}"
    for job, step in _steps(doc):
        uses = step.get("uses", "")
        if uses and not uses.startswith("./"):
            assert PIN.match(uses), f"{path.name}: job {job}: {uses} is not pinned by a full commit id"
            line = next(ln for ln in text.splitlines() if uses in ln)
            assert re.search(r"# v\d", line), f"{path.name}: {uses} has no version comment"
        if "run" in step:
            assert "${{" not in step["run"], f"{path.name}: job {job}: pass values through env:, not ${{{{ }}}}"
        if "actions/checkout@" in uses:
            assert step.get("with", {}).get("persist-credentials") == "false"


def test_gate_workflow_gates_with_protected_code_and_aggregates() -> None:
    doc = _load(ROOT / ".github" / "workflows" / "gate.yml")
    assert set(doc["on"]) >= {"pull_request", "workflow_call"}
    steps = dict((s.get("id"), s) for _, s in _steps(doc) if s.get("id"))
    assert steps["gate"]["uses"] == "./.verdict-gate-action"
    uses = [s.get("uses", "") for _, s in _steps(doc)]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    checkout = next(s for _, s in _steps(doc) if s.get("with", {}).get("path") == ".verdict-gate-action")
    assert "pull_request.base.sha" in checkout["with"]["ref"]  # the gate's own code comes from the base
    promoted = doc["jobs"]["promoted"]
    assert promoted["needs"] == ["gate", "merge"] and "always()" in promoted["if"]
    run = promoted["steps"][0]["run"]
    assert 'test "$RESULT" = success' in run and 'test "$PROMOTED" = true' in run
    # shards: N > 1 runs a matrix of shard jobs and one merge job, which the required check reads
    jobs = doc["jobs"]
    assert doc["on"]["workflow_call"]["inputs"]["shards"]["default"] == "1"
    assert "inputs.shards > 1" in jobs["plan"]["if"] and "!(inputs.shards > 1)" in jobs["gate"]["if"]
    assert jobs["shard"]["strategy"]["matrix"]["shard"] == "${{ fromJSON(needs.plan.outputs.shards) }}"
    shard_step = next(s for s in jobs["shard"]["steps"] if s.get("id") == "gate")
    assert shard_step["with"]["shard"] == "${{ matrix.shard }}/${{ inputs.shards }}"
    merge_steps = jobs["merge"]["steps"]
    download = next(s for s in merge_steps if "download-artifact" in s.get("uses", ""))
    merge_step = next(s for s in merge_steps if s.get("id") == "gate")
    assert download["with"]["path"] == merge_step["with"]["merge-shards"]
    assert jobs["merge"]["needs"] == "shard" and "!cancelled()" in jobs["merge"]["if"]
    assert "needs.merge.result" in promoted["steps"][0]["env"]["RESULT"]
    assert jobs["shard"]["strategy"]["fail-fast"] == "false"


def test_base_replay_inputs() -> None:
    doc = _load(ROOT / ".github" / "workflows" / "base-replay.yml")
    inputs = doc["on"]["workflow_dispatch"]["inputs"]
    assert inputs["revision"]["required"] == "true"
    assert "property-ids" in inputs
    assert any("upload-artifact" in s.get("uses", "") for _, s in _steps(doc))


def _readme_workflows() -> list[str]:
    blocks = re.findall(r"```yaml\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    return [b for b in blocks if b.startswith("name:") and "\njobs:" in b]


def test_readme_workflows_are_valid(tmp_path: Path) -> None:
    blocks = _readme_workflows()
    assert len(blocks) >= 2  # the complete workflow and the fork upload workflow
    exe = shutil.which("check-jsonschema", path=str(ROOT / ".venv" / "bin")) or shutil.which("check-jsonschema")
    if exe is None:
        pytest.skip("check-jsonschema is not installed")
    files = []
    for i, block in enumerate(blocks):
        path = tmp_path / f"readme-{i}.yml"
        path.write_text(block)
        files.append(str(path))
        doc = yaml.load(block, Loader=yaml.BaseLoader)
        for name, job in doc["jobs"].items():
            assert "timeout-minutes" in job, f"README workflow {i}: job {name} has no timeout"
        for _, step in _steps(doc):
            assert "${{" not in step.get("run", ""), f"README workflow {i}: ${{{{ }}}} inside run:"
    proc = subprocess.run([exe, "--builtin-schema", "vendor.github-workflows", *files], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_readme_documents_every_input_and_output() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## GitHub Action", 1)[1].split("\n## ", 1)[0]
    for name in action["inputs"]:
        assert f"| `{name}` |" in section, f"input {name} is not in the README's table"
    for name in action["outputs"]:
        assert f"`{name}`" in section, f"output {name} is not in the README's table"
    for heading in ("## Required status check", "## Pull requests from forks"):
        assert heading in readme
    assert "fetch-depth: 0" in section and "upload-sarif" in section and "upload-artifact" in section
