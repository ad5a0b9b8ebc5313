"""Only what defines the run voids it (docs/design.md §6, issue 25 item 3, issue 41): the workflow file being
run (``GITHUB_WORKFLOW_REF``), the local reusable workflows and local actions it uses, the files its steps run
or read by path, symbolic links followed in both revisions; any other workflow edit is bucket ``other``, listed
in the evidence. Unknown (outside Actions): every workflow edit voids. Cannot tell what a step runs: every
edit voids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from conftest import cli, commit_all, git, validate_evidence
from verdict_gate.core import diffsplit
from verdict_gate.core.workflows import Running, Seen, closure, workflow_path
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
    """``look`` over one revision held in memory (no links: those are the host's, tested end to end below)."""
    def look(path: str, as_yaml: bool) -> Seen:
        if path in files:
            return Seen((path,), texts=(files[path],), docs=(yaml.safe_load(files[path]),) if as_yaml else ())
        if any(f.startswith(path + "/") for f in files):
            return Seen(dirs=(path,))
        return Seen()
    return look


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
    assert closure(".github/workflows/gate.yml", lambda path, as_yaml: Seen(("x",), unknown="bad YAML")) is None
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


# --- the files a step runs or reads by path (issue 41) ------------------------------------------------------

SCRIPTS = {"scripts/gate.sh": "#!/bin/sh\nset -e\n. \"$(dirname \"$0\")/lib.sh\"\n", "scripts/lib.sh": "echo lib\n",
           "scripts/other.sh": "echo other\n", "tools/check.py": "print('ok')\n", "tools/gate/__init__.py": "",
           "tools/gate/__main__.py": "", "tools/check.sh": "#!/usr/bin/env python3\nimport os\n",
           ".python-version": "3.12\n", "requirements/dev.txt": "pytest\n",
           ".github/workflows/release.yml": "on: push\n",
           ".github/actions/composite/action.yml": "runs:\n  using: composite\n  steps:\n"
                                                  "    - run: ./scripts/other.sh\n      shell: bash\n"}


def running_of(steps: str) -> Running:
    gate = ("on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-24.04\n    steps:\n"
            + "".join(f"      {line}\n" for line in steps.splitlines()))
    found = closure(".github/workflows/gate.yml", reader({".github/workflows/gate.yml": gate, **SCRIPTS}))
    assert found is not None
    return found


@pytest.mark.fast
@pytest.mark.parametrize(("step", "edited", "bucket"), [
    ("- run: ./scripts/gate.sh", "scripts/gate.sh", "control"),  # a script the step runs
    ("- run: ./scripts/gate.sh", "scripts/lib.sh", "control"),  # … and what that script sources by its own dir
    ("- run: ./scripts/gate.sh", "scripts/other.sh", "other"),  # … not what it does not name
    ("- run: bash ./scripts/other.sh --fast", "scripts/other.sh", "control"),
    ("- run: sh -ec 'bash scripts/other.sh'", "scripts/other.sh", "control"),
    ("- run: python tools/check.py --strict", "tools/check.py", "control"),
    ("- run: python3 -u -m tools.gate", "tools/gate/__main__.py", "control"),
    ("- run: source scripts/lib.sh && make", "scripts/lib.sh", "control"),
    ("- run: . scripts/lib.sh", "scripts/lib.sh", "control"),
    ("- run: VERSION=$(./scripts/other.sh)", "scripts/other.sh", "control"),
    ("- run: ./check.sh\n  working-directory: tools", "tools/check.sh", "control"),
    ("- run: cd tools && python check.py", "tools/check.py", "control"),
    ('- run: bash "$SETUP"\n  env:\n    SETUP: scripts/other.sh', "scripts/other.sh", "control"),
    ('- run: bash "$GITHUB_WORKSPACE/scripts/other.sh"', "scripts/other.sh", "control"),
    ("- run: bash ${{ github.workspace }}/scripts/other.sh", "scripts/other.sh", "control"),
    ("- run: bash scripts/$KIND.sh", "scripts/other.sh", "control"),  # every file under its literal directory
    ("- run: bash scripts/$KIND.sh", "tools/check.py", "other"),
    ('- run: bash "$SETUP"\n  env:\n    SETUP: ${{ inputs.script }}', "src/app.py", "control"),  # cannot tell
    ("- run: ./tools/check.sh", "tools/check.sh", "control"),
    ("- uses: ./.github/actions/composite", "scripts/other.sh", "control"),  # a composite action's run: steps
    ("- uses: ./.github/actions/composite", "tools/check.py", "other"),
    ("- uses: actions/setup-python@0a5c61591373683505ea898e09a3ea4f39ef2b9c\n  with:\n"
     "    python-version-file: .python-version", ".python-version", "control"),
    ("- uses: actions/setup-python@0a5c61591373683505ea898e09a3ea4f39ef2b9c\n  with:\n"
     "    cache-dependency-path: requirements/*.txt", "requirements/dev.txt", "control"),
    # Honest controls: what a step does not run or read by path stays where the catalog puts it.
    ("- uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02\n  with:\n"
     "    path: ${{ steps.gate.outputs.evidence-dir }}", "src/app.py", "src"),
    ('- run: test "$RESULT" = success && test "$PROMOTED" = true\n  env:\n    RESULT: ${{ needs.gate.result }}',
     "src/app.py", "src"),
    ("- run: python - <<'PY'\n    import scripts.other\n    PY\n- run: make test", "src/app.py", "src"),
    ("- run: ./scripts/gate.sh", ".github/workflows/release.yml", "other"),
])
def test_the_files_a_step_runs_or_reads_by_path_define_the_run(step: str, edited: str, bucket: str) -> None:
    running = running_of(step)
    assert diffsplit.bucket_of(edited, CATALOG, running) == bucket, running
    assert bool(running.unsure) is (bucket == "control" and edited == "src/app.py"), running.unsure


names = st.text("abcxyz_-.", min_size=1, max_size=8).filter(lambda n: n not in (".", "..") and n[0] != "-")
paths = st.lists(names, min_size=1, max_size=3).map("/".join)


@pytest.mark.fast
@given(path=paths, form=st.sampled_from(["./{}", "bash ./{}", "sh -e {}", "source {}", ". ./{}", "python3 {}",
                                         "env A=1 bash {} --x", "X=$(./{})", "bash -c './{}'", "cd . && ./{}",
                                         "if true; then ./{}; fi", "bash <<'EOF'\n./{}\nEOF", "node {}"]),
       before=st.sampled_from(["", "echo hi\n", "# ./not-this\n", "set -eu\n", "cat <<EOF\n./nope\nEOF\n"]))
def test_every_form_names_its_script(path: str, form: str, before: str) -> None:
    from verdict_gate.core.shell import refs

    found = refs(before + form.format(path), "", {}, "step")
    assert path in {p for p, _, _ in found.files} and not found.unsure, found
    assert not any(p.endswith(("not-this", "nope")) for p, _, _ in found.files), found


@pytest.mark.fast
@given(text=st.text(max_size=200) | st.text("$(){}`'\"\\<>|&;# \nab./", max_size=80))
def test_any_text_is_read_or_said_unreadable(text: str) -> None:
    from verdict_gate.core.shell import refs

    found = refs(text, "", {}, "step")  # never raises: what it cannot read is a reason, and every edit voids
    assert all(p and not p.startswith(("/", "..")) for p, _, _ in found.files), found


@pytest.mark.fast
def test_the_readme_workflow_and_this_repository_gate_define_only_themselves() -> None:
    """The workflows the README, docs/ and this repository give users read no repository file by a name the gate
    cannot tell: an unrelated workflow's bump stays `other` under them."""
    import re

    from conftest import ROOT

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    blocks = [b for page in pages for b in re.findall(r"```yaml\n(.*?)```", page.read_text(), flags=re.S)
              if "\njobs:" in b]
    own = {str(p.relative_to(ROOT)): p.read_text() for p in (ROOT / ".github" / "workflows").glob("*.yml")}
    assert len(blocks) >= 7  # the README's, the complete one, shards, base replay, the two fork ones, deploy
    for name, files in [*((".github/workflows/x.yml", {".github/workflows/x.yml": b}) for b in blocks),
                        (".github/workflows/gate.yml", own)]:
        running = closure(name, reader(files))
        assert running is not None and running.unsure == (), running
        assert diffsplit.bucket_of(".github/workflows/release.yml", CATALOG, running) == "other"
        assert diffsplit.bucket_of("src/app.py", CATALOG, running) == "src"


# --- end to end: `verdict-gate run` as a GitHub Actions step runs it ---------------------------------------


# The workflow being run, end to end: its steps run scripts the ways issue 41 names, one through a symbolic
# link, and use a local action whose directory is a symbolic link.
E2E_GATE = GATE + """\
      - run: ./.github/workflows/gate.sh
      - run: bash ./ci/setup.sh
      - run: python ci/check.py
      - run: source ci/env.sh && echo "$X"
      - run: bash ./ci/linked.sh
      - uses: ./.github/actions/linked
"""
E2E_FILES = {**FILES, ".github/workflows/gate.yml": E2E_GATE, ".github/workflows/gate.sh": "#!/bin/sh\necho gate\n",
             "ci/setup.sh": "echo setup\n", "ci/check.py": "print('ok')\n", "ci/env.sh": "export X=1\n",
             "ci/unrelated.sh": "echo not run\n", "scripts/real.sh": "echo real\n",
             "tools/linked-action/action.yml": "runs:\n  using: composite\n  steps: []\n",
             "tools/other-action/action.yml": "runs:\n  using: composite\n  steps: []\n"}
LINKS = {".github/actions/linked": "../../tools/linked-action", "ci/linked.sh": "../scripts/real.sh"}


def _repo(tmp: Path) -> Path:
    repo = tmp / "repo"
    files = {**E2E_FILES, "src/calc.py": "def add(a, b):\n    return a + b\n",
             "oracle/properties/test_add.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
             "oracle/catalog.yaml": "version: 1\npython_path: [src]\nproperties:\n  - id: prop.add\n"
                                    "    oracle: properties/test_add.py\n    kind: example\n",
             "oracle/freeze_ledger.json": '{"version": 1, "freezes": []}'}
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    for rel, target in LINKS.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).symlink_to(target)
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
    ("ci/unrelated.sh", True, 0),  # a script no step runs: other, promoted
    (".github/workflows/release.yml", False, 3),  # outside Actions nothing says what runs: void, as before
    (".github/workflows/gate.yml", True, 3),  # the workflow being run
    (".github/actions/setup/action.yml", True, 3),  # a local action it uses
    # issue 41: each of these was `other` and promoted
    (".github/workflows/gate.sh", True, 3),  # run: ./x.sh
    ("ci/setup.sh", True, 3),  # run: bash ./x.sh
    ("ci/check.py", True, 3),  # run: python x.py
    ("ci/env.sh", True, 3),  # run: source x
    ("scripts/real.sh", True, 3),  # run: bash ./ci/linked.sh, a symbolic link to it
    ("tools/linked-action/action.yml", True, 3),  # uses: ./.github/actions/linked, a linked directory
    (".github/actions/linked", True, 3),  # … and the link itself, pointed elsewhere
])
def test_workflow_edits_in_a_run(tmp_path: Path, edit: str, in_actions: bool, code: int) -> None:
    repo = _repo(tmp_path)
    if (repo / edit).is_symlink():
        (repo / edit).unlink()
        (repo / edit).symlink_to("../../tools/other-action")
    else:
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
        workflow = edit.startswith(".github/workflows/")
        assert edited["workflow_edits"] == ([edit] if workflow else [])  # type: ignore[index]
        assert edit in edited["buckets"]["other"]  # type: ignore[index]
        running = edited["running"]
        assert running["workflow"] == ".github/workflows/gate.yml" and running["unsure"] == []  # type: ignore[index]
        assert {"ci/setup.sh", "scripts/real.sh", "ci/linked.sh"} <= set(running["files"])  # type: ignore[index]
        assert "tools/linked-action" in running["action_dirs"]  # type: ignore[index]
        assert ("do not run in this run" in proc.stdout and edit in proc.stdout) is workflow
    else:
        verdicts = json.loads((out / "verdicts.json").read_text())
        assert edit in verdicts["void_reason"]
        assert ("defines this run" if in_actions else "GITHUB_WORKFLOW_REF") in verdicts["void_reason"]


def test_a_step_the_gate_cannot_read_voids_every_edit(tmp_path: Path) -> None:
    """`bash "$SCRIPT"` with the script chosen by an expression: any file could be it, so an edit of the code
    under test voids the run too, and the reason names the step and the fix."""
    repo = _repo(tmp_path)
    gate = repo / ".github" / "workflows" / "gate.yml"
    gate.write_text(gate.read_text() + '      - run: bash "$SCRIPT"\n        env:\n'
                    "          SCRIPT: ${{ inputs.script }}\n")
    commit_all(repo, "a step that runs a script the run chooses")
    git(repo, "branch", "--force", "main")
    (repo / "src" / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    commit_all(repo, "the patch")
    out = tmp_path / "out"
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out),
               env=_actions_env(repo))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    reason = json.loads((out / "verdicts.json").read_text())["void_reason"]
    assert "src/calc.py" in reason and "cannot tell" in reason and "step 10" in reason and "bash $SCRIPT" in reason
    assert validate_evidence(out)["oracle_edited.json"]["running"]["unsure"]  # type: ignore[index]


# --- symbolic links, resolved in each revision's tree (host.workflows) ------------------------------------


@pytest.mark.fast
def test_links_are_followed_in_both_revisions(tmp_path: Path) -> None:
    from verdict_gate.host.workflows import _Tree, look

    repo = tmp_path / "r"
    for rel, text in {"tools/action/action.yml": "runs: {using: composite, steps: []}\n", "tools/action/x.sh": "",
                      "lib/real.sh": "echo\n", "lib/deep/inner.sh": "", "tools/b/action.yml": "runs: {}\n"}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    links = {"a/act": "../tools/action", "a/chain": "hop", "a/hop": "../lib/real.sh", "a/out": "../../../etc/passwd",
             "a/abs": "/etc/passwd", "a/loop1": "loop2", "a/loop2": "loop1", "tools/action/lib": "../../lib/deep",
             "a/swap": "../tools/action"}
    for rel, target in links.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).symlink_to(target)
    git(repo, "init", "--quiet")
    commit_all(repo, "base")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},vendor/tool")  # a submodule's entry
    git(repo, "commit", "--quiet", "-m", "a submodule")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "a" / "swap").unlink()
    (repo / "a" / "swap").symlink_to("../tools/b")  # the link pointed elsewhere in the candidate
    head = commit_all(repo, "head")
    trees = [_Tree(repo, head), _Tree(repo, base)]

    act = look(trees, "a/act", False)  # a linked directory, with a link inside it leading out of it
    assert set(act.files) >= {"a/act"} and set(act.dirs) == {"tools/action", "lib/deep"}, act
    yml = look(trees, "a/act/action.yml", True)
    assert set(yml.files) == {"a/act", "tools/action/action.yml"} and yml.docs and not yml.unknown, yml
    chain = look(trees, "a/chain", False)
    assert set(chain.files) == {"a/chain", "a/hop", "lib/real.sh"} and chain.texts == ("echo\n", "echo\n"), chain
    swap = look(trees, "a/swap/action.yml", False)  # each revision's target counts
    assert {"a/swap", "tools/action/action.yml", "tools/b/action.yml"} <= set(swap.files), swap
    tool = look(trees, "vendor/tool/run.sh", False)  # inside a submodule: its entry, the commit it pins
    assert tool.files == ("vendor/tool",) and not tool.unknown, tool
    for bad in ("a/out", "a/abs", "a/loop1/x"):
        assert look(trees, bad, False).unknown, bad  # cannot tell: the caller makes every edit control
    assert look(trees, "a/none.sh", False) == look(trees, "a/none.sh", False).__class__()  # in neither revision
