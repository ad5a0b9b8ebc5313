"""Errors found early (issue 40): a catalog `node:` resolved before any property runs (exit 2, the fix), `freeze`
stopping as soon as its answer is known, an unknown option named with the closest one, and `--help` linking the
docs. The pure parts run in the fast tier; the gate runs are real."""

from __future__ import annotations

import ast
import tomllib

import pytest
from test_runner import make_project

from conftest import ROOT, cli
from verdict_gate.cli import main
from verdict_gate.commands.common import DOCS_URL
from verdict_gate.core.nodes import missing

MODULE = '''
import pytest
from calc import add

@pytest.mark.parametrize("n", [1, 2])
def test_add(n):
    assert add(n, 0) == n

class TestPlain:
    def test_one(self):
        assert add(1, 0) == 1

class TestInherits(Base):
    pass

if add:
    def test_guarded():
        pass
'''


@pytest.mark.fast
@pytest.mark.parametrize(("node", "why"), [
    ("test_add", None),
    ("test_add[1]", None),  # a parametrized case: pytest decides which ids exist
    ("test_ad", "defines no test_ad (did you mean test_add?)"),
    ("TestPlain::test_one", None),
    ("TestPlain::test_on", "defines no test_on in class TestPlain (did you mean test_one?)"),
    ("TestPlan::test_one", "defines no TestPlan (did you mean TestPlain?)"),
    ("TestInherits::test_anything", None),  # inherited from a class elsewhere: pytest decides
    ("test_guarded", None),  # bound in a branch
    ("zzz", "defines no zzz"),
    ("module.func", None),  # a doctest's dotted name
])
def test_a_node_is_checked_against_the_names_its_file_binds(node: str, why: str | None) -> None:
    assert missing(ast.parse(MODULE), node) == why


@pytest.mark.fast
@pytest.mark.parametrize("source", ["from helpers import *\n", "globals()['test_x'] = lambda: None\n",
                                    "exec('def test_x(): pass')\n"])
def test_a_module_that_binds_names_at_run_time_is_left_to_pytest(source: str) -> None:
    assert missing(ast.parse(source), "test_x") is None


@pytest.mark.fast
@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "--output", "ev"], "unknown option --output (did you mean --out?)"),
    (["run", "--repo", ".", "--outt=ev", "--base", "main", "--pack", "p"],
     "unknown option --outt (did you mean --out?)"),
    (["ledger", "list", "--ledgr", "x.json"], "unknown option --ledgr (did you mean --ledger?)"),
    (["freeze", "--rev", "main", "--reson", "r"], "unknown option --reson (did you mean --reason?)"),
    (["check", "oracle", "--zzzz"], "unknown option --zzzz"),
])
def test_an_unknown_option_is_named_with_the_closest_one(argv: list[str], expected: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"error: {expected}" in err and "the following arguments are required" not in err, err


@pytest.mark.fast
def test_a_missing_option_is_still_named_when_every_option_is_known(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--repo", "."]) == 2
    assert "the following arguments are required: --base, --pack, --out" in capsys.readouterr().err


@pytest.mark.fast
@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["ledger", "list", "--help"]])
def test_help_links_the_docs(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Documentation"] == DOCS_URL  # one URL, the one the package metadata names
    assert main(argv) == 0
    assert f"docs: {DOCS_URL}" in capsys.readouterr().out


SLOW = "import time\n\ndef test_slow():\n    time.sleep(3600)\n"
PARAMS = ("import pytest\nfrom calc import add\n\n@pytest.mark.parametrize('n', [1, 2])\n"
          "def test_add(n):\n    assert add(n, 0) == n\n")


def test_a_node_typo_stops_the_run_before_any_property_runs(tmp_path) -> None:
    repo = make_project(tmp_path, {"test_slow.py": SLOW, "test_add.py": PARAMS},
                        [{"id": "prop.slow", "oracle": "properties/test_slow.py", "kind": "example"},
                         {"id": "prop.add", "oracle": "properties/test_add.py", "node": "test_ad", "kind": "example"}])
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2, proc.stderr
    assert "node 'test_ad': properties/test_add.py defines no test_ad (did you mean test_add?)" in proc.stderr
    assert "fix: set each property's node:" in proc.stderr
    assert "running" not in proc.stderr and "prop.slow …" not in proc.stderr  # found at the pack's load
    assert not (tmp_path / "o").exists()


def test_a_node_pytest_does_not_collect_stops_every_process_at_once(tmp_path) -> None:
    """A case id only pytest can resolve: the first process that reports it uncollected stops the run, so the
    property beside it, asleep for an hour, is killed rather than waited for (cli's own bound is 600 s)."""
    repo = make_project(tmp_path, {"test_slow.py": SLOW, "test_add.py": PARAMS},
                        [{"id": "prop.slow", "oracle": "properties/test_slow.py", "kind": "example", "timeout": 7200},
                         {"id": "prop.add", "oracle": "properties/test_add.py", "node": "test_add[9]",
                          "kind": "example"}])
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(tmp_path / "o"),
               "--jobs", "2")
    assert proc.returncode == 2, proc.stderr
    assert "node 'test_add[9]' is not a test in properties/test_add.py" in proc.stderr
    assert "fix: set each property's node:" in proc.stderr


def test_freeze_stops_at_the_first_replay_that_decides(tmp_path) -> None:
    """A property that passes is refused after its first replay, not after 5; one that cannot run is refused at
    its first replay with the pack's line and the fix."""
    repo = make_project(tmp_path, {
        "test_ok.py": "from calc import add\n\ndef test_ok():\n    assert add(1, 1) == 2\n",
        "test_needs.py": "def test_needs(no_such_fixture):\n    assert no_such_fixture\n",
    }, [{"id": "prop.ok", "oracle": "properties/test_ok.py", "kind": "example"},
        {"id": "prop.needs", "oracle": "properties/test_needs.py", "kind": "example"}])
    ledger = repo / "oracle" / "freeze_ledger.json"
    before = ledger.read_text()
    common = ["freeze", "--repo", str(repo), "--rev", "main", "--pack", "git:main:oracle", "--reason", "r",
              "--ledger", str(ledger)]
    ok = cli(*common, "--id", "prop.ok")
    assert ok.returncode == 2, ok.stderr
    assert "replay try 1 of 5" in ok.stderr and "replay try 2 of 5" not in ok.stderr
    assert "there is no failure to freeze" in ok.stderr and "--kind flaky" in ok.stderr
    needs = cli(*common, "--id", "prop.needs")
    assert needs.returncode == 2, needs.stderr
    assert "replay try 1 of 5" in needs.stderr and "replay try 2 of 5" not in needs.stderr
    assert "the pack's properties/test_needs.py:1" in needs.stderr and "conftest.py" in needs.stderr
    assert ledger.read_text() == before  # nothing written
