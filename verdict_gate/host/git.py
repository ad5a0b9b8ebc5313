"""Git edge: revisions, merge base, the ``-z`` diff, ancestry and detached worktrees.

Every call runs ``git`` with hooks and fsmonitor disabled, so a repository's
configuration cannot run code inside the gate. Failures become :class:`GateError`
(exit 2) naming the command and the fix.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from verdict_gate.core.errors import GateError

SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
# git maps pack files in windows of 1 GiB and keeps up to 8 GiB of them mapped, so checking out or
# archiving one 2 GiB fixture blob showed 2 GB of resident memory. Small windows, few of them:
# measured 70 MB for the same checkout (docs/design.md §4, "Memory").
LOW_MEMORY = ("-c", "core.packedGitWindowSize=16m", "-c", "core.packedGitLimit=64m")
# The gate's hard links to the work tree's fixtures (host.checkout) move those files' ctime, and git's index
# would then call every one of them changed, and hash it again, at the next status. Our own reads of the
# work tree compare size, mtime, inode and contents, as git does, but not ctime.
NO_CTIME = ("-c", "core.trustctime=false")
FETCH_DEPTH_FIX = ("fetch the full history: with actions/checkout set `fetch-depth: 0`; "
                   "locally run `git fetch --unshallow`")


def git(repo: Path, *args: str, check: bool = True, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C repo args…`` and return the completed process (stdout and stderr as bytes);
    ``input``: bytes for its standard input (else it reads nothing).

    Raises:
        GateError: when git is missing, or (``check``) exits non-zero.
    """
    try:
        proc = subprocess.run(["git", *SAFE, "-C", str(repo), *args], capture_output=True, input=input,
                              stdin=subprocess.DEVNULL if input is None else None)
    except FileNotFoundError:
        raise GateError("git", "PATH", "the git executable was not found", "install git (2.35 or newer)") from None
    if check and proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()
        raise GateError("git", f"{repo}: git {' '.join(args)}", err or f"exit {proc.returncode}",
                        "check the repository path and revision names")
    return proc


def toplevel(repo: Path) -> Path:
    """The work tree root containing ``repo``. Raises GateError when ``repo`` is not in a git work tree."""
    if not repo.is_dir():
        raise GateError("repository", str(repo), "does not exist or is not a directory",
                        "pass --repo with the path of a git checkout")
    proc = git(repo, "rev-parse", "--show-toplevel", check=False)
    if proc.returncode != 0:
        raise GateError("repository", str(repo), "is not a git work tree",
                        "pass --repo with the path of a git checkout (`git clone …`)")
    return Path(proc.stdout.decode().strip())


def is_shallow(repo: Path) -> bool:
    return git(repo, "rev-parse", "--is-shallow-repository").stdout.strip() == b"true"


def fetch_fix(ref: str) -> str:
    """How to get a missing ref: check the spelling, or fetch it under the name it is given."""
    remote, sep, branch = ref.partition("/")
    if sep and remote == "origin" and branch:
        return (f"check the name (`git branch -a`), or fetch it: "
                f"`git fetch origin {branch}:refs/remotes/origin/{branch}`")
    return f"check the name (`git branch -a`), or fetch it: `git fetch origin {ref}:{ref}`"


# Where git looks up a short name, in its order (gitrevisions(7), "<refname>").
_NAMESPACES = ("refs/", "refs/tags/", "refs/heads/", "refs/remotes/")


def ambiguous_names(repo: Path, ref: str) -> list[str]:
    """Every full ref a short ``ref`` could mean (empty for a commit id or a full ``refs/…`` name)."""
    if ref.startswith("refs/") or not ref or any(c in ref for c in "~^:@{ "):
        return []
    names = [f"{space}{ref}" for space in _NAMESPACES if space != "refs/"]
    names += [f"refs/remotes/{ref}/HEAD"]
    found = git(repo, "for-each-ref", "--format=%(refname)", *names, check=False).stdout.decode().split()
    return sorted(set(found) & set(names))


def resolve(repo: Path, ref: str, what: str = "revision") -> str:
    """Full commit id of ``ref``.

    Raises:
        GateError: when ``ref`` does not exist, or is a short name that several refs answer to
            (a tag ``origin/main`` beside the remote branch ``origin/main``: git would quietly
            pick the tag, which anyone who can push a tag controls).
    """
    candidates = ambiguous_names(repo, ref)
    if len(candidates) > 1:
        branch = [c for c in candidates if c.startswith(("refs/heads/", "refs/remotes/"))] or candidates
        raise GateError(what, f"{repo} {ref!r}", f"is ambiguous: it names {', '.join(candidates)}",
                        f"use the full name of the one you mean, e.g. {branch[-1]}")
    proc = git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    if proc.returncode != 0:
        shallow = " (this clone is shallow)" if is_shallow(repo) else ""
        fix = FETCH_DEPTH_FIX if shallow else fetch_fix(ref)
        raise GateError(what, f"{repo} {ref!r}", f"does not name a commit in this repository{shallow}", fix)
    return proc.stdout.decode().strip()


def merge_base(repo: Path, base: str, head: str) -> str:
    """``git merge-base base head``: the base revision (docs/design.md §1).

    Raises:
        GateError: with the ``fetch-depth: 0`` fix when the clone is shallow, else naming
            the two unrelated histories.
    """
    proc = git(repo, "merge-base", base, head, check=False)
    if proc.returncode == 0:
        return proc.stdout.decode().strip()
    if is_shallow(repo):
        raise GateError("git history", str(repo), f"is a shallow clone without the merge base of {base[:12]} and HEAD",
                        FETCH_DEPTH_FIX)
    raise GateError("git history", str(repo), f"{base[:12]} and {head[:12]} have no common ancestor",
                    "pass a --base that shares history with HEAD")


def is_ancestor(repo: Path, ancestor: str, rev: str) -> bool:
    """True when ``ancestor`` is ``rev`` or one of its ancestors; False too when unknown here."""
    return git(repo, "merge-base", "--is-ancestor", ancestor, rev, check=False).returncode == 0


def diff_name_status(repo: Path, base: str, head: str) -> bytes:
    """Raw ``git diff -z --name-status`` output of ``base...head`` (renames kept, R/C both sides)."""
    return git(repo, "diff", "-z", "--name-status", "-M", "--no-ext-diff", "--no-textconv",
               f"{base}...{head}", "--").stdout


def dirty_paths(repo: Path) -> list[str]:
    """Tracked paths with uncommitted changes (they are not scored: the gate checks out HEAD)."""
    out = git(repo, *NO_CTIME, "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=no").stdout
    return [entry[3:].decode(errors="replace") for entry in out.split(b"\0") if len(entry) > 3]


@contextlib.contextmanager
def worktree(repo: Path, rev: str, parent: Path | None = None, exclude: Sequence[str] = ()) -> Iterator[Path]:
    """A detached worktree of ``rev`` in a fresh temp dir, removed on every path out.

    ``exclude``: top-level-relative directories (POSIX, e.g. ``"oracle"``) not written to disk, nor to the
    worktree's index. The repository's configuration is not touched (no sparse-checkout settings).
    """
    holder = Path(tempfile.mkdtemp(prefix="verdict-gate-wt-", dir=parent))
    path = holder / "tree"
    try:
        # No parallel checkout (checkout.workers): its writers held a whole 2 GiB blob in memory.
        if not exclude:
            git(repo, *LOW_MEMORY, "worktree", "add", "--detach", "--quiet", str(path), rev)
        else:
            git(repo, *LOW_MEMORY, "worktree", "add", "--detach", "--quiet", "--no-checkout", str(path), rev)
            git(path, *LOW_MEMORY, "checkout", "--quiet", rev, "--", ":(top)",
                *(f":(top,exclude,literal){d.strip('/')}" for d in exclude))
        yield path
    finally:
        # Delete the files and let `prune` drop the worktree's record: `worktree remove --force`
        # would first compare every file with the index (a full status of a tree we throw away).
        _rmtree(holder)
        git(repo, "worktree", "prune", check=False)


def _rmtree(path: Path) -> None:
    """Remove ``path`` even where a run left directories read-only."""
    shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        for dirpath, _dirs, _files in os.walk(path):
            with contextlib.suppress(OSError):
                os.chmod(dirpath, 0o755)
        shutil.rmtree(path, ignore_errors=True)


def tree_entries(repo: Path, treeish: str) -> list[tuple[str, str, int, str]]:
    """The entries of ``treeish`` (a commit, or ``COMMIT:DIR``), recursively, directories included:
    ``(mode, kind, size, path)`` per entry as ``git ls-tree -r -t -l -z`` prints it (size -1 for a
    tree or a submodule; path relative to ``treeish``, as committed).

    Raises:
        GateError: git is missing, or ``treeish`` names no tree.
    """
    proc = git(repo, *LOW_MEMORY, "--literal-pathspecs", "ls-tree", "-r", "-t", "-l", "-z", "--full-tree",
               "--end-of-options", treeish, check=False)
    if proc.returncode != 0:
        raise GateError("oracle pack", f"git:{treeish}", proc.stderr.decode(errors="replace").strip(),
                        "name a revision and a directory that exist, e.g. git:origin/main:oracle")
    entries = []
    for line in proc.stdout.split(b"\0"):
        if not line:
            continue
        meta, _, path = line.partition(b"\t")
        mode, kind, _object, size = meta.decode("ascii").split()
        entries.append((mode, kind, -1 if size == "-" else int(size), os.fsdecode(path)))
    return entries


def checkout_tree(repo: Path, treeish: str, dest: Path, index: Path) -> None:
    """Write the files of ``treeish`` into ``dest`` (an existing, empty directory) with git's own
    checkout (``read-tree`` into the private index file ``index``, then ``checkout-index``), as a work
    tree would have them. The repository's own index and work tree are not touched; ``index`` is
    removed. Check :func:`tree_entries` first: this writes what the tree holds.

    Raises:
        GateError: git is missing or fails.
    """
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    try:
        for args in (("read-tree", "--end-of-options", treeish),
                     ("--work-tree", str(dest), "checkout-index", "--all")):
            proc = subprocess.run(["git", *SAFE, *LOW_MEMORY, "-C", str(repo), *args], capture_output=True,
                                  stdin=subprocess.DEVNULL, env=env)
            if proc.returncode != 0:
                raise GateError("oracle pack", f"git:{treeish}", proc.stderr.decode(errors="replace").strip()
                                or f"git {args[0]} exited {proc.returncode}",
                                "check that the repository is readable and the disk has room")
    except FileNotFoundError:
        raise GateError("git", "PATH", "the git executable was not found", "install git (2.35 or newer)") from None
    finally:
        index.unlink(missing_ok=True)
        index.with_name(index.name + ".lock").unlink(missing_ok=True)


def git_config(repo: Path) -> Path | None:
    """The repository's own configuration file (where actions/checkout leaves the job token, in
    ``http.<url>.extraheader``), read without running git: ``.git/config``, or for a linked worktree
    or submodule whose ``.git`` is a file, the config of the directory its ``gitdir:`` (and that
    directory's ``commondir``) names. ``None`` when there is none."""
    dot = repo / ".git"
    git_dir = dot
    if dot.is_file():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            line = dot.read_text(encoding="utf-8").strip()
            if line.startswith("gitdir:"):
                git_dir = (repo / line[len("gitdir:"):].strip()).resolve()
        common = git_dir / "commondir"
        with contextlib.suppress(OSError, UnicodeDecodeError):
            git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
    config = git_dir / "config"
    return config if config.is_file() else None


def python_sources(repo: Path, rev: str, dirs: Sequence[str]) -> dict[str, bytes]:
    """The ``.py`` files of ``rev`` under ``dirs`` (repository-relative; ``.`` for the root; a ``python_path``),
    by path relative to their entry of ``dirs``, read in one ``git cat-file --batch`` per entry (regular
    files only). An entry that is no directory of ``rev`` holds none.

    Raises:
        GateError: git is missing, or ``rev`` names no commit.
    """
    found: dict[str, bytes] = {}
    for entry in dict.fromkeys(d.strip("/") or "." for d in dirs):
        treeish = rev if entry == "." else f"{rev}:{entry}"
        proc = git(repo, *LOW_MEMORY, "--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", "--end-of-options",
                   treeish, check=False)
        if proc.returncode != 0:
            continue  # not a directory of that revision: it defines nothing
        blobs: dict[str, str] = {}
        for line in proc.stdout.split(b"\0"):
            meta, _, path = line.partition(b"\t")
            fields = meta.split()
            if len(fields) == 3 and fields[0] in (b"100644", b"100755") and path.endswith(b".py"):
                blobs[os.fsdecode(path)] = fields[2].decode("ascii")
        if not blobs:
            continue
        asked = "".join(f"{oid}\n" for oid in blobs.values()).encode()
        out = git(repo, *LOW_MEMORY, "cat-file", "--batch", input=asked).stdout
        at = 0
        for name in blobs:  # --batch answers in the order asked: "<oid> blob <size>\n<bytes>\n"
            header_end = out.index(b"\n", at)
            size = int(out[at:header_end].split()[2])
            found[name] = out[header_end + 1:header_end + 1 + size]
            at = header_end + 1 + size + 1
    return found
