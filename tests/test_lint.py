"""House rules for the workflows, the action and the workflow examples of the README and docs/.

`make lint` runs hadolint, zizmor and check-jsonschema over the files themselves; these tests add
the rules those tools do not check (a timeout on every job, full-SHA pins with a version comment,
no `${{ }}` inside `run:`, minimal permissions) and validate the YAML shown in README.md and the pages
under docs/, which no linter sees.
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


def test_base_replay_is_a_reusable_workflow_any_repository_can_call() -> None:
    """It is callable (workflow_call) with the pack and ledger paths, installs the gate from the pinned lock
    of the commit named (never this project's Makefile), and publishes the proposals as an artifact and
    in the job summary."""
    doc = _load(ROOT / ".github" / "workflows" / "base-replay.yml")
    called = doc["on"]["workflow_call"]["inputs"]
    assert {"verdict-gate-ref", "revision", "property-ids", "oracle-pack", "ledger"} <= set(called)
    assert called["revision"]["required"] == "true" and called["ledger"]["default"] == "oracle/freeze_ledger.json"
    text = (ROOT / ".github" / "workflows" / "base-replay.yml").read_text()
    assert "make install" not in text and "oracle/freeze_ledger.json --reason" not in text
    runs = "\n".join(s.get("run", "") for _, s in _steps(doc))
    assert "--require-hashes -r" in runs and "requirements/runtime.txt" in runs and "--no-deps" in runs
    assert "GITHUB_STEP_SUMMARY" in runs and "proposed-freezes.sh" in runs and "os.environ[\"LEDGER\"]" in runs
    gate = next(s for _, s in _steps(doc) if s.get("with", {}).get("repository") == "verdict-gate/verdict-gate")
    assert gate["with"]["ref"] == "${{ inputs.verdict-gate-ref }}"
    assert "base-replay.yml@" in (ROOT / "docs" / "action.md").read_text()  # the documented caller


PLACEHOLDER_SHA = "0123456789abcdef0123456789abcdef01234567"  # stands in for <full commit id> when linting


DOC_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]  # the README and the pages under docs/


def _readme_yaml() -> list[str]:
    """Every YAML block of the README and the pages under docs/."""
    return [b for page in DOC_PAGES for b in re.findall(r"```yaml\n(.*?)```", page.read_text(), flags=re.S)]


def _readme_workflows() -> list[str]:
    """Every workflow the README and docs/ show, as a user would copy it (placeholders left in)."""
    return [b for b in _readme_yaml() if re.search(r"^jobs:", b, flags=re.M)]


def _readme_workflow_files(tmp_path: Path) -> list[Path]:
    """The docs' workflows written to ``tmp_path/.github/workflows`` with the commit placeholders
    (``<full commit id>``, ``<the same commit>``) replaced by a 40-hex id, as a user fills them in."""
    out = tmp_path / ".github" / "workflows"
    out.mkdir(parents=True)
    files = []
    for i, block in enumerate(_readme_workflows()):
        path = out / f"readme-{i}.yml"
        path.write_text(re.sub(r"<full commit id>|<the same commit>|<commit>", PLACEHOLDER_SHA, block))
        files.append(path)
    return files


def test_every_workflow_snippet_in_the_readme_is_a_whole_workflow() -> None:
    """A block that shows jobs or steps is a complete workflow a user can copy (name, on, jobs), so that
    each one is linted below; no fragment is left for the reader to splice in."""
    for block in _readme_yaml():
        if re.search(r"^\s*(runs-on|uses|steps|jobs):", block, flags=re.M):
            doc = yaml.load(block, Loader=yaml.BaseLoader)
            assert isinstance(doc, dict) and {"name", "on", "jobs"} <= set(doc), block[:200]


def test_readme_workflows_are_valid(tmp_path: Path) -> None:
    blocks = _readme_workflows()
    assert len(blocks) >= 7  # the README's, the complete one, shards, base replay, the two fork ones, deploy
    exe = shutil.which("check-jsonschema", path=str(ROOT / ".venv" / "bin")) or shutil.which("check-jsonschema")
    if exe is None:
        pytest.skip("check-jsonschema is not installed")
    files = _readme_workflow_files(tmp_path)
    for i, block in enumerate(blocks):
        doc = yaml.load(block, Loader=yaml.BaseLoader)
        assert doc.get("permissions") == {}, f"docs workflow {i}: top-level permissions: {{}}"
        for name, job in doc["jobs"].items():
            assert "permissions" in job, f"docs workflow {i}: job {name} does not declare its permissions"
            if "runs-on" in job:  # a job calling a reusable workflow takes no timeout
                assert "timeout-minutes" in job, f"docs workflow {i}: job {name} has no timeout"
        for _, step in _steps(doc):
            assert "${{" not in step.get("run", ""), f"docs workflow {i}: ${{{{ }}}} inside run:"
    proc = subprocess.run([exe, "--builtin-schema", "vendor.github-workflows", *map(str, files)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _tool(name: str) -> str:
    exe = shutil.which(name, path=str(ROOT / ".venv" / "bin"))
    assert exe is not None, f"{name} is not installed: run make install (requirements/dev.txt pins it)"
    return exe


def test_readme_workflows_pass_actionlint_and_zizmor(tmp_path: Path) -> None:
    """A maintainer can copy every workflow the README shows: actionlint finds nothing, and zizmor (offline,
    its default persona, the README's own inline ignores honoured) finds nothing either."""
    files = _readme_workflow_files(tmp_path)
    lint = subprocess.run([_tool("actionlint"), "-no-color", *map(str, files)], capture_output=True, text=True,
                          cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    audit = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--quiet", str(tmp_path / ".github")],
                           capture_output=True, text=True)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_the_repository_workflows_pass_actionlint() -> None:
    proc = subprocess.run([_tool("actionlint"), "-no-color", *map(str, WORKFLOWS)], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_action_page_documents_every_input_and_output() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    page = (ROOT / "docs" / "action.md").read_text()
    section = page.split("## GitHub Action", 1)[1].split("\n## ", 1)[0]
    for name in action["inputs"]:
        assert f"| `{name}` |" in section, f"input {name} is not in docs/action.md's table"
    for name in action["outputs"]:
        assert f"`{name}`" in section, f"output {name} is not in docs/action.md's table"
    for heading in ("## Required status check", "## Pull requests from forks"):
        assert heading in page
    assert "fetch-depth: 0" in section and "upload-sarif" in section and "upload-artifact" in section


def test_action_image_is_the_dockerfile_or_a_digest() -> None:
    image = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["image"]
    assert image == "Dockerfile" or re.fullmatch(r"docker://ghcr\.io/[a-z0-9._/-]+@sha256:[0-9a-f]{64}", image), \
        f"action.yml runs.image {image!r}: the Dockerfile, or a released image pinned by digest, never a tag"


def test_release_workflow_builds_both_platforms_with_provenance_and_sbom() -> None:
    doc = _load(ROOT / ".github" / "workflows" / "release.yml")
    assert set(doc["on"]) == {"workflow_dispatch"}  # by hand; a tag-triggered rebuild would push another digest
    job = doc["jobs"]["image"]
    assert job["permissions"] == {"contents": "read", "packages": "write"}
    build = next(s for s in job["steps"] if s.get("uses", "").startswith("docker/build-push-action@"))
    assert set(build["with"]["platforms"].split(",")) == {"linux/amd64", "linux/arm64"}
    assert build["with"]["push"] == "true" and build["with"]["sbom"] == "true"
    assert build["with"]["provenance"] == "mode=max"
    uses = {s["uses"].split("@")[0] for s in job["steps"] if "uses" in s}
    assert {"docker/setup-qemu-action", "docker/setup-buildx-action", "docker/login-action",
            "docker/metadata-action", "docker/build-push-action"} <= uses
    login = next(s for s in job["steps"] if s.get("uses", "").startswith("docker/login-action@"))
    assert login["with"]["registry"] == "ghcr.io"


ATTEST = "actions/attest@1e69f48acb82d1966a394da916b4c1698aa569d6"  # v4.2.2
SIGNING = {"id-token", "attestations"}


def _attest_jobs(doc: dict[str, Any]) -> dict[str, Any]:
    return {name: job for name, job in doc["jobs"].items()
            if any(s.get("uses", "").startswith("actions/attest@") for s in job.get("steps") or [])}


def _check_signing(doc: dict[str, Any], where: str) -> None:
    """One job signs the evidence with actions/attest at the pinned release: it alone holds id-token and
    attestations write, it checks out and runs nothing from the patch, and no job can write contents."""
    signers = _attest_jobs(doc)
    assert len(signers) == 1, f"{where}: one attest job"
    (name, job), = signers.items()
    for other, body in doc["jobs"].items():
        perms = body.get("permissions") or {}
        assert perms.get("contents") != "write", f"{where}: job {other} can write contents"
        if other != name:
            assert not {p for p, level in perms.items() if level == "write"} & SIGNING, f"{where}: {other} can sign"
    assert {p for p, level in job["permissions"].items() if level == "write"} == SIGNING
    uses = [s.get("uses", "") for s in job["steps"]]
    assert ATTEST in uses and not any("checkout" in u or u.startswith("./") for u in uses), uses
    attest = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/attest@"))
    assert attest["with"]["predicate-type"] == "https://verdict-gate.dev/attestation/gate-run/v1"
    assert attest["with"]["subject-path"].endswith("/evidence/*") and "predicate-path" in attest["with"]
    assert "head.repo.full_name == github.repository" in job["if"] and "private" in job["if"], job["if"]


def test_the_evidence_is_signed_in_a_job_that_runs_nothing_from_the_patch() -> None:
    from verdict_gate.report.attestation import PREDICATE_TYPE

    assert PREDICATE_TYPE == "https://verdict-gate.dev/attestation/gate-run/v1"
    _check_signing(_load(ROOT / ".github" / "workflows" / "gate.yml"), "gate.yml")
    complete = next(yaml.load(b, Loader=yaml.BaseLoader) for b in _readme_workflows()
                    if "gate" in yaml.load(b, Loader=yaml.BaseLoader)["jobs"]
                    and "sarif" in yaml.load(b, Loader=yaml.BaseLoader)["jobs"])
    _check_signing(complete, "docs/action.md's complete workflow")
    page = (ROOT / "docs" / "evidence.md").read_text()
    assert "gh attestation verify" in page and "--predicate-type https://verdict-gate.dev/attestation/gate-run/v1" \
        in page and "verdict-gate audit" in page


def test_a_planted_signing_fault_is_caught() -> None:
    doc = _load(ROOT / ".github" / "workflows" / "gate.yml")
    doc["jobs"]["gate"]["permissions"]["id-token"] = "write"  # the job that runs the patch could sign
    with pytest.raises(AssertionError, match="can sign"):
        _check_signing(doc, "planted")
