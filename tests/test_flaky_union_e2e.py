"""End to end on a real git repository: a flaky union (issue 41): a property whose processes each show one of
two failures, never both (decided by ``os.urandom``, which the Hypothesis seed does not control), frozen as one
flaky freeze of both from 14 real replays; left alone it is promoted 20 times of 20; a patch that makes it show
both and hides a new bug on inputs that held on every base try is blocked (the example check compares the
candidate with every try that showed either failure; before, it compared with none and promoted).

The 20 gate runs are split in chunks of 5, so pytest-xdist spreads them over the cores; the frozen base is built
once for every worker (under a lock). The catalog's ``replay_tries: 16`` keeps an honest gate's chance of a false
block under 1 in 60,000 (the candidate shows a failure and 16 base tries all miss it: 0.5^16). The property's
``timeout: 900`` keeps the tries from being cut by the time they take, so how many the gate makes, and so every
outcome here, does not depend on the machine's speed or load. (The 50 % flake of issues 24 and 40, at the
defaults and drawn from the test's own coin, is tests/test_flaky_e2e.py.)
"""

from __future__ import annotations

import fcntl
import json
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from conftest import cli, commit_all, git, validate_evidence

HALF = '''
from hypothesis import given, strategies as st
from calc import half_up

@given(n=st.integers(min_value=0, max_value=10_000))
def test_half_up(n):
    assert half_up(n) == (n + 1) // 2, f"half_up({n})"
'''
ADD = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
# The flaky union: each process picks one of two ways to fail (rounding half to even, wrong for n = 1 mod 4;
# refusing odd numbers over 1000), never both, so no base replay try shows both failures.
UNION_CALC = '''
import os

# Decided once per process by the operating system's randomness, which the Hypothesis seed does not
# control: half of the processes round half to even, the others refuse large odd numbers. Never both.
_MODE = os.urandom(1)[0] % 2


def half_up(n):
    if _MODE == 0:
        return round(n / 2)
    if n % 2 and n > 1000:
        raise ValueError(f"{n} is odd and too big")
    return (n + 1) // 2


def add(a, b):
    return a + b
'''
UNION_HONEST = UNION_CALC + "\n\ndef double(x):\n    return 2 * x\n"
# Both failures every time, exactly as frozen (the same exceptions, messages and smallest inputs), and a new bug
# on even numbers between 4000 and 6000, which held on every base try: it fails the same assertion, so
# Hypothesis reports it as the frozen AssertionError, shrunk to the same n = 1.
UNION_HIDDEN = UNION_CALC.replace('''    if _MODE == 0:
        return round(n / 2)
    if n % 2 and n > 1000:
        raise ValueError(f"{n} is odd and too big")
''', '''    if n % 2 and n > 1000:
        raise ValueError(f"{n} is odd and too big")
    if n % 4 == 1:
        return round(n / 2)
    if 4000 < n < 6000 and n % 2 == 0:
        return n // 2 + 1
''')
REPLAYS = 14  # the freeze's replays: all 14 alike (a flake taken for deterministic) has a chance of 2 in 16,384
RUNS, CHUNKS = 5, 4  # 20 gate runs per patch


def _build(root: Path, calc: str) -> dict[str, object]:
    """``main`` with the flaky code ``calc`` and its oracle, the flake frozen by real replays; returns what the
    commands printed."""
    repo = root / "repo"
    for rel, text in {"src/calc.py": calc, "oracle/properties/test_half.py": HALF,
                      "oracle/properties/test_add.py": ADD, "oracle/fixtures/data.json": "{}\n"}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(textwrap.dedent(text))
    catalog = {"version": 1, "seed": 5, "python_path": ["src"], "replay_tries": 16,
               "properties": [{"id": "prop.half", "oracle": "properties/test_half.py", "timeout": 900},
                              {"id": "prop.add", "oracle": "properties/test_add.py", "kind": "example"}]}
    (repo / "oracle" / "catalog.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False))
    (repo / "oracle" / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}\n')
    assert cli("manifest", "write", str(repo / "oracle")).returncode == 0
    git(repo, "init", "--quiet")
    commit_all(repo, "the order service, with a flaky rounding")
    sig = root / "base.sig.json"
    proc = cli("replay", "--repo", str(repo), "--rev", "main", "--pack", "git:main:oracle", "--only-id", "prop.half",
               "--replays", str(REPLAYS), "--out", str(sig))
    assert proc.returncode == 0, proc.stderr
    ledger = repo / "oracle" / "freeze_ledger.json"
    freeze = ["freeze", "--base-sig", str(sig), "--replays", str(REPLAYS), "--id", "prop.half", "--ledger", str(ledger),
              "--reason", "rounds half to even in some processes; CALC-9", "--first-seen", "2026-11-01"]
    refused = cli(*freeze, "--kind", "deterministic")
    untouched = git(repo, "status", "--porcelain")
    added = cli(*freeze)
    changed = git(repo, "status", "--porcelain")
    verify = cli("manifest", "verify", str(repo / "oracle"))
    commit_all(repo, "freeze the flaky rounding")
    return {"repo": str(repo), "refused": [refused.returncode, refused.stdout + refused.stderr],
            "untouched": untouched, "added": [added.returncode, added.stdout + added.stderr], "changed": changed,
            "verify": [verify.returncode, verify.stdout], "tries": json.loads(sig.read_text())["replays"]}


def _shared(tmp_path_factory: pytest.TempPathFactory, name: str, calc: str) -> dict[str, object]:
    """A frozen base, built once for every pytest-xdist worker of this session (the replays are the slow part)."""
    import os

    root = tmp_path_factory.getbasetemp()
    shared = (root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root) / name
    shared.mkdir(exist_ok=True)
    with open(shared / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = shared / "built.json"
        if not done.exists():
            done.write_text(json.dumps(_build(shared, calc)))
        return json.loads(done.read_text())


@pytest.fixture(scope="session")
def union_base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    return _shared(tmp_path_factory, "union-base", UNION_CALC)


def _candidate(base: dict[str, object], tmp: Path, calc: str) -> Path:
    repo = tmp / "repo"
    shutil.copytree(str(base["repo"]), repo)
    git(repo, "checkout", "--quiet", "-b", "candidate")
    (repo / "src" / "calc.py").write_text(textwrap.dedent(calc))
    commit_all(repo, "the patch")
    return repo


def _gates(base: dict[str, object], tmp: Path, calc: str, runs: int) -> list[tuple[int, dict, dict]]:
    """The patch ``calc`` gated ``runs`` times: (exit code, its evidence, prop.half's verdict) per gate."""
    repo = _candidate(base, tmp, calc)
    out = []
    for i in range(runs):
        code, docs = _gate(repo, tmp / f"out{i}")
        out.append((code, docs, docs["verdicts.json"]["verdicts"]["prop.half"]))
    return out


def _gate(repo: Path, out: Path) -> tuple[int, dict]:
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out),
               "--today", "2026-11-30")
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    docs = validate_evidence(out)
    tries = [r["try"] for r in docs["base.sig.json"]["replays"] if r["prop_id"] == "prop.half"]
    assert tries == list(range(1, len(tries) + 1)) and len(tries) <= 16  # every try kept, in order, capped
    return proc.returncode, docs


# --- a flaky union: two failures that never show on the same try (issue 41) -------------------------------


def test_the_union_is_frozen_as_one_flaky_freeze_of_both(union_base):
    tries = union_base["tries"]
    shown = [{f["exc_type"] for f in t["failures"]} for t in tries]
    assert {"builtins.AssertionError", "builtins.ValueError"} == set().union(*shown), shown  # both seen …
    assert all(len(s) == 1 for s in shown), shown  # … never on the same try
    (record,) = json.loads((Path(str(union_base["repo"])) / "oracle" / "freeze_ledger.json").read_text())["freezes"]
    assert record["kind"] == "flaky" and len(record["failures"]) == 2


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_the_same_union_left_alone_is_promoted_every_time(union_base, tmp_path, chunk):
    for code, docs, half in _gates(union_base, tmp_path, UNION_HONEST, RUNS):
        assert (docs["verdicts.json"]["outcome"], code) == ("promoted", 0), half
        assert (half["verdict"], half["reason"], half["notes"]) == ("inconclusive", "frozen", []), half
        (shown,) = [f["signature"] for f in docs["runs.json"]["runs"]["prop.half"]["failures"]]  # one, as on base
        assert [shown] in [[f["signature"] for f in r["failures"]] for r in docs["base.sig.json"]["replays"]]


def test_a_new_bug_behind_the_union_is_blocked(union_base, tmp_path):
    """Both frozen failures at once (no base try showed both) and a new bug on inputs that held on every try: the
    candidate's examples are compared with every try that showed either failure, and the new ones are found."""
    ((code, docs, half),) = _gates(union_base, tmp_path, UNION_HIDDEN, 1)
    failures = docs["runs.json"]["runs"]["prop.half"]["failures"]
    frozen = json.loads((Path(str(union_base["repo"])) / "oracle" / "freeze_ledger.json").read_text())["freezes"][0]
    assert sorted(f["signature"] for f in failures) == sorted(f["signature"] for f in frozen["failures"])
    assert (docs["verdicts.json"]["outcome"], code) == ("blocked", 1), half
    assert (half["verdict"], half["reason"]) == ("fail", "new_failing_examples"), half
    n = int(half["detail"].split("{'n': ")[1].split("}")[0])
    assert 4000 < n < 6000 and n % 2 == 0 and "tries that showed any of them" in half["detail"], half["detail"]
