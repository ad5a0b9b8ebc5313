"""The tree to gate is checked out without the oracle's own directory (``host.fixtures.not_checked_out``),
on a real git repository, without touching the repository's configuration; its fixture roots are hard
links to the work tree's committed files where that is safe (``host.checkout``), checked out elsewhere."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import cli, commit_all, git
from verdict_gate.core.digest import Entry
from verdict_gate.host import checkout
from verdict_gate.host import git as gitcmd
from verdict_gate.host.files import parse_catalog
from verdict_gate.host.fixtures import not_checked_out
from verdict_gate.host.hashing import changed_since, scan

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

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


# --- Fixture roots as hard links to the work tree (host.checkout) -------------------------------------------

LINKED = ("version: 1\nseed: 1\npack_root: oracle\n{extra}properties:\n  - id: p.one\n"
          "    oracle: properties/test_one.py\n{prop}")


def _linked_catalog(extra: str = "", prop: str = ""):
    return parse_catalog(LINKED.format(extra=extra, prop=prop), "catalog.yaml")


@pytest.mark.parametrize("extra,prop,env,want", [
    ("", "", None, ("fixtures",)),  # the default fixtures glob, fixtures/**
    ("paths:\n  fixtures: ['data/**', 'data/json/*.json', 'more/*.bin']\n", "", None, ("data", "more")),
    ("paths:\n  fixtures: ['**/*.json']\n", "", None, ()),  # fixtures anywhere: the whole tree is checked out
    ("", "    isolation: process\n", None, ()),  # candidate code that could write through a link
    ("", "    mutates_fixture: true\n", None, ()),  # a property that may write its fixtures
    ("", "", "0", ()),  # switched off
], ids=["default", "nested-roots", "anywhere", "process-level", "mutates", "off"])
def test_link_roots(monkeypatch, extra, prop, env, want):
    if env is None:
        monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    else:
        monkeypatch.setenv(checkout.LINKS_ENV, env)
    assert checkout.link_roots(_linked_catalog(extra, prop)) == want


def _fixture_repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository whose fixtures/ holds plain, executable, linked and nested files; ``base`` and
    ``head`` differ in one fixture. Returns (repo, base, head)."""
    repo = tmp_path / "repo"
    files = {"src/calc.py": "X = 1\n", "oracle/catalog.yaml": "x\n", "fixtures/a.txt": "a\n",
             "fixtures/sub/b.bin": "base b\n", "fixtures/run.sh": "#!/bin/sh\n", "fixtures/dirty.txt": "clean\n",
             "fixtures/wide.txt": "wide\n"}
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / "fixtures" / "run.sh").chmod(0o755)
    (repo / "fixtures" / "link").symlink_to("a.txt")
    git(repo, "init", "--quiet")
    base = commit_all(repo, "base")
    (repo / "fixtures" / "sub" / "b.bin").write_text("head b\n")
    head = commit_all(repo, "head")
    return repo, base, head


def _same(a: Path, b: Path) -> bool:
    return os.path.samefile(a, b)


def test_trees_link_the_committed_files_and_check_out_the_rest(tmp_path, monkeypatch):
    monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    repo, base, head = _fixture_repo(tmp_path)
    # The work tree as a user leaves it: an uncommitted edit, an untracked file, a file others may write.
    (repo / "fixtures" / "dirty.txt").write_text("edited, not committed\n")
    (repo / "fixtures" / "untracked.txt").write_text("never committed\n")
    (repo / "fixtures" / "wide.txt").chmod(0o666)
    # status first: it may refresh the stat data of entries written in the index's own second
    # ("racily clean") and write the index, which is git's doing, not the gate's.
    status = git(repo, "status", "--porcelain")
    index = (repo / ".git" / "index").read_bytes()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    lines: list[str] = []
    with checkout.trees(repo, [head, base], scratch, _linked_catalog(), lines.append) as made:
        cand, old = made.paths
        assert _same(cand / "fixtures" / "a.txt", repo / "fixtures" / "a.txt")  # linked, not copied
        assert _same(cand / "fixtures" / "sub" / "b.bin", repo / "fixtures" / "sub" / "b.bin")
        assert _same(cand / "fixtures" / "run.sh", repo / "fixtures" / "run.sh")
        assert os.access(cand / "fixtures" / "run.sh", os.X_OK)
        # The edited file is the committed one, checked out; the untracked file is not there at all.
        assert (cand / "fixtures" / "dirty.txt").read_text() == "clean\n"
        assert not _same(cand / "fixtures" / "dirty.txt", repo / "fixtures" / "dirty.txt")
        assert not (cand / "fixtures" / "untracked.txt").exists()
        # A file others may write is checked out (the `uid` sandbox runs candidate code as nobody).
        assert not _same(cand / "fixtures" / "wide.txt", repo / "fixtures" / "wide.txt")
        assert (cand / "fixtures" / "link").is_symlink()  # links are checked out as links (the digest refuses them)
        assert (cand / "src" / "calc.py").read_text() == "X = 1\n"
        # The base tree links to the candidate tree's files where the blob is the same, and checks out the rest.
        assert _same(old / "fixtures" / "a.txt", cand / "fixtures" / "a.txt")
        assert (old / "fixtures" / "sub" / "b.bin").read_text() == "base b\n"
        assert made.twins == frozenset()  # b.bin differs: the base's fixtures are not the candidate's
    # Linked: a.txt, sub/b.bin, run.sh; checked out: dirty.txt, wide.txt, the link. The base links the same
    # blobs to the candidate tree's files (its checked-out ones too) and checks out b.bin and the link.
    assert lines == [f"fixtures of {head[:12]}: 3 file(s) linked from the work tree, 3 checked out",
                     f"fixtures of {base[:12]}: 4 file(s) linked from the tree of {head[:12]}, 2 checked out"]
    assert not list(scratch.iterdir())  # both worktrees removed
    assert git(repo, "worktree", "list").count("\n") == 0
    # The work tree and its index are as they were: same files, same contents, one name each again.
    assert (repo / ".git" / "index").read_bytes() == index and git(repo, "status", "--porcelain") == status
    assert (repo / "fixtures" / "dirty.txt").read_text() == "edited, not committed\n"
    assert os.lstat(repo / "fixtures" / "a.txt").st_nlink == 1


def test_trees_of_the_same_fixtures_are_twins(tmp_path, monkeypatch):
    monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    repo, _base, _head = _fixture_repo(tmp_path)
    (repo / "fixtures" / "link").unlink()  # a link is checked out in each tree: two files, not one
    older = commit_all(repo, "no link")
    (repo / "src" / "calc.py").write_text("X = 2\n")
    newer = commit_all(repo, "code only")
    with checkout.trees(repo, [newer, older], tmp_path, _linked_catalog()) as made:
        assert made.twins == frozenset({1})
        for name in ("a.txt", "sub/b.bin", "run.sh", "dirty.txt", "wide.txt"):
            assert _same(made.paths[0] / "fixtures" / name, made.paths[1] / "fixtures" / name)
        assert (made.paths[1] / "src" / "calc.py").read_text() == "X = 1\n"


@pytest.mark.parametrize("how", ["switched-off", "process-level"])
def test_trees_check_everything_out_when_links_are_not_allowed(tmp_path, monkeypatch, how):
    repo, _base, head = _fixture_repo(tmp_path)
    monkeypatch.setenv(checkout.LINKS_ENV, "0" if how == "switched-off" else "1")
    catalog = _linked_catalog(prop="    isolation: process\n" if how == "process-level" else "")
    with checkout.trees(repo, [head], tmp_path, catalog) as made:
        tree = made.paths[0]
        assert (tree / "fixtures" / "a.txt").read_text() == "a\n"
        assert not _same(tree / "fixtures" / "a.txt", repo / "fixtures" / "a.txt")


def test_trees_on_another_file_system_check_out(tmp_path, monkeypatch):
    """Scratch on another file system (here /dev/shm): no hard link is possible, every file is checked out."""
    monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs a second file system at /dev/shm")
    repo, _base, head = _fixture_repo(tmp_path)
    scratch = Path(tempfile.mkdtemp(dir=shm))
    try:
        lines: list[str] = []
        with checkout.trees(repo, [head], scratch, _linked_catalog(), lines.append) as made:
            tree = made.paths[0]
            assert (tree / "fixtures" / "sub" / "b.bin").read_text() == "head b\n"
            assert (tree / "fixtures" / "a.txt").read_text() == "a\n"
            assert os.lstat(tree / "fixtures" / "a.txt").st_nlink == 1
        assert lines == []  # nothing linked, so nothing to say
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_a_change_through_a_link_is_named_with_its_fix(tmp_path, monkeypatch):
    monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    repo, _base, head = _fixture_repo(tmp_path)
    (repo / "fixtures" / "dirty.txt").write_text("edited\n")  # so this one is checked out, not linked
    with checkout.trees(repo, [head], tmp_path, _linked_catalog()) as made:
        tree = made.paths[0]
        (tree / "fixtures" / "a.txt").write_text("changed by a property\n")  # what a buggy oracle could do
        notices = checkout.written_through(tree, repo, ["repo/fixtures/a.txt", "repo/fixtures/dirty.txt",
                                                        "pack/x.json"])
    assert notices == [f"fixtures/a.txt: this fixture changed during the run, and it is a hard link to the work "
                       f"tree's file, so the work tree's copy is the changed one; if the gate's run changed it (not "
                       f"you), `git -C {repo} checkout -- fixtures/a.txt` restores the committed bytes"]


@pytest.mark.slow
def test_a_dirty_fixture_in_the_work_tree_is_not_what_the_gate_scores(example_repo, tmp_path, monkeypatch):
    """End to end: the work tree's uncommitted edit of a fixture the candidate reads (tax rates) is not
    linked into the tree the gate scores; the committed rates are, and the verdicts are the clean run's."""
    monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    rates = example_repo / "fixtures" / "tax_rates.json"
    clean = cli("run", "--repo", str(example_repo), "--base", "main", "--pack", "git:main:oracle",
                "--out", str(tmp_path / "clean"), "--today", "2026-11-30")
    rates.write_text(rates.read_text().replace("1900", "1"))
    dirty = cli("run", "--repo", str(example_repo), "--base", "main", "--pack", "git:main:oracle",
                "--out", str(tmp_path / "dirty"), "--today", "2026-11-30")
    # Clean, the one fixture is linked; edited, it is checked out (and the base's links to that copy).
    assert "1 file(s) linked from the work tree, 0 checked out" in clean.stderr, clean.stderr
    assert "linked from the work tree" not in dirty.stderr, dirty.stderr
    assert "uncommitted change(s) are not scored" in dirty.stdout + dirty.stderr
    assert dirty.returncode == clean.returncode == 0, dirty.stderr
    verdicts = [json.loads((tmp_path / d / "verdicts.json").read_text())["verdicts"] for d in ("clean", "dirty")]
    assert verdicts[0] == verdicts[1]
    assert "1900" not in rates.read_text()  # the user's edit is untouched


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_a_fixture_git_does_not_look_at_is_checked_out(tmp_path, monkeypatch, flag):
    """`git diff` skips a file marked assume-unchanged or skip-worktree: its edit must not be linked."""
    monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    repo, _base, head = _fixture_repo(tmp_path)
    git(repo, "update-index", flag, "fixtures/a.txt")
    (repo / "fixtures" / "a.txt").write_text("edited behind git's back\n")
    assert "fixtures/a.txt" not in git(repo, "diff", "--name-only", "HEAD")  # git itself does not see it
    with checkout.trees(repo, [head], tmp_path, _linked_catalog()) as made:
        tree = made.paths[0]
        assert (tree / "fixtures" / "a.txt").read_text() == "a\n"
        assert not _same(tree / "fixtures" / "a.txt", repo / "fixtures" / "a.txt")
        assert _same(tree / "fixtures" / "run.sh", repo / "fixtures" / "run.sh")  # the others still link


def test_a_fixture_git_converts_is_checked_out(tmp_path, monkeypatch):
    """With `eol=crlf`, `git diff` calls a work-tree file with LF endings equal to the blob, but a checkout
    writes CRLF: such a file is checked out, a file without conversion attributes is linked."""
    monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    repo, _base, _head = _fixture_repo(tmp_path)
    (repo / ".gitattributes").write_text("*.txt text eol=crlf\n")
    (repo / "fixtures" / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    head = commit_all(repo, "attributes")
    (repo / "fixtures" / "crlf.txt").write_bytes(b"one\ntwo\n")  # the user's editor saved LF
    assert "fixtures/crlf.txt" not in git(repo, "diff", "--name-only", "HEAD")
    with checkout.trees(repo, [head], tmp_path, _linked_catalog()) as made:
        tree = made.paths[0]
        assert (tree / "fixtures" / "crlf.txt").read_bytes() == b"one\r\ntwo\r\n"  # what a checkout writes
        assert _same(tree / "fixtures" / "sub" / "b.bin", repo / "fixtures" / "sub" / "b.bin")
    git(repo, "config", "core.autocrlf", "input")  # every text file may convert: nothing links
    with checkout.trees(repo, [head], tmp_path, _linked_catalog()) as made:
        assert not _same(made.paths[0] / "fixtures" / "sub" / "b.bin", repo / "fixtures" / "sub" / "b.bin")


def test_a_base_with_other_attribute_files_is_checked_out(tmp_path, monkeypatch):
    monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    repo, _base, _head = _fixture_repo(tmp_path)
    (repo / "fixtures" / "link").unlink()
    older = commit_all(repo, "no link")
    (repo / ".gitattributes").write_text("*.bin -text\n")
    newer = commit_all(repo, "attributes")
    with checkout.trees(repo, [newer, older], tmp_path, _linked_catalog()) as made:
        cand, base = made.paths
        assert _same(cand / "fixtures" / "a.txt", repo / "fixtures" / "a.txt")
        assert not _same(base / "fixtures" / "a.txt", cand / "fixtures" / "a.txt")
        assert made.twins == frozenset()


def test_unverified_names_links_whose_digested_bytes_are_not_the_blob(tmp_path, monkeypatch):
    """The proof, from the digest's own read: a linked file edited behind git's back (same size, mtime put
    back) is not its blob; the rest are."""
    monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    repo, _base, head = _fixture_repo(tmp_path)
    with checkout.trees(repo, [head], tmp_path, _linked_catalog()) as made:
        tree = made.paths[0]
        assert sorted(made.linked) == ["fixtures/a.txt", "fixtures/dirty.txt", "fixtures/run.sh",
                                       "fixtures/sub/b.bin", "fixtures/wide.txt"]
        entries = [Entry(f"repo/{rel}", str(tree / rel)) for rel in made.linked]
        assert checkout.unverified(made.linked, scan(entries, git_blobs=True).blobs) == []
        forged = repo / "fixtures" / "a.txt"  # the work tree's file: the same inode as the tree's link
        st = os.stat(forged)
        forged.write_text("b\n")
        os.utime(forged, ns=(st.st_atime_ns, st.st_mtime_ns))
        blobs = scan(entries, git_blobs=True).blobs
        assert checkout.unverified(made.linked, blobs) == ["fixtures/a.txt"]
        assert blobs["repo/fixtures/a.txt"] == git(repo, "hash-object", "fixtures/a.txt")  # git's own id
        assert checkout.unverified(made.linked, {}) == sorted(made.linked)  # nothing read: nothing proven


@pytest.mark.slow
def test_an_edit_that_keeps_size_and_mtime_is_not_scored(example_repo, tmp_path, monkeypatch):
    """End to end (found by a red-team run): the candidate commits a wrong tax rate; the work tree gets the
    right rate back with the same size and mtime, which git's index does not notice without ctime. The
    gate must score the committed rate, so the broken candidate is blocked."""
    monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    rates = example_repo / "fixtures" / "tax_rates.json"
    rates.write_text(rates.read_text().replace('"DE": 1900', '"DE": 1800'))
    os.utime(rates, (1_767_225_600, 1_767_225_600))  # an mtime well before the index's: not "racily clean"
    commit_all(example_repo, "break DE")
    st = os.stat(rates)
    rates.write_text(rates.read_text().replace('"DE": 1800', '"DE": 1900'))
    os.utime(rates, ns=(st.st_atime_ns, st.st_mtime_ns))
    proc = cli("run", "--repo", str(example_repo), "--base", "main", "--pack", "git:main:oracle",
               "--out", str(tmp_path / "out"), "--today", "2026-11-30")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "were not their committed bytes when the digest read them (fixtures/tax_rates.json)" in proc.stdout
    verdicts = json.loads((tmp_path / "out" / "verdicts.json").read_text())["verdicts"]
    assert verdicts["prop.order_total"]["verdict"] == "fail"
    assert '"DE": 1900' in rates.read_text()  # the user's work tree as they left it


def test_a_linked_fixture_written_and_put_back_is_a_change(tmp_path, monkeypatch):
    """Found by a red-team run: the work tree's file rewritten during the run (read by the candidate) and put
    back before the post-run check. For a file with one name a moved stamp with the same bytes is not a
    change (a `touch`); for a linked one it is."""
    monkeypatch.delenv(checkout.LINKS_ENV, raising=False)
    repo, _base, head = _fixture_repo(tmp_path)
    (repo / "fixtures" / "dirty.txt").write_text("edited\n")  # checked out: one name
    with checkout.trees(repo, [head], tmp_path, _linked_catalog()) as made:
        tree = made.paths[0]
        entries = [Entry(f"repo/{rel}", str(tree / rel)) for rel in ("fixtures/a.txt", "fixtures/dirty.txt")]
        before = scan(entries)
        work = repo / "fixtures" / "a.txt"
        st = os.stat(work)
        work.write_text("b\n")
        work.write_text("a\n")
        os.utime(work, ns=(st.st_atime_ns, st.st_mtime_ns))
        (tree / "fixtures" / "dirty.txt").write_text("clean\n")  # the same bytes again
        assert changed_since(before, entries) == ["repo/fixtures/a.txt"]
