"""The oracle's own faults told apart from the patch's (docs/design.md §3, "Gate faults are not the candidate's";
issue 40): a property that cannot run on the base revision either (a fixture the pack lacks, an import error in
the pack's own code) is `fail`/`oracle_error`, outcome `incomplete`, naming the pack's file, the line and the fix;
never `crashed` or `no_freeze` on the patch, never a pass. A property the candidate alone broke stays `crashed`.
Real git repositories, real gate runs."""

from __future__ import annotations

import json
from pathlib import Path

from test_runner import make_project, reasons, run

from conftest import cli, commit_all, git

CASES = """
from calc import add

def test_add_cases(add_cases):
    for a, b, total in add_cases:
        assert add(a, b) == total
"""
# The fixture the property needs, in the repository's tests/conftest.py: the gate never loads that one.
REPO_CONFTEST = """
import pytest

@pytest.fixture
def add_cases():
    return [(1, 2, 3), (2, 2, 4)]
"""


def test_a_pack_without_its_conftest_is_the_oracle_s_fault_and_says_the_fix(tmp_path: Path) -> None:
    add = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    repo = make_project(tmp_path, {"test_cases.py": CASES, "test_add.py": add},
                        [{"id": "ex.cases", "oracle": "properties/test_cases.py", "kind": "example"},
                         {"id": "ex.add", "oracle": "properties/test_add.py", "kind": "example"}],
                        src={"tests/conftest.py": REPO_CONFTEST})  # the pack's conftest.py left behind in tests/
    (repo / "README.md").write_text("docs only\n")
    commit_all(repo, "an honest patch")

    code, docs, stderr = run(repo, tmp_path / "out")
    verdicts = docs["verdicts.json"]
    assert (code, verdicts["outcome"]) == (4, "incomplete"), stderr
    assert reasons(docs) == {"ex.cases": ("fail", "oracle_error"), "ex.add": ("pass", "held")}
    detail = verdicts["verdicts"]["ex.cases"]["detail"]
    assert "the pack's properties/test_cases.py:4" in detail  # the test that asks for the fixture
    assert "_pytest.fixtures.FixtureLookupError" in detail and "conftest.py" in detail and "fix:" in detail
    assert docs["runs.json"]["runs"]["ex.cases"]["message"] == "fixture 'add_cases' not found"
    tried = [r for r in docs["base.sig.json"]["replays"] if r["prop_id"] == "ex.cases"]
    assert [(r["status"], r["base_revision"]) for r in tried] == [("fail", verdicts["base_revision"])]
    assert "blocked" not in stderr and "crashed" not in json.dumps(verdicts["verdicts"])

    # The fix the detail names, through the oracle's review path: the pack gets its conftest.py.
    git(repo, "checkout", "--quiet", "main")
    (repo / "oracle" / "conftest.py").write_text(REPO_CONFTEST)
    assert cli("manifest", "write", str(repo / "oracle")).returncode == 0
    commit_all(repo, "the pack's conftest.py")
    git(repo, "checkout", "--quiet", "candidate")
    git(repo, "rebase", "--quiet", "main")
    code, docs, stderr = run(repo, tmp_path / "out2")
    assert (code, docs["verdicts.json"]["outcome"]) == (0, "promoted"), stderr
    assert reasons(docs) == {"ex.cases": ("pass", "held"), "ex.add": ("pass", "held")}


def test_an_import_error_in_the_pack_is_told_apart_from_one_the_patch_makes(tmp_path: Path) -> None:
    """One run, two properties that cannot import: the pack's own (a helper module left out of the pack, the
    same on the base) is oracle_error; the patch's (it renamed the function the pack imports, which the base has)
    is crashed, blocked."""
    repo = make_project(tmp_path, {
        "test_table.py": "from casebook import CASES\nfrom calc import add\n\n"
                         "def test_table():\n    assert [add(a, b) for a, b, _ in CASES] == [t for _, _, t in CASES]\n",
        "test_add.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    }, [{"id": "ex.table", "oracle": "properties/test_table.py", "kind": "example"},
        {"id": "ex.add", "oracle": "properties/test_add.py", "kind": "example"}])
    (repo / "src" / "calc.py").write_text("def plus(a, b):\n    return a + b\n")
    commit_all(repo, "a patch that renames add")

    code, docs, stderr = run(repo, tmp_path / "out")
    verdicts = docs["verdicts.json"]
    assert reasons(docs) == {"ex.table": ("fail", "oracle_error"), "ex.add": ("fail", "crashed")}
    assert (code, verdicts["outcome"]) == (4, "incomplete"), stderr  # the oracle's fault decides the outcome
    table = verdicts["verdicts"]["ex.table"]["detail"]
    assert "the pack's properties/test_table.py:1" in table and "builtins.ModuleNotFoundError" in table
    assert "add the module to the pack" in table
    assert docs["runs.json"]["runs"]["ex.table"]["message"] == "No module named 'casebook'"
    add = verdicts["verdicts"]["ex.add"]["detail"]
    assert "not so on the base revision: the patch broke it" in add, add
    assert "cannot import name 'add' from 'calc'" in docs["runs.json"]["runs"]["ex.add"]["message"]
    # Each was run on the base once, beside nothing else: the base tells the two apart.
    tried = sorted((r["prop_id"], r["status"]) for r in docs["base.sig.json"]["replays"])
    assert tried == [("ex.add", "pass"), ("ex.table", "fail")]
