"""The catalog's ``generated:`` files (docs/design.md §7): literal content the pack declares, written
into every tree the gate checks out, never through a link, never over a committed file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import cli, commit_all, git, validate_evidence
from verdict_gate.core.catalog import catalog_from
from verdict_gate.core.errors import GateError
from verdict_gate.host.generated import write_generated

BASE = {"version": 1, "properties": [{"id": "prop.x", "oracle": "properties/test_x.py"}]}


@pytest.mark.fast
@pytest.mark.parametrize("path", ["../x.py", "/etc/x.py", "a//b.py", "./a.py", "a/./b.py", "a/../b.py",
                                  ".git/hooks/pre-commit", "src/.GIT/config", "oracle/properties/h.py",
                                  "fixtures/data.json", "a\\b.py", "a\nb.py"])
def test_generated_paths_that_are_refused(path: str) -> None:
    with pytest.raises(GateError) as err:
        catalog_from({**BASE, "generated": {path: "x = 1\n"}}, "catalog.yaml")
    assert "$.generated" in str(err.value) and err.value.fix


@pytest.mark.fast
def test_generated_entries_are_kept_sorted() -> None:
    cat = catalog_from({**BASE, "generated": {"src/b/_version.py": "b", "src/a/_version.py": "a"}}, "c")
    assert cat.generated == (("src/a/_version.py", "a"), ("src/b/_version.py", "b"))
    assert catalog_from(BASE, "c").generated == ()


@pytest.mark.fast
def test_write_generated_creates_directories_and_a_readable_file(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        written, notes = write_generated(tmp_path, [("src/pkg/_version.py", "__version__ = '1.0'\n")], "t")
    finally:
        os.umask(old)
    target = tmp_path / "src" / "pkg" / "_version.py"
    assert (written, notes) == (1, [])
    assert target.read_text() == "__version__ = '1.0'\n"
    assert target.stat().st_mode & 0o777 == 0o644  # a worker of its own uid reads it


@pytest.mark.fast
def test_write_generated_never_overwrites_nor_follows_links(tmp_path: Path) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "src").mkdir(parents=True)
    outside.mkdir()
    (tree / "src" / "kept.py").write_text("committed\n")
    (tree / "src" / "link").symlink_to(outside)  # a committed link named like the file's directory
    (tree / "src" / "file").write_text("")
    written, notes = write_generated(tree, [("src/kept.py", "generated\n"), ("src/link/_version.py", "x"),
                                            ("src/file/_version.py", "x"), ("src/link", "x")], "the tree")
    assert written == 0 and len(notes) == 4
    assert (tree / "src" / "kept.py").read_text() == "committed\n"
    assert list(outside.iterdir()) == []
    assert "committed file is used" in notes[0] and "symbolic link" in notes[1] and "symbolic link" in notes[2]


PACKAGE = '''from mylib._version import __version__


def add(a, b):
    return a + b
'''
PROPERTY = '''from mylib import __version__, add


def test_add():
    assert add(2, 3) == 5
    assert __version__ == "0.0.0+gate"
'''


def _repo(tmp: Path, generated: bool) -> Path:
    """A repository whose package imports a ``_version.py`` that git ignores (as hatch-vcs writes it)."""
    repo = tmp / "repo"
    (repo / "src" / "mylib").mkdir(parents=True)
    (repo / "oracle" / "properties").mkdir(parents=True)
    git(repo, "init", "--quiet")
    (repo / "src" / "mylib" / "__init__.py").write_text(PACKAGE)
    (repo / ".gitignore").write_text("_version.py\n")
    (repo / "oracle" / "properties" / "test_add.py").write_text(PROPERTY)
    catalog = ("version: 1\npython_path: [src]\nproperties:\n  - id: prop.add\n    oracle: properties/test_add.py\n"
               "    kind: example\n")
    if generated:
        catalog += 'generated:\n  src/mylib/_version.py: |\n    __version__ = "0.0.0+gate"\n'
    (repo / "oracle" / "catalog.yaml").write_text(catalog)
    (repo / "oracle" / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}')
    assert cli("manifest", "write", str(repo / "oracle")).returncode == 0
    commit_all(repo, "base")
    git(repo, "checkout", "--quiet", "-b", "candidate")
    (repo / "src" / "mylib" / "__init__.py").write_text(PACKAGE + "\n\ndef sub(a, b):\n    return a - b\n")
    commit_all(repo, "candidate")
    return repo


@pytest.mark.parametrize("generated", [True, False])
def test_a_package_with_a_build_written_file_is_gated(tmp_path: Path, generated: bool) -> None:
    """Without ``generated:`` the import of ``mylib._version`` fails in the gate's checkout, on the base as on the
    candidate (oracle_error, incomplete: the catalog's to fix, naming generated:); with it the candidate and a
    base replay both import it, and the work tree is untouched."""
    repo = _repo(tmp_path, generated)
    out = tmp_path / "ev"
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out))
    docs = validate_evidence(out)
    verdicts = docs["verdicts.json"]["verdicts"]  # type: ignore[index]
    if not generated:
        assert proc.returncode == 4 and verdicts["prop.add"]["reason"] == "oracle_error", proc.stdout + proc.stderr
        assert "mylib._version" in proc.stdout and "generated:" in verdicts["prop.add"]["detail"]
        return
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert verdicts["prop.add"]["verdict"] == "pass"
    assert "generated: 1 file(s)" in proc.stderr
    assert not (repo / "src" / "mylib" / "_version.py").exists()  # the user's work tree is never written
    replay = cli("replay", "--repo", str(repo), "--rev", "main", "--pack", "git:main:oracle", "--only-id", "prop.add",
                 "--out", str(tmp_path / "base.sig.json"))
    assert replay.returncode == 0, replay.stderr
    assert json.loads((tmp_path / "base.sig.json").read_text())["replays"][0]["status"] == "pass"


def test_a_committed_file_at_a_generated_path_is_used_and_named(tmp_path: Path) -> None:
    repo = _repo(tmp_path, True)
    (repo / "src" / "mylib" / "_version.py").write_text('__version__ = "9.9.9"\n')
    git(repo, "add", "--force", "src/mylib/_version.py")
    commit_all(repo, "the candidate commits the generated file")
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(tmp_path / "ev"))
    assert proc.returncode == 1, proc.stdout + proc.stderr  # its own version, not the pack's: the property fails
    assert "generated file src/mylib/_version.py was not written" in proc.stdout
    assert "committed file is used" in proc.stdout
