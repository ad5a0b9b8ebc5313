"""End to end on a real git repository, at the defaults: a property that fails half the time, frozen through the
README's workflow (`verdict-gate freeze --rev … --kind flaky`, 5 replays), then gated again and again
(docs/design.md §3, "Flaky freezes"; issues 24 and 40):

- the same honest patch, gated 20 times: 20 × promoted, each with the base tries its freeze's recorded rate
  plans (a flake at that rate missed at most once in 10,000 gates), reported per property;
- a patch that breaks the property's code, gated 3 times: 3 × blocked;
- a patch that fixes the code the flake is in: promoted, with no stale advice.

The flake is the test's own: each oracle process that imports the property draws the next coin of a sequence
the test wrote beside the repository (a seeded 50 % coin), so the gate's runs are as flaky as a real flake yet
this test decides the same way on every run, on any machine. Which of the base replay and the candidate run
(side by side) draws first may differ between runs; the outcome holds for either. The 20 honest gates run in
chunks of 5, each on a repository copy and a coin sequence of its own, so pytest-xdist spreads them.
"""

from __future__ import annotations

import fcntl
import json
import random
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from conftest import cli, commit_all, git, validate_evidence
from verdict_gate.core.tries import tries_for

CALC = '''
def half_up(n):
    return (n + 1) // 2


def add(a, b):
    return a + b
'''
# The property: it checks half_up, then, in about half of the processes, fails on a flaky call of its own. Its
# coin comes from a file beside the repository of the tree it runs in (found from its working directory's `.git`:
# the candidate's tree and the base's worktree are both worktrees of that repository). Read by the test itself, not
# by a `git` child: a test's child processes run fenced, with no access to the repository's .git.
HALF = '''
import fcntl
from pathlib import Path

from calc import half_up


def _common_dir():
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():  # a worktree: "gitdir: <repo>/.git/worktrees/<name>", whose commondir names <repo>/.git
            gitdir = Path(dot.read_text().split(":", 1)[1].strip())
            return (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
    raise FileNotFoundError(f"no .git above {here}")


def _coin():
    common = _common_dir()
    with open(Path(common).parent.parent / "coins", "r+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        cursor, sequence = held.read().split("\\n")[:2]
        held.seek(0)
        held.write(f"{int(cursor) + 1:08d}\\n{sequence}\\n")
    return sequence[int(cursor)] == "F"


UNLUCKY = _coin()  # once per process, like a flake that depends on the process's start


def test_half_up():
    assert half_up(3) == 2, "half_up(3)"
    if UNLUCKY:
        raise TimeoutError("the rounding service did not answer in time")
'''
ADD = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
HONEST = CALC + "\n\ndef double(x):\n    return 2 * x\n"  # beside the flaky property, which it leaves alone
BROKEN = CALC.replace("    return (n + 1) // 2", "    raise ValueError(f'{n} is odd')")  # fails before the flake
FIXED = CALC  # the flake is the test's: a patch cannot fix it, and must not be blamed for it
RUNS, CHUNKS = 5, 4  # 20 honest gates
REASON = "the rounding service times out in some runs; CALC-9"


def coins(path: Path, seed: int, count: int = 2_000) -> None:
    """``count`` coins of a seeded 50 % coin (F: this process's property fails), from the first."""
    draw = random.Random(seed)
    path.write_text(f"{0:08d}\n" + "".join("F" if draw.random() < 0.5 else "P" for _ in range(count)) + "\n")


def drawn(path: Path) -> str:
    cursor, sequence = path.read_text().split("\n")[:2]
    return sequence[:int(cursor)]


def _build(root: Path) -> dict[str, object]:
    """``main`` with the flaky property and its oracle, frozen as the README says; what the freeze printed."""
    repo = root / "repo"
    for rel, text in {"src/calc.py": CALC, "oracle/properties/test_half.py": HALF,
                      "oracle/properties/test_add.py": ADD, "oracle/fixtures/data.json": "{}\n"}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(textwrap.dedent(text))
    catalog = {"version": 1, "seed": 5, "python_path": ["src"],  # no replay_tries, no timeout: the defaults
               "properties": [{"id": "prop.half", "oracle": "properties/test_half.py", "kind": "example"},
                              {"id": "prop.add", "oracle": "properties/test_add.py", "kind": "example"}]}
    (repo / "oracle" / "catalog.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False))
    (repo / "oracle" / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}\n')
    assert cli("manifest", "write", str(repo / "oracle")).returncode == 0
    git(repo, "init", "--quiet")
    commit_all(repo, "the order service, with a flaky test")
    coins(root / "coins", seed=40)
    frozen = cli("freeze", "--rev", "main", "--pack", "git:main:oracle", "--id", "prop.half", "--kind", "flaky",
                 "--reason", REASON, "--ledger", "oracle/freeze_ledger.json", "--first-seen", "2026-11-01", cwd=repo)
    commit_all(repo, "freeze the flaky test")
    return {"repo": str(repo), "freeze": [frozen.returncode, frozen.stdout + frozen.stderr],
            "drawn": drawn(root / "coins")}


@pytest.fixture(scope="session")
def flaky_base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The frozen base, built once for every pytest-xdist worker of this session."""
    import os

    root = tmp_path_factory.getbasetemp()
    shared = (root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root) / "flaky-base"
    shared.mkdir(exist_ok=True)
    with open(shared / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = shared / "built.json"
        if not done.exists():
            done.write_text(json.dumps(_build(shared)))
        return json.loads(done.read_text())


def _record(base: dict[str, object]) -> dict:
    (record,) = json.loads((Path(str(base["repo"])) / "oracle" / "freeze_ledger.json").read_text())["freezes"]
    return record


def _gates(base: dict[str, object], tmp: Path, calc: str, runs: int, seed: int) -> list[tuple[int, dict, dict]]:
    """The patch ``calc`` gated ``runs`` times on a copy of the base with coins of its own: (exit code, evidence,
    prop.half's verdict) per gate; every coin drawn is accounted for by the evidence."""
    repo = tmp / "repo"
    shutil.copytree(str(base["repo"]), repo)
    coins(tmp / "coins", seed)
    git(repo, "checkout", "--quiet", "-b", "candidate")
    (repo / "src" / "calc.py").write_text(textwrap.dedent(calc))
    commit_all(repo, "the patch")
    out, processes = [], 0
    for i in range(runs):
        proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out",
                   str(tmp / f"out{i}"), "--today", "2026-11-30")
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
        docs = validate_evidence(tmp / f"out{i}")
        tries = [r["try"] for r in docs["base.sig.json"]["replays"] if r["prop_id"] == "prop.half"]
        assert tries == list(range(1, len(tries) + 1))  # every try kept, in order
        processes += len(tries) + 1  # each base try and the candidate's run: one process importing the property
        out.append((proc.returncode, docs, docs["verdicts.json"]["verdicts"]["prop.half"]))
    assert len(drawn(tmp / "coins")) == processes  # the coin is the flake's only source
    return out


def test_the_flake_is_frozen_as_flaky_through_the_readme_s_workflow(flaky_base):
    code, text = flaky_base["freeze"]
    assert code == 0 and "added a flaky freeze of prop.half" in text, text
    record = _record(flaky_base)
    assert record["kind"] == "flaky" and record["rate"]["replays"] == 5  # the default replays
    # The premise: 5 replays of a 50 % coin showed a flake (some failed, some passed).
    assert 1 <= record["rate"]["failed"] <= 4, record
    # check's two runs (under the gate, with no boundary) and the 5 replays each drew one coin.
    assert flaky_base["drawn"].count("F") >= record["rate"]["failed"] and len(flaky_base["drawn"]) == 7


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_the_same_honest_patch_is_promoted_every_time(flaky_base, tmp_path, chunk):
    record = _record(flaky_base)
    plan = tries_for((record["rate"]["failed"], record["rate"]["replays"]))
    for code, docs, half in _gates(flaky_base, tmp_path, HONEST, RUNS, seed=100 + chunk):
        assert (docs["verdicts.json"]["outcome"], code) == ("promoted", 0), half
        assert (half["verdict"], half["reason"]) in (("pass", "held"), ("inconclusive", "frozen")), half
        assert half["notes"] == [] and "stale" not in half["detail"]  # the flake not showing is expected
        notice = next(n for n in docs["verdicts.json"]["notices"] if "prop.half: flaky freeze" in n)
        assert f"{plan} tries planned (its freeze failed {record['rate']['failed']} of 5 replays)" in notice, notice
        tried = [r for r in docs["base.sig.json"]["replays"] if r["prop_id"] == "prop.half"]
        assert len(tried) <= plan
        if half["verdict"] == "inconclusive":  # the flake showed on the candidate: a base try showed it too
            assert tried[-1]["status"] == "fail"
            assert f"try {len(tried)} showed what the candidate's run showed" in notice, notice
        else:
            assert len(tried) == 1 and "candidate passed" in notice, notice


def test_a_broken_patch_is_blocked_every_time(flaky_base, tmp_path):
    for code, docs, half in _gates(flaky_base, tmp_path, BROKEN, 3, seed=200):
        assert (docs["verdicts.json"]["outcome"], code) == ("blocked", 1), half
        assert (half["verdict"], half["reason"]) == ("fail", "signature_mismatch"), half
        failures = docs["runs.json"]["runs"]["prop.half"]["failures"]
        assert [f["exc_type"] for f in failures] == ["builtins.ValueError"], failures
        assert len([r for r in docs["base.sig.json"]["replays"] if r["prop_id"] == "prop.half"]) == 1  # no extra try
        notice = next(n for n in docs["verdicts.json"]["notices"] if "prop.half: flaky freeze" in n)
        assert "failed outside the freeze, so no try could change its verdict" in notice, notice


def test_a_patch_that_leaves_the_flake_is_never_told_the_freeze_is_stale(flaky_base, tmp_path):
    for code, docs, half in _gates(flaky_base, tmp_path, FIXED, 2, seed=300):
        assert (docs["verdicts.json"]["outcome"], code) == ("promoted", 0)
        assert half["notes"] == [] and "stale" not in half["detail"]
