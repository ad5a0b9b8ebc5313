"""Only what defines the run voids it (docs/design.md §6, issue 25 item 3): the workflow file being run
(``GITHUB_WORKFLOW_REF``), the local reusable workflows and local actions it uses; any other workflow
edit is bucket ``other``, listed in the evidence. Unknown (outside Actions): every workflow edit voids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import cli, commit_all, git, validate_evidence
from verdict_gate.core import diffsplit
from verdict_gate.core.workflows import Running, closure, workflow_path
from verdict_gate.host.files import parse_catalog

CATALOG = parse_catalog("version: 1\nproperties:\n  - {id: prop.a, oracle: properties/test_a.py}\n", "c.yaml")

GATE = """\
name: verdict-gate
on: pull_request
jobs:
  setup:
    uses: ./.github/workflows/reusable.yml
  gate:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683
      - uses: ./.github/actions/setup
      - run: echo gate
"""
REUSABLE = """\
on: workflow_call
jobs:
  prepare:
    runs-on: ubuntu-24.04
    steps:
      - uses: ./tools/prepare
"""
SETUP = "name: setup\nruns:\n  using: composite\n  steps:\n    - uses: ./.github/actions/inner\n"
FILES = {".github/workflows/gate.yml": GATE, ".github/workflows/reusable.yml": REUSABLE,
         ".github/actions/setup/action.yml": SETUP,
         ".github/actions/inner/action.yaml": "runs:\n  using: composite\n  steps: []\n",
         "tools/prepare/action.yml": "runs:\n  using: node20\n  main: index.js\n",
         ".github/workflows/release.yml": "on: push\njobs: {}\n"}


def reader(files: dict[str, str]) -> Any:
    return lambda path: [yaml.safe_load(files[path])] if path in files else []


@pytest.mark.fast
@pytest.mark.parametrize(("ref", "repository", "path"), [
    ("octo/app/.github/workflows/gate.yml@refs/pull/7/merge", "octo/app", ".github/workflows/gate.yml"),
    ("Octo/App/.github/workflows/gate.yml@refs/heads/main", "octo/app", ".github/workflows/gate.yml"),
    ("octo/other/.github/workflows/gate.yml@refs/heads/main", "octo/app", None),  # a ruleset's required workflow
    ("octo/app/.github/workflows/../x.yml@refs/heads/main", "octo/app", None),
    ("octo/app/ci/gate.yml@refs/heads/main", "octo/app", None),
    ("octo/app/.github/workflows/gate.yml", "octo/app", None),
    ("octo/app/.github/workflows/gate.yml@x", "", None),
])
def test_workflow_path(ref: str, repository: str, path: str | None) -> None:
    assert workflow_path(ref, repository) == path


@pytest.mark.fast
def test_closure_follows_local_workflows_and_actions() -> None:
    found = closure(".github/workflows/gate.yml", reader(FILES))
    assert found == Running(".github/workflows/gate.yml",
                            (".github/actions/inner/action.yaml", ".github/actions/setup/action.yml",
                             ".github/workflows/gate.yml", ".github/workflows/reusable.yml",
                             "tools/prepare/action.yml"),
                            (".github/actions/inner", ".github/actions/setup", "tools/prepare"))
    assert closure(".github/workflows/missing.yml", reader(FILES)) is None  # unknown: fail closed
    assert closure(".github/workflows/gate.yml", lambda path: None) is None  # a file that does not parse
    root = closure(".github/workflows/x.yml", reader({".github/workflows/x.yml": "jobs:\n  a:\n    steps:\n"
                                                                               "      - uses: ./\n"}))
    assert root is not None and root.defines("src/anything.py")  # the repository's own action: all of it


@pytest.mark.fast
@pytest.mark.parametrize(("path", "known", "unknown"), [
    (".github/workflows/gate.yml", "control", "control"),
    (".github/workflows/reusable.yml", "control", "control"),
    (".github/actions/setup/action.yml", "control", "other"),
    (".github/actions/inner/script.sh", "control", "other"),
    ("tools/prepare/index.js", "control", "other"),
    (".github/workflows/release.yml", "other", "control"),
    (".github/dependabot.yml", "other", "other"),
    ("oracle/catalog.yaml", "control", "control"),
    ("src/app.py", "src", "src"),
])
def test_only_what_defines_the_run_is_control(path: str, known: str, unknown: str) -> None:
    running = closure(".github/workflows/gate.yml", reader(FILES))
    assert diffsplit.bucket_of(path, CATALOG, running) == known
    assert diffsplit.bucket_of(path, CATALOG, None) == unknown
    parts = diffsplit.split(diffsplit.parse_name_status(f"M\0{path}\0".encode()), CATALOG, running)
    assert parts.void is (known == "control")
    assert parts.workflow_edits == ((path,) if known == "other" and path.startswith(".github/workflows/") else ())


# --- end to end: `verdict-gate run` as a GitHub Actions step runs it ---------------------------------------


def _repo(tmp: Path) -> Path:
    repo = tmp / "repo"
    files = {**FILES, "src/calc.py": "def add(a, b):\n    return a + b\n",
             "oracle/properties/test_add.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
             "oracle/catalog.yaml": "version: 1\npython_path: [src]\nproperties:\n  - id: prop.add\n"
                                    "    oracle: properties/test_add.py\n    kind: example\n",
             "oracle/freeze_ledger.json": '{"version": 1, "freezes": []}'}
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    assert cli("manifest", "write", str(repo / "oracle")).returncode == 0
    git(repo, "init", "--quiet")
    commit_all(repo, "base")
    git(repo, "checkout", "--quiet", "-b", "candidate")
    return repo


def _actions_env(repo: Path) -> dict[str, str]:
    return {"GITHUB_WORKFLOW_REF": "octo/app/.github/workflows/gate.yml@refs/pull/7/merge",
            "GITHUB_REPOSITORY": "octo/app", "GITHUB_WORKSPACE": str(repo)}


@pytest.mark.parametrize(("edit", "in_actions", "code"), [
    (".github/workflows/release.yml", True, 0),  # a Dependabot bump of another workflow: other, promoted
    (".github/workflows/release.yml", False, 3),  # outside Actions nothing says what runs: void, as before
    (".github/workflows/gate.yml", True, 3),  # the workflow being run
    (".github/actions/setup/action.yml", True, 3),  # a local action it uses
])
def test_workflow_edits_in_a_run(tmp_path: Path, edit: str, in_actions: bool, code: int) -> None:
    repo = _repo(tmp_path)
    (repo / edit).write_text((repo / edit).read_text() + "# bumped\n")
    commit_all(repo, f"edit {edit}")
    out = tmp_path / "out"
    env = _actions_env(repo) if in_actions else {"GITHUB_WORKFLOW_REF": "", "GITHUB_REPOSITORY": "",
                                                 "GITHUB_WORKSPACE": ""}
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out),
               env=env)
    assert proc.returncode == code, proc.stdout + proc.stderr
    docs = validate_evidence(out)
    if code == 0:
        edited = docs["oracle_edited.json"]
        assert edited["workflow_edits"] == [edit] and edit in edited["buckets"]["other"]  # type: ignore[index]
        assert edited["running"]["workflow"] == ".github/workflows/gate.yml"  # type: ignore[index]
        assert "do not run in this run" in proc.stdout and edit in proc.stdout
    else:
        verdicts = json.loads((out / "verdicts.json").read_text())
        assert edit in verdicts["void_reason"]
        assert ("defines this run" if in_actions else "GITHUB_WORKFLOW_REF") in verdicts["void_reason"]
