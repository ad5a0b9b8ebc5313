"""What a freeze cannot see (docs/rules.md, "What a freeze can and cannot see"; issue 40): `check` and `freeze`
warn about an example test that asserts inside a loop, and a test that computes its expected value from an
argument after candidate code had it, naming the line and how to write it; shown on a real case, whose loop hides
a regression once its first failing row is frozen. `check` shows each failure's message and pack line; `ledger
list` shows the whole reason."""

from __future__ import annotations

import ast

import pytest
from test_runner import make_project

from conftest import cli, commit_all, git, validate_evidence
from verdict_gate.core.blind import blind_spots

MODULE = '''
import pytest
from hypothesis import given, strategies as st
from calc import band, sort
import calc

CASES = [(0, "zero"), (5, "low")]


def test_bands():
    for amount, expected in CASES:
        assert band(amount) == expected


@pytest.mark.parametrize("amount, expected", CASES)
def test_band(amount, expected):
    assert band(amount) == expected


@given(st.lists(st.integers()))
def test_sort(xs):
    out = sort(xs)
    assert out == sorted(xs)


@given(st.lists(st.integers()))
def test_sort_expected_first(xs):
    expected = sorted(xs)
    assert sort(xs) == expected


@given(st.lists(st.integers()))
def test_sort_one_line(xs):
    assert calc.sort(xs) == sorted(xs)


@given(st.integers(), st.integers())
def test_add(a, b):
    assert calc.add(a, b) == a + b


@given(st.lists(st.integers()))
def test_loop_over_draws(xs):
    for x in xs:
        assert x == x


class TestTable:
    def test_rows(self):
        while CASES:
            assert band(0) == "zero"
            break
'''


@pytest.mark.fast
def test_the_two_shapes_are_found_and_only_those() -> None:
    found = {(b.test, b.line, b.kind) for b in blind_spots(ast.parse(MODULE), {"calc"})}
    assert found == {("test_bands", 12, "loop"), ("test_sort", 23, "rewrite"), ("test_sort_one_line", 34, "rewrite"),
                     ("TestTable::test_rows", 51, "loop")}
    # A Hypothesis test's loop over its own draws is not a table; the parametrized table, the expected value
    # computed first, and arithmetic on immutable arguments are how to write them.
    only = blind_spots(ast.parse(MODULE), {"calc"}, node="test_sort")
    assert [(b.test, b.kind) for b in only] == [("test_sort", "rewrite")]
    assert "compute the expected value before the call" in only[0].text and "sort(list(xs))" in only[0].text
    assert blind_spots(ast.parse(MODULE), set()) == [b for b in blind_spots(ast.parse(MODULE), set())
                                                   if b.kind == "loop"]  # no candidate module: no rewrite


CALC = '''
def band(amount):
    if amount == 0:
        return "zero"
    if amount < 10:
        return "small" if amount == 5 else "low"  # the known bug: 5 is "small"
    if amount < 100:
        return "mid"
    return "high"


def sort(xs):
    return sorted(xs)
'''
TABLE = '''
from calc import band

ROWS = [(0, "zero"), (5, "low"), (50, "mid"), (500, "high")]


def test_bands():
    for amount, expected in ROWS:
        assert band(amount) == expected, f"band({amount})"
'''
SORT = '''
from hypothesis import given, strategies as st
from calc import sort


@given(st.lists(st.integers(), max_size=5))
def test_sort(xs):
    out = sort(xs)
    assert out == sorted(xs)
'''
REASON = "band(5) says small, a long-standing quirk the billing export relies on; fix tracked in BILL-1234 for Q3"


def test_both_warnings_on_a_real_case_and_the_regression_a_loop_hides(tmp_path) -> None:
    repo = make_project(tmp_path, {"test_table.py": TABLE, "test_sort.py": SORT},
                        [{"id": "ex.bands", "oracle": "properties/test_table.py", "kind": "example"},
                         {"id": "prop.sort", "oracle": "properties/test_sort.py"}],
                        src={"src/calc.py": CALC})
    check = cli("check", "git:main:oracle", "--repo", str(repo), "--rev", "main", "--no-plain")
    assert check.returncode == 0, check.stderr  # ex.bands fails in a way a freeze could forgive
    out = check.stdout
    assert ("warning: ex.bands: properties/test_table.py:9: test_bands asserts inside a loop (line 9)" in out
            and "parametrize the rows" in out), out
    assert ("warning: prop.sort: properties/test_sort.py:9: test_sort computes its expected value from xs (line 9) "
            "after calling candidate code with it (sort, line 8)" in out and "compute the expected value before "
            "the call" in out), out
    # The failure with its message and the pack line it came through, not only its type.
    assert ("properties/test_table.py::test_bands: builtins.AssertionError: band(5) (at the pack's "
            "properties/test_table.py:9)") in out, out

    ledger = repo / "oracle" / "freeze_ledger.json"
    git(repo, "checkout", "--quiet", "main")  # the freeze lands on the base branch, through its review path
    frozen = cli("freeze", "--rev", "main", "--pack", "git:main:oracle", "--id", "ex.bands", "--replays", "2",
                 "--reason", REASON, "--ledger", "oracle/freeze_ledger.json", cwd=repo)
    assert frozen.returncode == 0, frozen.stderr
    assert "warning: ex.bands: properties/test_table.py:9: test_bands asserts inside a loop" in frozen.stderr
    commit_all(repo, "freeze the band(5) quirk")
    listed = cli("ledger", "list", "--ledger", str(ledger), "--today", "2026-11-30")
    assert REASON in listed.stdout, listed.stdout  # the whole reason, not its first 60 characters

    # The warning is earned: a patch that breaks every row after the frozen one fails the same way, at row 5.
    git(repo, "checkout", "--quiet", "candidate")
    git(repo, "rebase", "--quiet", "main")
    (repo / "src" / "calc.py").write_text(CALC.replace('return "mid"', 'return "low"').replace(
        'return "high"', 'return "low"'))
    commit_all(repo, "a patch that breaks the 50 and 500 rows")
    gate = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out",
               str(tmp_path / "out"), "--today", "2026-11-30")
    verdicts = validate_evidence(tmp_path / "out")["verdicts.json"]
    assert (gate.returncode, verdicts["outcome"]) == (0, "promoted"), gate.stdout + gate.stderr
    assert (verdicts["verdicts"]["ex.bands"]["verdict"], verdicts["verdicts"]["ex.bands"]["reason"]) == (
        "inconclusive", "frozen")
