"""The tree to gate is checked out without the oracle's own directory (``run.fixtures.not_checked_out``),
on a real git repository, without touching the repository's configuration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import commit_all, git
from verdict_gate.core.catalog import parse_catalog
from verdict_gate.run import git as gitcmd
from verdict_gate.run.fixtures import not_checked_out

BASE = "version: 1\nseed: 1\npack_root: {root}\n{extra}properties:\n  - id: p.one\n    oracle: properties/test_one.py\n"


def _catalog(root: str = "oracle", extra: str = ""):
    return parse_catalog(BASE.format(root=root, extra=extra), "catalog.yaml")


@pytest.mark.parametrize("root,extra,want", [
    ("oracle", "", ("oracle",)),
    ("oracle", "python_path: [src]\n", ("oracle",)),
    ("oracle", "python_path: ['.']\n", ("oracle",)),  # the tree's root on the path: the oracle still is not
    ("tests/oracle", "paths:\n  fixtures: ['tests/data/**']\n", ("tests/oracle",)),
    ("oracle", "python_path: [oracle/lib]\n", ()),  # candidate code imported from inside it
    ("oracle", "paths:\n  fixtures: ['oracle/data/**']\n", ()),  # repository fixtures inside it
    ("tests/oracle", "paths:\n  fixtures: ['tests/**']\n", ()),  # a fixture root around it
    ("oracle", "paths:\n  fixtures: ['**/*.json']\n", ()),  # fixtures anywhere
], ids=["plain", "src", "dot", "nested", "python-path-inside", "fixtures-inside", "fixtures-around",
        "fixtures-anywhere"])
def test_not_checked_out(root, extra, want):
    assert not_checked_out(_catalog(root, extra)) == want


def test_worktree_leaves_out_a_directory_and_the_config(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "oracle" / "properties").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "oracle" / "properties" / "test_one.py").write_text("def test_one():\n    pass\n")
    (repo / "oracle" / "catalog.yaml").write_text("x")
    (repo / "oracle-notes.txt").write_text("a sibling whose name starts like the left-out directory\n")
    (repo / "src" / "calc.py").write_text("X = 1\n")
    git(repo, "init", "--quiet")
    head = commit_all(repo, "base")
    config = (repo / ".git" / "config").read_text()
    with gitcmd.worktree(repo, head, tmp_path, exclude=("oracle",)) as tree:
        assert sorted(os.listdir(tree)) == [".git", "oracle-notes.txt", "src"]
        assert (tree / "src" / "calc.py").read_text() == "X = 1\n"
    assert (repo / ".git" / "config").read_text() == config  # no sparse-checkout settings written
    with gitcmd.worktree(repo, head, tmp_path) as tree:
        assert (tree / "oracle" / "properties" / "test_one.py").is_file()
    assert git(repo, "worktree", "list").count("\n") == 0  # both removed again
