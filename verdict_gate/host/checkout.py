"""The trees a run gates (docs/design.md §4, "Checkouts"): detached worktrees whose repository fixtures are
hard links to the work tree's own files wherever those are the committed ones.

An edge: git and the file system. Checking out 100,000 fixture files and deleting them again cost
about 27 s on a disk where hashing them costs 1 s (benchmarks/bench_fixtures.py): a file with data
is slow to create and slower to free. A hard link to a file the work tree already holds costs a
directory entry, and removing it frees nothing.

A file is linked only when all of these hold; otherwise it is checked out as before:

- every property of the catalog runs candidate code at isolation ``sandbox`` (read-only fixtures,
  docs/design.md §8.2) and none is declared ``mutates_fixture: true``, and
  ``$VERDICT_GATE_FIXTURE_LINKS`` is not ``0``;
- its fixture root is a directory below the top of the tree, outside the directories left out of the
  checkout (:func:`verdict_gate.host.fixtures.not_checked_out`);
- git says the work tree's file is the one committed at HEAD (``git diff HEAD -- ROOT``: its
  index stat data, and the contents wherever that data moved), it is not marked assume-unchanged or
  skip-worktree, git converts none of its bytes (:func:`converted`), and the revision checked out has
  the same blob and mode at that path (a second tree, the base's, links to the first tree's file
  instead, when both revisions commit the same ``.gitattributes`` files);
- it matches the catalog's fixture globs (so the digest and the post-run check cover it);
- it is a regular file no other user can write (the ``uid`` sandbox runs as ``nobody``), with the
  committed execute bit, on the file system of the scratch directory.

git's word is only a filter. The candidate's digest computes each linked file's git blob id from the
same read as its sha256 and stamp, and :func:`unverified` names the files whose bytes are not their
committed blob (the pipeline checks those out and digests again). After the run, a linked file whose
stamp moved is a change whatever it holds (:func:`verdict_gate.host.hashing.changed_since`), and the
run's notices name its work-tree file (:func:`written_through`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from verdict_gate.boundary.fence.policy import UID_BASE, UID_SPAN
from verdict_gate.core.catalog import Catalog
from verdict_gate.core.progress import Progress
from verdict_gate.host import git
from verdict_gate.host.fixtures import glob_roots, is_fixture, not_checked_out, whole_roots
from verdict_gate.host.generated import write_generated

LINKS_ENV = "VERDICT_GATE_FIXTURE_LINKS"  # "0": check every fixture out
NOBODY = 65534  # the uid a bubblewrap worker runs as in its user namespace


def _worker_owned(uid: int) -> bool:
    """Whether ``uid`` (a file's owner or group) is one a candidate worker runs as: ``nobody`` under
    bubblewrap, or a worker's own uid of the ``landlock`` method (:data:`.fence.policy.UID_BASE` onwards)."""
    return uid == NOBODY or UID_BASE <= uid < UID_BASE + UID_SPAN
REGULAR = ("100644", "100755")
Blobs = Mapping[str, tuple[str, str]]  # path → (git mode, blob id)


def link_roots(catalog: Catalog) -> tuple[str, ...]:
    """The repository fixture roots (POSIX, relative to the top) whose files may be hard links, per the
    rules in this module's docstring; ``()`` when none may."""
    if os.environ.get(LINKS_ENV, "").strip() == "0":
        return ()
    if any(prop.isolation != "sandbox" or prop.mutates_fixture for prop in catalog.properties):
        return ()
    left_out = not_checked_out(catalog)
    roots: list[str] = []
    for root in (r.strip("/") for r in glob_roots(catalog.paths.fixtures)):
        if root in ("", "."):
            return ()  # fixtures anywhere in the tree: check it all out
        if not any(root == d or root.startswith(d + "/") for d in left_out):
            roots.append(root)
    # A root inside another is covered by it.
    return tuple(r for r in roots if not any(r.startswith(o + "/") for o in roots if o != r))


def committed_blobs(repo: Path, rev: str, roots: Sequence[str]) -> dict[str, tuple[str, str]]:
    """``git ls-tree -r`` of ``rev`` under ``roots``: path → (mode, blob id), files and links alike.

    Raises:
        GateError: git failed.
    """
    out = git.git(repo, "--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", rev, "--", *roots).stdout
    blobs = {}
    for line in out.split(b"\0"):
        if not line:
            continue
        meta, _, path = line.partition(b"\t")
        mode, kind, blob = meta.decode().split()
        if kind == "blob":
            blobs[os.fsdecode(path)] = (mode, blob)
    return blobs


def work_tree_blobs(repo: Path, roots: Sequence[str], head: Blobs | None = None) -> dict[str, tuple[str, str]]:
    """The files under ``roots`` that the work tree of ``repo`` holds exactly as HEAD commits them:
    path → (mode, blob id). As ``git diff`` decides it: a file whose index stat data (size, mtime,
    inode; not ctime, which this module's links move) is current is not read, any other is compared by
    contents. Writes nothing (no index refresh, ``--no-optional-locks``). ``head``: HEAD's
    :func:`committed_blobs` under ``roots`` when the caller has them.

    Raises:
        GateError: git failed.
    """
    head = dict(head) if head is not None else committed_blobs(repo, "HEAD", roots)
    if not head:
        return {}
    differ = git.git(repo, *git.NO_CTIME, "--no-optional-locks", "--literal-pathspecs", "diff", "--name-only", "-z",
                     "--no-renames", "--no-ext-diff", "--no-textconv", "--ignore-submodules", "HEAD",
                     "--", *roots).stdout
    for path in differ.split(b"\0"):
        head.pop(os.fsdecode(path), None)
    # `git diff` does not look at a file marked assume-unchanged or skip-worktree: `ls-files -v` tags
    # every other cached file `H`.
    tagged = git.git(repo, "--literal-pathspecs", "ls-files", "-v", "-z", "--", *roots).stdout
    for line in tagged.split(b"\0"):
        if line and not line.startswith(b"H "):
            head.pop(os.fsdecode(line[2:]), None)
    for name in converted(repo, roots, list(head)):
        head.pop(name, None)
    return head


CONVERSIONS = ("filter", "text", "eol", "crlf", "ident", "working-tree-encoding")


def converted(repo: Path, roots: Sequence[str], paths: Sequence[str]) -> Collection[str]:
    """The ``paths`` whose bytes git may convert between the blob and the work tree (``.gitattributes``
    ``filter``, ``text``, ``eol``, ``ident``, ``working-tree-encoding``; ``core.autocrlf``). ``git diff``
    compares such a file after converting it, so it can call equal a work-tree file whose bytes are not
    the ones a checkout writes: those are checked out, never linked.

    ``git check-attr`` runs only when an attribute file could apply (tracked anywhere, untracked under
    ``roots`` or above them, ``info/attributes``, the global or system file): most fixture trees have none.
    """
    if not paths:
        return ()
    autocrlf = git.git(repo, "config", "--get", "core.autocrlf", check=False).stdout.strip().lower()
    if autocrlf in (b"true", b"input"):
        return paths
    if not _attribute_files(repo, roots):
        return ()
    out = git.git(repo, "check-attr", "-z", "--stdin", *CONVERSIONS,
                  input=b"\0".join(os.fsencode(p) for p in paths)).stdout.split(b"\0")
    return {os.fsdecode(out[i]) for i in range(0, len(out) - 2, 3) if out[i + 2] not in (b"unspecified", b"unset")}


def _attribute_files(repo: Path, roots: Sequence[str]) -> bool:
    """Whether any gitattributes file could apply to files under ``roots`` (gitattributes(5), "DESCRIPTION")."""
    if git.git(repo, "ls-files", "-z", "--", ":(glob)**/.gitattributes").stdout:
        return True
    untracked = git.git(repo, "--literal-pathspecs", "ls-files", "-z", "--others", "--", *roots).stdout
    if any(os.path.basename(p) == b".gitattributes" for p in untracked.split(b"\0")):
        return True
    above = {repo / parent for root in roots for parent in [Path(root), *Path(root).parents]}
    if any((d / ".gitattributes").exists() for d in above):
        return True
    common = git.git(repo, "rev-parse", "--git-common-dir").stdout.decode().strip()
    explicit = git.git(repo, "config", "--path", "--get", "core.attributesFile", check=False).stdout.decode().strip()
    home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    candidates = [(repo / common / "info" / "attributes"), Path(explicit or os.path.join(home, "git", "attributes"))]
    if not os.environ.get("GIT_ATTR_NOSYSTEM"):
        candidates.append(Path("/etc/gitattributes"))
    return any(c.is_file() and c.stat().st_size for c in candidates)


def fill(source: Path, rev: str, tree: Path, want: Blobs, have: Blobs, *,
         checked: bool = False) -> tuple[list[str], int]:
    """Write the files ``want`` lists (``rev``'s, under the fixture roots) into the worktree ``tree``
    (where they were left out): a hard link to ``source``'s file for each path ``have`` lists with the
    same mode and blob, a checkout of ``rev``'s for the rest. Returns (the paths linked, the number of
    files checked out). ``checked``: ``source`` is a tree this module filled, whose files need no
    second look at their type and owner.

    Links are made by one thread per usable CPU, each on a contiguous run of the sorted paths (so mostly
    in directories of its own): 0.9 s against 1.6 s for 100,000 links on two cores.

    Raises:
        GateError: the checkout failed.
    """
    candidates = sorted(path for path, (mode, blob) in want.items()
                        if mode in REGULAR and have.get(path) == (mode, blob))
    top, dest_top = os.fspath(source), os.fspath(tree)
    for parent in sorted({os.path.dirname(path) for path in candidates}):
        os.makedirs(os.path.join(dest_top, parent), exist_ok=True)
    executable = {path for path in candidates if want[path][0] == "100755"}
    linked = [path for share in _shares(candidates, lambda part: _link_all(top, dest_top, part, checked, executable))
              for path in share]
    done = set(linked)
    rest = [path for path in want if path not in done]
    if rest:
        git.git(tree, *git.LOW_MEMORY, "--literal-pathspecs", "checkout", "--quiet", rev,
                "--pathspec-from-file=-", "--pathspec-file-nul",
                input=b"\0".join(os.fsencode(p) for p in rest))
    return linked, len(rest)


def _shares(paths: list[str], work: Callable[[list[str]], list[str]]) -> list[list[str]]:
    """``work`` on contiguous shares of ``paths``, one per usable CPU, on threads (file-system calls
    release the GIL); the results in order."""
    count = max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1, 8))
    if count == 1 or len(paths) < 1000:
        return [work(paths)]
    from concurrent.futures import ThreadPoolExecutor

    step = -(-len(paths) // count)
    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="checkout") as pool:
        return list(pool.map(work, [paths[i:i + step] for i in range(0, len(paths), step)]))


def _link_all(top: str, dest_top: str, paths: list[str], checked: bool = False,
              executable: Collection[str] = ()) -> list[str]:
    """Hard-link each path of ``top`` at the same path under ``dest_top``; the paths linked. A file that
    is not a regular file only its owner can write, or whose owner-execute bit is not the committed
    mode's (``executable``: the paths committed ``100755``; git may ignore the bit, ``core.fileMode``),
    is skipped (unless ``checked``); once the file system refuses links (another file system, or one
    without them), nothing more is tried. Names are resolved from the open directories (``paths``
    sorted, so each directory is opened once): 13 % faster than whole paths."""
    linked = []
    with _Dirs(top) as sources, _Dirs(dest_top) as dests:
        for path in paths:
            parent, name = os.path.split(path)
            try:
                src, dst = sources.fd(parent), dests.fd(parent)
                if not checked:
                    st = os.stat(name, dir_fd=src, follow_symlinks=False)
                    others_write = st.st_mode & stat.S_IWOTH or (_worker_owned(st.st_gid) and st.st_mode & stat.S_IWGRP)
                    if not stat.S_ISREG(st.st_mode) or others_write or _worker_owned(st.st_uid):
                        continue
                    if bool(st.st_mode & stat.S_IXUSR) != (path in executable):
                        continue
                os.link(name, name, src_dir_fd=src, dst_dir_fd=dst, follow_symlinks=False)
            except OSError as exc:
                if exc.errno in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                    break
                continue
            linked.append(path)
    return linked


def _unlink_all(top: str, paths: list[str]) -> list[str]:
    with _Dirs(top) as dirs:
        for path in paths:
            parent, name = os.path.split(path)
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dirs.fd(parent))
    return []


class _Dirs:
    """The directory of the paths being visited, open (one at a time), under ``top``."""

    def __init__(self, top: str) -> None:
        self.top = top
        self.at: str | None = None
        self.fd_ = -1

    def fd(self, parent: str) -> int:
        if parent != self.at:
            self.close()
            self.fd_ = os.open(os.path.join(self.top, parent), os.O_RDONLY | os.O_DIRECTORY)
            self.at = parent
        return self.fd_

    def close(self) -> None:
        if self.fd_ >= 0:
            os.close(self.fd_)
        self.at, self.fd_ = None, -1

    def __enter__(self) -> _Dirs:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Trees:
    """The worktrees :func:`trees` made, in the order of its revisions.

    Attributes:
        paths: one work tree per revision.
        linked: the first tree's files that are hard links to the work tree's, with the blob each must
            be; :func:`unverified` proves it once the digest has read them.
        twins: indexes (never 0) of trees whose fixture roots hold exactly the first tree's files: the same
            paths, each a hard link to the first tree's file. Their fixture digest is the first tree's.
    """

    paths: tuple[Path, ...]
    twins: frozenset[int] = frozenset()
    linked: Mapping[str, str] = field(default_factory=dict)  # the first tree's links: path → committed blob id
    notices: tuple[str, ...] = ()  # for the run's notices: the catalog's generated files a tree could not take


@contextlib.contextmanager
def trees(repo: Path, revs: Sequence[str], scratch: Path, catalog: Catalog,
          progress: Progress | None = None) -> Iterator[Trees]:
    """One detached worktree per revision of ``revs`` (the first: HEAD's, where linking from the work tree
    applies) in ``scratch`` (:func:`verdict_gate.host.git.worktree`, without
    :func:`~verdict_gate.host.fixtures.not_checked_out`), all made before any is used, then removed on
    every path out.

    Where this module's rules allow, the first tree's fixture roots are hard links to the work tree's
    files, and each other tree's are hard links to the first tree's files wherever its revision commits
    the same blob (so a second tree costs links even when the first was checked out). All are made
    before any is digested: a hard link moves its file's ``ctime``, and linking after a digest would
    send the post-run check to read every file again. Then the catalog's ``generated:`` files are written
    into each tree (:func:`verdict_gate.host.generated.write_generated`).

    Raises:
        GateError: git failed.
    """
    roots = link_roots(catalog)
    exclude = not_checked_out(catalog)
    with ExitStack() as stack:
        paths = [stack.enter_context(git.worktree(repo, rev, scratch, exclude=exclude + roots)) for rev in revs]
        twins = set()
        first_links: dict[str, str] = {}
        if roots:
            first = committed_blobs(repo, revs[0], roots)
            # The work tree is HEAD's: the first revision's blobs are HEAD's when it is HEAD.
            head = first if revs[0] == git.git(repo, "rev-parse", "HEAD").stdout.decode().strip() else None
            for i, (rev, path) in enumerate(zip(revs, paths, strict=True)):
                want = first if i == 0 or _same_roots(repo, revs[0], rev, roots) else committed_blobs(repo, rev, roots)
                if i == 0:  # only files the fixture digest covers: the post-run check then covers them too
                    globs = catalog.paths.fixtures
                    whole = whole_roots(globs)
                    source, have = repo, {k: v for k, v in work_tree_blobs(repo, roots, head).items()
                                          if is_fixture(k, globs, whole)}
                else:  # to the first tree's files, where git converts both alike (the same attribute files)
                    source, have = paths[0], first if _same_attributes(repo, revs[0], rev) else {}
                linked, copied = fill(source, rev, path, want, have, checked=i > 0)
                if i == 0:
                    first_links = {k: want[k][1] for k in linked}
                # Before the worktree goes: the links, on threads (removing one frees no data).
                stack.callback(_shares, linked, functools.partial(_unlink_all, os.fspath(path)))
                if i and not copied and want == first:
                    twins.add(i)
                if progress is not None and linked:
                    whence = "the work tree" if i == 0 else f"the tree of {revs[0][:12]}"
                    progress(f"fixtures of {rev[:12]}: {len(linked)} file(s) linked from {whence}, "
                             f"{copied} checked out")
        notices: list[str] = []
        for rev, path in zip(revs, paths, strict=True):
            if catalog.generated:
                written, problems = write_generated(path, catalog.generated, f"the tree of {rev[:12]}")
                notices += problems
                if progress is not None and written:
                    progress(f"generated: {written} file(s) the catalog declares written into the tree of {rev[:12]}")
        yield Trees(tuple(paths), frozenset(twins), first_links, tuple(notices))


def unverified(linked: Mapping[str, str], blobs: Mapping[str, str]) -> list[str]:
    """The linked paths (path → committed blob id) whose bytes, as the fixture digest read them
    (``blobs``: the digest's git blob ids, keyed ``repo/<path>``, from the same read as its sha256 and
    stamp), are not their committed blob. So the digest scored exactly the committed bytes, whatever
    happened to the work tree's file before it read them (an edit that kept size and mtime, an edit
    during the run); the post-run check covers every change after. Pure."""
    return sorted(path for path, blob in linked.items() if blobs.get(f"repo/{path}") != blob)


def check_out_instead(repo: Path, revs: Sequence[str], made: Trees, paths: Sequence[str]) -> Trees:
    """``made`` with ``paths`` (links the first tree found unverified) checked out in every tree instead:
    the other trees' links to those files go too, and no tree is a twin any more.

    Raises:
        GateError: the checkout failed.
    """
    for rev, tree in zip(revs, made.paths, strict=True):
        # A tree holds only its revision's files, so each path present is one to check out again.
        present = [p for p in paths if os.path.lexists(tree / p)]
        for p in present:
            os.unlink(tree / p)
        if present:
            git.git(tree, *git.LOW_MEMORY, "--literal-pathspecs", "checkout", "--quiet", rev,
                    "--pathspec-from-file=-", "--pathspec-file-nul",
                    input=b"\0".join(os.fsencode(p) for p in present))
    gone = set(paths)
    return Trees(made.paths, frozenset(), {k: v for k, v in made.linked.items() if k not in gone}, made.notices)


def _same_roots(repo: Path, a: str, b: str, roots: Sequence[str]) -> bool:
    """Whether revisions ``a`` and ``b`` commit the same trees at every root (one ``rev-parse``: then
    their blobs under the roots are the same, with no second listing of 100,000 files)."""
    names = [f"{rev}:{root}" for rev in (a, b) for root in roots]
    out = git.git(repo, "rev-parse", *names, check=False)
    ids = out.stdout.split()
    return out.returncode == 0 and len(ids) == len(names) and ids[:len(roots)] == ids[len(roots):]


def _same_attributes(repo: Path, a: str, b: str) -> bool:
    """Whether revisions ``a`` and ``b`` commit the same ``.gitattributes`` files."""
    return not git.git(repo, "diff", "--name-only", "-z", "--no-renames", a, b, "--",
                       ":(glob)**/.gitattributes").stdout


def written_through(tree: Path, repo: Path | None, changed: Sequence[str]) -> list[str]:
    """Notices for the changed fixture paths (``repo/<path>``, from the post-run check) whose file in
    ``tree`` is a hard link (more than one name), so the change reached ``repo``'s work tree too."""
    notices = []
    for digest_path in changed:
        if not digest_path.startswith("repo/") or repo is None:
            continue
        rel = digest_path[len("repo/"):]
        with contextlib.suppress(OSError):
            if os.lstat(tree / rel).st_nlink > 1 and (repo / rel).exists() and os.path.samefile(tree / rel, repo / rel):
                notices.append(f"{rel}: this fixture changed during the run, and it is a hard link to the work "
                               f"tree's file, so the work tree's copy is the changed one; if the gate's run changed "
                               f"it (not you), `git -C {repo} checkout -- {rel}` restores the committed bytes")
    return notices
