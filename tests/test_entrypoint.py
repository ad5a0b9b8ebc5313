"""entrypoint.py under a simulated GitHub runner: no Docker, no GitHub, real git and real gate runs.

Each test builds what the runner gives a Docker action: a workspace (the example repository,
sometimes a clone of it, shallow or owned by another uid), ``GITHUB_OUTPUT`` and
``GITHUB_STEP_SUMMARY`` files, an event payload at ``GITHUB_EVENT_PATH``, ``RUNNER_TEMP`` and
``INPUT_*`` variables spelled as GitHub spells them (``INPUT_ORACLE-PACK``). The entrypoint runs
in-process (``entrypoint.main``) or as ``python entrypoint.py`` in the workspace, as the
container's ENTRYPOINT runs it.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from test_github import read_output_file, runner_parse

from conftest import ROOT, commit_all, git, validate_evidence
from verdict_gate.demo import _apply, examples_dir
from verdict_gate.github import action

CANDIDATES = {c["name"]: c for c in yaml.safe_load((examples_dir() / "candidates.yaml").read_text())["candidates"]}
TOKEN = "ghs_verdictGateTestToken0123456789"


def load_entrypoint() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verdict_gate_entrypoint", ROOT / "entrypoint.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


entrypoint = load_entrypoint()


def apply_candidate(repo: Path, name: str) -> str:
    _apply(repo, CANDIDATES[name]["edits"])
    return commit_all(repo, CANDIDATES[name]["description"])


def clean_env() -> dict[str, str]:
    """This process's environment without anything a runner would set, and without the
    machine's git configuration (a fresh container has none)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_", "GIT_CONFIG"))}
    env.update({"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})
    return env


@dataclass
class Result:
    code: int
    stdout: str
    outputs: dict[str, str]
    summary: str
    commands: list[tuple[str, dict[str, str], str]]  # workflow commands the runner would act on
    quiet: list[str]  # lines inside ::stop-commands:: (never acted on)


@dataclass
class Runner:
    """A simulated runner for one step."""

    root: Path
    workspace: Path
    env: dict[str, str] = field(default_factory=clean_env)

    def __post_init__(self) -> None:
        (self.root / "temp").mkdir(exist_ok=True)
        self.output = self.root / "github_output"
        self.summary = self.root / "step_summary.md"
        self.output.write_text("")
        self.summary.write_text("")
        self.env.update({
            "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_OUTPUT": str(self.output), "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": "https://api.github.com",
            "RUNNER_TEMP": str(self.root / "temp"),
            # action.yml defaults, as the runner fills them in
            "INPUT_SARIF-CATEGORY": "verdict-gate", "INPUT_FAIL-ON": "blocked,void,incomplete",
            "INPUT_FETCH-HISTORY": "true", "INPUT_WORKING-DIRECTORY": ".", "INPUT_GITHUB-TOKEN": TOKEN,
            "INPUT_RUNNER-TEMP": "host:/home/runner/work/_temp",
        })

    def event(self, name: str, payload: dict[str, Any]) -> Runner:
        path = self.root / "event.json"
        path.write_text(json.dumps(payload))
        self.env.update({"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(path)})
        return self

    def inputs(self, **values: str) -> Runner:
        for key, value in values.items():
            self.env["INPUT_" + key.replace("_", "-").upper()] = value
        return self

    def _result(self, code: int, stdout: str) -> Result:
        commands, quiet, stop = [], [], None
        for line in stdout.splitlines():
            if stop is not None:
                if line == f"::{stop}::":
                    stop = None
                else:
                    quiet.append(line)
            elif line.startswith("::stop-commands::"):
                stop = line.removeprefix("::stop-commands::")
            elif line.startswith("::"):
                commands.append(runner_parse(line))
        assert stop is None, "workflow commands were stopped and never resumed"
        outputs = read_output_file(self.output.read_text()) if self.output.is_file() else {}
        return Result(code, stdout, outputs, self.summary.read_text(), commands, quiet)

    def run(self) -> Result:
        out = io.StringIO()
        code = entrypoint.main([], self.env, stdout=out)
        return self._result(code, out.getvalue())

    def run_container(self) -> Result:
        """``python entrypoint.py`` with the workspace as working directory (the container's
        ENTRYPOINT; GitHub sets --workdir /github/workspace)."""
        proc = subprocess.run([sys.executable, str(ROOT / "entrypoint.py")], cwd=self.workspace, env=self.env,
                              capture_output=True, text=True, timeout=300)
        return self._result(proc.returncode, proc.stdout + proc.stderr)


def pr_event(repo: Path, base: str = "main") -> dict[str, Any]:
    return {"pull_request": {"number": 7, "base": {"sha": git(repo, "rev-parse", base), "ref": base},
                             "head": {"sha": git(repo, "rev-parse", "HEAD")}}}


def annotations(result: Result) -> list[tuple[str, dict[str, str], str]]:
    return [c for c in result.commands if c[0] in ("error", "warning", "notice")]


# --- outcomes ---------------------------------------------------------------------------------


def test_pull_request_promoted(example_repo: Path, tmp_path: Path) -> None:
    apply_candidate(example_repo, "good-refactor")
    runner = Runner(tmp_path, example_repo).event("pull_request", pr_event(example_repo))
    res = runner.run()
    assert res.code == 0, res.stdout
    evidence = tmp_path / "temp" / "verdict-gate"
    assert res.outputs == {
        "outcome": "promoted", "promoted": "true", "pass-count": "1", "fail-count": "0", "inconclusive-count": "1",
        # RUNNER_TEMP as later steps see it: the host's runner.temp, from the runner-temp input
        "evidence-dir": "/home/runner/work/_temp/verdict-gate",
        "sarif-file": "/home/runner/work/_temp/verdict-gate/results.sarif",
        "base-revision": git(example_repo, "rev-parse", "main"),
    }
    docs = validate_evidence(evidence)
    assert docs["verdicts.json"]["outcome"] == "promoted"
    sarif = docs["results.sarif"]
    assert sarif["runs"][0]["automationDetails"]["id"] == "verdict-gate/"
    (warning,) = annotations(res)
    assert warning[0] == "warning"
    assert warning[1]["file"] == "oracle/properties/test_tax_round.py" and int(warning[1]["line"]) >= 1
    assert warning[1]["title"] == "verdict-gate: prop.tax_round inconclusive (frozen)"
    assert res.summary.startswith("## verdict-gate: **promoted**")
    assert "| `prop.tax_round` | inconclusive | `frozen` |" in res.summary
    assert "pull_request: the pull request's base main" in res.summary
    assert "outcome `promoted` does not fail the step" in res.summary
    assert any(line.startswith("outcome: promoted") for line in res.quiet)  # the gate's log, commands stopped
    assert TOKEN not in res.stdout + res.summary + runner.output.read_text()


def test_blocked_fails_the_step_unless_fail_on_allows_it(example_repo: Path, tmp_path: Path) -> None:
    apply_candidate(example_repo, "new-failure")
    runner = Runner(tmp_path, example_repo).event("pull_request", pr_event(example_repo))
    runner.inputs(fail_on="void incomplete", out="evidence/gate", sarif_category="gate/orders")
    res = runner.run()
    assert res.code == 0, res.stdout  # blocked, but fail-on leaves it out
    assert res.outputs["outcome"] == "blocked" and res.outputs["promoted"] == "false"
    assert res.outputs["fail-count"] == "1" and res.outputs["inconclusive-count"] == "1"
    # a relative `out` is in the workspace and given to later steps relative to it
    assert res.outputs["evidence-dir"] == "evidence/gate"
    assert res.outputs["sarif-file"] == "evidence/gate/results.sarif"
    sarif = validate_evidence(example_repo / "evidence" / "gate")["results.sarif"]
    assert sarif["runs"][0]["automationDetails"]["id"] == "gate/orders/"
    errors = [a for a in annotations(res) if a[0] == "error"]
    assert [a[1]["title"] for a in errors] == ["verdict-gate: prop.order_total fail (no_freeze)"]
    assert [a[0] for a in annotations(res)] == ["error", "warning"]  # worst first
    assert "outcome `blocked` does not fail the step (fail-on: incomplete, void)" in res.summary


def test_void_fails_and_stale_evidence_is_removed(example_repo: Path, tmp_path: Path) -> None:
    hostile = "oracle/notes\n::error title=x::injected 100%"
    (example_repo / hostile).write_text("x")
    apply_candidate(example_repo, "edit-ledger")
    runner = Runner(tmp_path, example_repo).event("pull_request", pr_event(example_repo))
    stale = tmp_path / "temp" / "verdict-gate"
    stale.mkdir(parents=True)
    (stale / "runs.json").write_text("{}")  # from an earlier run in this job
    res = runner.run()
    assert res.code == 3, res.stdout
    assert res.outputs["outcome"] == "void" and res.outputs["promoted"] == "false"
    assert not (stale / "runs.json").exists()
    (error,) = annotations(res)
    assert error[0] == "error" and error[1]["title"] == "verdict-gate: void"
    # the file name arrives whole, in one line, its newline shown as \x0a (never a line break)
    assert hostile.replace("\n", "\\x0a") in error[2]
    # the injected command in the gate's log is inside ::stop-commands:: and never acted on
    assert any("::error title=x::injected" in line for line in res.quiet)
    assert not any(c[2].startswith("injected") for c in res.commands)
    assert res.summary.startswith("## verdict-gate: **void**")


# --- events -------------------------------------------------------------------------------------


def test_test_merge_commit_uses_its_first_parent_when_the_base_moved(example_repo: Path, tmp_path: Path) -> None:
    head = apply_candidate(example_repo, "good-refactor")
    event = pr_event(example_repo)  # base.sha: main as it was when the event fired
    git(example_repo, "checkout", "--quiet", "main")
    (example_repo / "NEWS.md").write_text("main moved on\n")
    moved = commit_all(example_repo, "main moves on")
    git(example_repo, "checkout", "--quiet", "--detach", moved)
    git(example_repo, "merge", "--quiet", "--no-ff", "-m", "Merge candidate into main", head)  # refs/pull/N/merge
    res = Runner(tmp_path, example_repo).event("pull_request", event).run()
    assert res.code == 0, res.stdout
    assert res.outputs["base-revision"] == moved  # not the stale base.sha: NEWS.md is not part of the patch
    assert "the test merge commit's first parent" in res.summary
    oracle_edited = validate_evidence(tmp_path / "temp" / "verdict-gate")["oracle_edited.json"]
    assert "NEWS.md" not in json.dumps(oracle_edited)


def test_pull_request_target_on_the_base_warns(example_repo: Path, tmp_path: Path) -> None:
    event = pr_event(example_repo)
    apply_candidate(example_repo, "good-refactor")
    event["pull_request"]["head"]["sha"] = git(example_repo, "rev-parse", "HEAD")
    git(example_repo, "checkout", "--quiet", "main")  # what pull_request_target checks out by default
    res = Runner(tmp_path, example_repo).event("pull_request_target", event).run()
    warnings = [a for a in annotations(res) if a[0] == "warning" and "neither the pull request's head" in a[2]]
    assert len(warnings) == 1


def test_push_to_a_feature_branch_compares_with_the_default_branch(example_repo: Path, tmp_path: Path) -> None:
    apply_candidate(example_repo, "good-refactor")
    workspace = _clone(example_repo, tmp_path / "ws", "--branch", "candidate")
    payload = {"before": git(example_repo, "rev-parse", "main"), "after": git(example_repo, "rev-parse", "HEAD"),
               "ref": "refs/heads/candidate", "repository": {"default_branch": "main"}}
    res = Runner(tmp_path, workspace).event("push", payload).run()
    assert res.code == 0 and res.outputs["outcome"] == "promoted", res.stdout
    assert "push to candidate: compared with the default branch refs/remotes/origin/main" in res.stdout
    assert "oracle read from refs/remotes/origin/main" in res.stdout


def test_push_reads_the_oracle_from_the_default_branch(example_repo: Path, tmp_path: Path) -> None:
    """An earlier push to the branch weakened a property (void then, but pushed all the same); the
    next push, whose `before` is that commit, must not be scored against the weakened oracle."""
    apply_candidate(example_repo, "edit-property")  # weakens prop.order_total
    assert subprocess.run([sys.executable, "-m", "verdict_gate", "manifest", "write", str(example_repo / "oracle")],
                          capture_output=True).returncode == 0
    weakened = commit_all(example_repo, "weaken the oracle and rewrite its manifest")
    apply_candidate(example_repo, "new-failure")  # then break the order total
    workspace = _clone(example_repo, tmp_path / "ws", "--branch", "candidate")
    payload = {"before": weakened, "after": git(example_repo, "rev-parse", "HEAD"),
               "ref": "refs/heads/candidate", "repository": {"default_branch": "main"}}
    res = Runner(tmp_path, workspace).event("push", payload).run()
    # Compared with the default branch, the earlier push's oracle edit is in the diff: void.
    assert res.outputs["outcome"] == "void" and res.code == 3, res.stdout
    assert "oracle/manifest.sha256" in res.stdout


def _clone(origin: Path, dest: Path, *args: str) -> Path:
    subprocess.run(["git", "clone", "--quiet", *args, f"file://{origin}", str(dest)], check=True,
                   env=clean_env(), capture_output=True)
    return dest


def test_push_of_a_new_branch_compares_with_the_default_branch(example_repo: Path, tmp_path: Path) -> None:
    head = apply_candidate(example_repo, "new-failure")
    ws = _clone(example_repo, tmp_path / "ws", "--branch", "candidate")
    payload = {"before": "0" * 40, "after": head, "created": True, "ref": "refs/heads/candidate",
               "repository": {"default_branch": "main"}}
    res = Runner(tmp_path, ws).event("push", payload).run()
    assert res.code == 1, res.stdout
    assert res.outputs["outcome"] == "blocked"
    assert res.outputs["base-revision"] == git(example_repo, "rev-parse", "main")
    assert "push to candidate: compared with the default branch refs/remotes/origin/main" in res.stdout


def test_push_of_the_default_branch_falls_back_to_the_parent(example_repo: Path, tmp_path: Path) -> None:
    git(example_repo, "checkout", "--quiet", "main")
    parent = git(example_repo, "rev-parse", "HEAD")
    head = apply_candidate(example_repo, "good-refactor")
    payload = {"before": "0" * 40, "after": head, "created": True, "ref": "refs/heads/main",
               "repository": {"default_branch": "main"}}
    res = Runner(tmp_path, example_repo).event("push", payload).run()
    assert res.code == 0, res.stdout
    assert res.outputs["base-revision"] == parent
    assert "compared with the parent commit HEAD^" in res.summary


def test_merge_group_uses_its_base_sha(example_repo: Path, tmp_path: Path) -> None:
    apply_candidate(example_repo, "change-fixture")
    payload = {"merge_group": {"base_sha": git(example_repo, "rev-parse", "main"), "base_ref": "refs/heads/main",
                               "head_sha": git(example_repo, "rev-parse", "HEAD")}}
    res = Runner(tmp_path, example_repo).event("merge_group", payload).run()
    assert res.code == 1, res.stdout
    assert res.outputs["outcome"] == "blocked"
    titles = [a[1]["title"] for a in annotations(res)]
    assert "verdict-gate: prop.tax_round fail (digest_mismatch)" in titles
    assert "merge_group: the merge queue's base" in res.summary


def test_workflow_dispatch_needs_the_base_input(example_repo: Path, tmp_path: Path) -> None:
    apply_candidate(example_repo, "good-refactor")
    runner = Runner(tmp_path, example_repo).event("workflow_dispatch", {"inputs": {}})
    res = runner.run()
    assert res.code == 2
    assert res.outputs["outcome"] == "" and res.outputs["promoted"] == "false"
    (error,) = annotations(res)
    assert error[1]["title"] == "verdict-gate configuration error"
    assert "is required for workflow_dispatch" in error[2] and "with: base:" in error[2]
    assert "## verdict-gate: **configuration error**" in res.summary
    assert "**verdict-gate" not in res.summary  # the heading says verdict-gate once
    # a branch name works: the checkout may only have origin/NAME, tried next
    runner.output.write_text("")
    res = runner.inputs(base="main").run()
    assert res.code == 0, res.stdout
    assert res.outputs["outcome"] == "promoted"


# --- the container's git -----------------------------------------------------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the workspace to another uid")
def test_workspace_owned_by_another_uid_as_the_container_runs(example_repo: Path, tmp_path: Path) -> None:
    apply_candidate(example_repo, "good-refactor")
    ws = _clone(example_repo, tmp_path / "ws", "--branch", "candidate")
    event = pr_event(ws, "origin/main")
    subprocess.run(["chown", "-R", "1234:1234", str(ws)], check=True)
    refused = subprocess.run(["git", "-C", str(ws), "status"], env=clean_env(), capture_output=True, text=True)
    assert refused.returncode != 0 and "dubious ownership" in refused.stderr  # what the entrypoint must handle
    runner = Runner(tmp_path, ws).event("pull_request", event)
    res = runner.run_container()
    assert res.code == 0, res.stdout
    assert res.outputs["outcome"] == "promoted"
    # git's configuration was for the process only: nothing written to a config file
    assert "safe" not in (ws / ".git" / "config").read_text()
    # what the container wrote belongs to the workspace owner, so later steps can use it
    evidence = tmp_path / "temp" / "verdict-gate"
    assert {(p.stat().st_uid, p.stat().st_gid) for p in [evidence, *evidence.iterdir()]} == {(1234, 1234)}
    root_owned = [p for p in (ws / ".git").rglob("*") if p.lstat().st_uid != 1234]
    assert root_owned == []


def test_shallow_clone_is_deepened_from_origin(example_repo: Path, tmp_path: Path) -> None:
    apply_candidate(example_repo, "good-refactor")
    ws = _clone(example_repo, tmp_path / "ws", "--depth", "1", "--branch", "candidate")
    assert subprocess.run(["git", "-C", str(ws), "rev-parse", "--is-shallow-repository"], capture_output=True,
                          text=True, env=clean_env()).stdout.strip() == "true"
    res = Runner(tmp_path, ws).event("pull_request", pr_event(example_repo)).run()
    assert res.code == 0, res.stdout
    assert res.outputs["outcome"] == "promoted"
    assert "the clone is shallow; fetching the full history from origin" in res.stdout


@pytest.mark.parametrize("how", ["fetch-history false", "origin unreachable"])
def test_shallow_clone_without_the_merge_base_stops_with_the_fix(example_repo: Path, tmp_path: Path,
                                                                 how: str) -> None:
    apply_candidate(example_repo, "good-refactor")
    event = pr_event(example_repo)
    ws = _clone(example_repo, tmp_path / "ws", "--depth", "1", "--branch", "candidate")
    runner = Runner(tmp_path, ws).event("pull_request", event)
    if how == "fetch-history false":
        runner.inputs(fetch_history="false")
    else:
        subprocess.run(["git", "-C", str(ws), "remote", "set-url", "origin", f"file://{tmp_path}/gone"], check=True,
                       env=clean_env())
    res = runner.run()
    assert res.code == 2, res.stdout
    assert res.outputs["outcome"] == "" and res.outputs["promoted"] == "false"
    (error,) = annotations(res)
    assert "fetch-depth: 0" in error[2] and "shallow" in error[2]
    assert "fetch-depth: 0" in res.summary
    assert not (tmp_path / "temp" / "verdict-gate" / "verdicts.json").exists()  # never an empty diff


# --- fail closed, inputs, environment ---------------------------------------------------------


def test_internal_error_never_exits_zero(example_repo: Path, tmp_path: Path) -> None:
    apply_candidate(example_repo, "good-refactor")
    runner = Runner(tmp_path, example_repo).event("pull_request", pr_event(example_repo))
    runner.output.unlink()
    runner.output.mkdir()  # GITHUB_OUTPUT cannot be written: the outputs of a promoted run are lost
    res = runner.run()
    assert res.code == 2
    (error,) = annotations(res)
    assert error[1]["title"] == "verdict-gate internal error"
    assert "IsADirectoryError" in error[2]


def test_bad_inputs_and_arguments_are_usage_errors(tmp_path: Path) -> None:
    runner = Runner(tmp_path, tmp_path).event("pull_request", {"pull_request": {"base": {"sha": "a" * 40}}})
    out = io.StringIO()
    assert entrypoint.main(["--base", "x"], runner.env, stdout=out) == 2
    assert "are not accepted" in out.getvalue()
    for name, value, message in [("fail-on", "promoted", "not an outcome"), ("fetch-history", "yes", "not a boolean"),
                                 ("working-directory", "missing", "does not exist")]:
        runner.output.write_text("")
        res = Runner(tmp_path, tmp_path, dict(runner.env)).inputs(**{name.replace("-", "_"): value}).run()
        assert res.code == 2
        assert message in annotations(res)[0][2]


def test_entrypoint_does_nothing_at_import_time(tmp_path: Path) -> None:
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('ep', {str(ROOT / 'entrypoint.py')!r})\n"
            "mod = importlib.util.module_from_spec(spec); sys.modules['ep'] = mod\n"
            "spec.loader.exec_module(mod)\n"
            "print(sorted(m for m in sys.modules if m == 'verdict_gate' or m.startswith('verdict_gate.')))\n")
    proc = subprocess.run([sys.executable, "-P", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env=clean_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_git_environment(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet")
    git(repo, "remote", "add", "origin", "https://github.com/acme/orders.git")
    env = Runner(tmp_path, repo).env
    settings = action.read_settings(env)
    log = io.StringIO()
    out = action.git_environment(settings, {**env, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b",
                                                "GIT_CONFIG_VALUE_0": "c"}, log)
    assert out["GITHUB_TOKEN"] == TOKEN and out["GIT_TERMINAL_PROMPT"] == "0"
    pairs = {out[f"GIT_CONFIG_KEY_{i}"]: out[f"GIT_CONFIG_VALUE_{i}"] for i in range(int(out["GIT_CONFIG_COUNT"]))}
    assert pairs["a.b"] == "c"  # what was there stays
    assert pairs["safe.directory"] == str(repo)
    assert pairs["http.https://github.com/.extraheader"].startswith("AUTHORIZATION: basic ")
    assert TOKEN not in log.getvalue()
    # another host, or a clone that already carries a header (persist-credentials: true): no header
    git(repo, "remote", "set-url", "origin", "https://git.example.com/acme/orders.git")
    out = action.git_environment(settings, env, log)
    assert "http.https://github.com/.extraheader" not in out.values()
    git(repo, "remote", "set-url", "origin", "https://github.com/acme/orders.git")
    git(repo, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic persisted")
    out = action.git_environment(settings, env, log)
    assert "http.https://github.com/.extraheader" not in out.values()


def test_evidence_location(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = Runner(tmp_path, ws).env
    settings = action.read_settings(env)
    # RUNNER_TEMP mounted in the container: written there, named for later steps by runner.temp
    assert action.evidence_location(settings, env) == (tmp_path / "temp" / "verdict-gate",
                                                           "/home/runner/work/_temp/verdict-gate")
    # a runner that does not mount RUNNER_TEMP: the workspace, named relative to it
    gone = {**env, "RUNNER_TEMP": "/home/runner/work/_temp"}
    assert action.evidence_location(settings, gone) == (ws / ".verdict-gate", ".verdict-gate")
    # no runner-temp input (not a Docker action): the path is the same everywhere
    plain = action.read_settings({**env, "INPUT_RUNNER-TEMP": ""})
    assert action.evidence_location(plain, env)[1] == str(tmp_path / "temp" / "verdict-gate")
    absolute = action.read_settings({**env, "INPUT_OUT": "/srv/evidence"})
    assert action.evidence_location(absolute, env) == (Path("/srv/evidence"), "/srv/evidence")
    assert action.pack_source("packs/oracle.tar.gz", ws) == str(ws / "packs/oracle.tar.gz")
    for source in ("git:main:oracle", "artifact:oracle-pack", "https://x.example/p.tgz#sha256=00", "/abs/pack"):
        assert action.pack_source(source, ws) == source


def test_action_inputs_match_the_entrypoint() -> None:
    """Every input the entrypoint reads is declared in action.yml with a default, and back."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    declared = set(action["inputs"])
    source = (ROOT / "verdict_gate" / "github" / "action.py").read_text()
    import re

    read = set(re.findall(r'get_(?:bool_)?input\(environ, "([a-z0-9-]+)"', source))
    assert read == declared
    assert all("default" in spec and "Default" in spec["description"] for spec in action["inputs"].values())
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert action["inputs"]["fail-on"]["default"] == "blocked,void,incomplete"
    assert set(action["outputs"]) >= {"outcome", "promoted", "pass-count", "fail-count", "inconclusive-count",
                                      "sarif-file", "evidence-dir"}
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}


def test_outputs_declared_are_the_outputs_written(example_repo: Path, tmp_path: Path) -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    runner = Runner(tmp_path, example_repo).event("workflow_dispatch", {})
    res = runner.run()  # a configuration error still sets every output
    assert set(res.outputs) == set(action["outputs"])
    shutil.rmtree(tmp_path / "temp", ignore_errors=True)


def test_oracle_pack_from_an_artifact(example_repo: Path, tmp_path: Path) -> None:
    """The action end to end with `oracle-pack: artifact:NAME`: the pack built by `pack build` on the
    base, uploaded by a trusted run, found through the (loopback) GitHub REST API."""
    from http_fakes import FakeGitHub, zip_bytes

    from verdict_gate.pack import build as packbuild

    commit_all(example_repo, "candidate")
    base_pack = tmp_path / "base-oracle"
    git(example_repo, "worktree", "add", "--quiet", "--detach", str(tmp_path / "base-tree"), "main")
    shutil.copytree(tmp_path / "base-tree" / "oracle", base_pack)
    archive = tmp_path / "oracle-pack.tar.gz"
    packbuild.build(base_pack, archive)
    with FakeGitHub(token=TOKEN) as gh:
        run = gh.add_run("acme/shop", "oracle-pack.yml")
        art = gh.add_artifact(run, "oracle-pack", zip_bytes({"oracle-pack.tar.gz": archive.read_bytes()}))
        runner = Runner(tmp_path, example_repo).event("pull_request", pr_event(example_repo))
        runner.env.update({"GITHUB_API_URL": gh.api.url, "GITHUB_REPOSITORY": "acme/shop"})
        runner.inputs(oracle_pack="artifact:oracle-pack", oracle_pack_workflow="oracle-pack.yml")
        res = runner.run()
    assert res.code == 0, res.stdout
    assert res.outputs["outcome"] == "promoted"
    evidence = next(p for p in tmp_path.rglob("verdicts.json"))
    verdicts = json.loads(evidence.read_text())
    assert verdicts["pack"]["artifact"]["artifact_id"] == art["id"]
    assert verdicts["pack"]["artifact"]["run_id"] == run["id"]
    assert TOKEN not in res.stdout and TOKEN not in evidence.read_text()


# --- shards: a matrix of shard jobs and one merge job (reusable workflow input `shards`) ----------------


def test_shards_then_merge_decide_like_one_job(example_repo: Path, tmp_path: Path) -> None:
    apply_candidate(example_repo, "new-failure")
    for name in ("whole", "s1", "s2", "m", "m2"):
        (tmp_path / name).mkdir()
    whole = Runner(tmp_path / "whole", example_repo).event("pull_request", pr_event(example_repo))
    whole.env["GITHUB_RUN_ID"] = "4242"
    one = whole.run()
    downloads = example_repo / ".verdict-gate-shards"
    for k in (1, 2):
        runner = Runner(tmp_path / f"s{k}", example_repo).event("pull_request", pr_event(example_repo))
        runner.env["GITHUB_RUN_ID"] = "4242"
        res = runner.inputs(shard=f"{k}/2").run()
        assert res.code == 0, res.stdout
        assert res.outputs["outcome"] == "" and res.outputs["promoted"] == "false"
        assert res.summary.startswith(f"## verdict-gate shard {k}/2")
        evidence = tmp_path / f"s{k}" / "temp" / "verdict-gate"
        assert not (evidence / "verdicts.json").exists()
        shutil.copytree(evidence, downloads / f"verdict-gate-shard-1-{k}")  # as download-artifact lays them out
    merge = Runner(tmp_path / "m", example_repo).event("pull_request", pr_event(example_repo))
    res = merge.inputs(merge_shards=".verdict-gate-shards").run()
    assert res.code == one.code == 1, res.stdout
    assert {k: v for k, v in res.outputs.items() if k not in ("evidence-dir", "sarif-file")} == \
        {k: v for k, v in one.outputs.items() if k not in ("evidence-dir", "sarif-file")}
    assert [a[1].get("title") for a in annotations(res)] == [a[1].get("title") for a in annotations(one)]
    merged = validate_evidence(tmp_path / "m" / "temp" / "verdict-gate")["verdicts.json"]
    assert merged["outcome"] == "blocked"

    shutil.rmtree(downloads / "verdict-gate-shard-1-2")  # a shard job that never uploaded
    res = Runner(tmp_path / "m2", example_repo).event("pull_request", pr_event(example_repo)).inputs(
        merge_shards=".verdict-gate-shards").run()
    assert res.code == 4 and res.outputs["outcome"] == "incomplete", res.stdout
    assert "shard 2/2 is missing" in res.summary


def test_shard_inputs_are_checked(example_repo: Path, tmp_path: Path) -> None:
    for inputs, needle in (({"shard": "3/2"}, "input shard"), ({"shard": "1/2", "merge_shards": "x"}, "both set"),
                           ({"merge_shards": "nowhere"}, "is not a directory")):
        runner = Runner(tmp_path, example_repo).event("pull_request", pr_event(example_repo))
        res = runner.inputs(**inputs).run()
        assert res.code == 2 and needle in res.stdout, res.stdout
