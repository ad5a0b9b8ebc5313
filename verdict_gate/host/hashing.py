"""Walking and hashing fixture trees and packs: the file-system half of :mod:`verdict_gate.core.digest`
(docs/design.md §4).

:func:`walk` lists regular files in component order (refusing links and special files);
:func:`scan` hashes them. Each file is read once, in chunks, and that one read feeds its
manifest sha256 and the tree digest, so a tree of any size is hashed without holding more
than one chunk per worker in memory. ``tree-v2`` hashes each file once (its manifest sha256
is its tree hash unless a normaliser rewrites it), on a thread pool, or in contiguous shares
that a caller-supplied :data:`Parallel` runs in other processes (many small files cost the
interpreter's per-file work, which threads cannot spread); ``tree-v1`` stays computable, for
freezes recorded under it.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from verdict_gate.core.digest import (
    CACHE_DIRS,
    FORMAT,
    FORMATS,
    MANIFEST_NAME,
    TREE_V1,
    TREE_V2,
    Entry,
    Normalizer,
    Scan,
    Stamp,
    manifest_of,
    sort_key,
)
from verdict_gate.core.errors import GateError
from verdict_gate.core.globs import match

CHUNK = 1 << 20  # bytes per read
# A normaliser's regular expression needs a whole file in memory: files it matches are capped,
# so memory stays flat in fixture size (docs/design.md §4).
NORMALIZE_MAX = 32 << 20
BATCH_FILES = 256  # at most this many files per thread-pool task (small files are batched)
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def walk(root: Path, prefix: str = "", skip: Sequence[str] = ()) -> Iterator[Entry]:
    """Yield every regular file under ``root`` in component order (``tree-v1`` and ``tree-v2``).

    Args:
        root: directory to walk; a missing root yields nothing.
        prefix: prepended (with ``/``) to each relative path, to merge several roots.
        skip: relative paths (top level of ``root``) to leave out, e.g. ``manifest.sha256``.
            Directories named in :data:`CACHE_DIRS` are always left out.
    Raises:
        GateError: on a symlink, device, FIFO or socket (never followed), or when
            ``root`` itself is a symlink or not a directory (before the first entry).
    """
    paths, files = _walk_lists(root, prefix, skip)
    for path, file in zip(paths, files, strict=True):
        yield Entry(path, file)


def _walk_lists(root: Path, prefix: str = "", skip: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """:func:`walk` as two parallel lists (digest paths, file locations), already in component order."""
    if root.is_symlink():
        raise GateError("fixture tree", str(root), "is a symbolic link; links are never followed",
                        "replace the link with the real directory")
    paths: list[str] = []
    files: list[str] = []
    if not root.exists():
        return paths, files
    if not root.is_dir():
        raise GateError("fixture tree", str(root), "is not a directory", "point at a directory")
    _walk(os.fspath(root), f"{prefix}/" if prefix else "", "", set(skip), paths, files)
    return paths, files


def _by_name(item: os.DirEntry[str]) -> str:
    return item.name


def _walk(here: str, prefix: str, rel: str, skip: set[str], paths: list[str], files: list[str]) -> None:
    # Depth first, each directory's names sorted as strings: that is component order (`a/b` before
    # `a-b/c` before `a.txt`), so the digest needs no second sort.
    with os.scandir(here) as it:
        found = sorted(it, key=_by_name)
    add_path, add_file = paths.append, files.append
    for item in found:
        name = item.name
        relpath = f"{rel}{name}"
        if skip and relpath in skip:
            continue
        # d_type from the directory read: no extra system call per file (lstat only when unknown).
        # A link is neither a file nor a directory here (never followed).
        if item.is_file(follow_symlinks=False):
            add_path(f"{prefix}{relpath}")
            add_file(item.path)
        elif item.is_dir(follow_symlinks=False):
            if name not in CACHE_DIRS:
                _walk(item.path, prefix, f"{relpath}/", skip, paths, files)
        elif item.is_symlink():
            raise GateError("fixture tree", item.path, "is a symbolic link; links are never followed",
                            f"replace {relpath!r} with a regular file or remove it")
        else:
            raise GateError("fixture tree", item.path, "is not a regular file (device, FIFO or socket)",
                            f"remove {relpath!r}; only regular files and directories are hashed")


def _rules(name: str | None, normalizers: Sequence[Normalizer]) -> list[Normalizer]:
    return [n for n in normalizers if name is not None and match(name, n.glob)]


def _unreadable(file: str | os.PathLike[str], why: str) -> GateError:
    return GateError("fixture file", os.fspath(file), f"cannot be read ({why})",
                     "make the file readable and keep the tree still during the run")


def _not_regular(file: str | os.PathLike[str]) -> GateError:
    return GateError("fixture tree", os.fspath(file), "is not a regular file (device, FIFO or socket)",
                     "only regular files and directories are hashed")


def _normalise(data: bytes, rules: Sequence[Normalizer]) -> bytes:
    for rule in rules:
        data = re.sub(rule.pattern.encode(), rule.replacement.encode(), data)
    return data


def _read_whole(fd: int, file: str | os.PathLike[str], size: int) -> bytes:
    """All of a file a normaliser matches, refusing one above :data:`NORMALIZE_MAX` bytes."""
    if size > NORMALIZE_MAX:
        raise GateError("normalizer", os.fspath(file),
                        f"matches a file of {size} bytes; a normaliser reads its whole file, and files above "
                        f"{NORMALIZE_MAX >> 20} MiB are refused so that memory stays flat",
                        "narrow the normaliser's glob to the small text fixtures that embed timestamps or paths")
    parts = []
    got = 0
    while block := os.read(fd, CHUNK):
        got += len(block)
        if got > NORMALIZE_MAX:
            raise GateError("normalizer", os.fspath(file), "grew while it was read",
                            "keep the tree still during the run")
        parts.append(block)
    return b"".join(parts)


def _open(file: str | os.PathLike[str]) -> tuple[int, os.stat_result, Stamp]:
    """``file`` opened for reading (never through a link), its ``fstat`` and its stamp.

    Raises:
        GateError: it cannot be opened, or it is no longer a regular file (a FIFO would block the read).
    """
    try:
        fd = os.open(file, _OPEN_FLAGS)
    except OSError as exc:
        raise _unreadable(file, exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _not_regular(file)
    return fd, st, (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _hash_big(fd: int, git: Any = None) -> tuple[Any, int]:
    """sha256 of the rest of ``fd``, read in :data:`CHUNK` blocks, and the bytes read; ``git``: a hash
    object fed the same blocks too."""
    h = hashlib.sha256()
    got = 0
    read = os.read
    # A new block a read (malloc reuses the freed one) hashes about 10 % faster here than
    # reading into one bytearray through a memoryview.
    while block := read(fd, CHUNK):
        h.update(block)  # hashlib releases the GIL on large updates
        if git is not None:
            git.update(block)
        got += len(block)
    return h, got


def _git_blob(size: int) -> Any:
    """A sha1 fed git's blob header for ``size`` bytes (gitformat-object: ``blob SIZE NUL``)."""
    return hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)


# What hashing files[lo:hi] gives (marshal-able, so a share can come back from another process):
# (raw sha256 hex per file, stamp per file, the share's tree-v2 records as bytes, raw bytes read,
# files in the tree digest, their raw bytes, git blob id per file or none).
_Share = tuple[list[str], list[Stamp], bytes, int, int, int, list[str]]


def _hash_share(files: Sequence[str | os.PathLike[str]], names: Sequence[str | None],
                normalizers: Sequence[Normalizer], lo: int, hi: int, git_blobs: bool = False) -> _Share:
    """Read each of ``files[lo:hi]`` once, in order, in this thread: its raw sha256, its stamp and, for
    a kept file (``names[i]`` not ``None``), its ``tree-v2`` record ``name NUL sha256(normalised) NUL``;
    with ``git_blobs``, its git blob id from the same read.

    This is the per-file hot loop (about 10 µs a small file: open, fstat, read, sha256, close), so it
    avoids per-file objects and calls it does not need. Raises the error of the first bad file.
    """
    sha = hashlib.sha256
    os_open, fstat, read, close, is_reg = os.open, os.fstat, os.read, os.close, stat.S_ISREG
    flags = _OPEN_FLAGS
    hexes: list[str] = []
    stamps: list[Stamp] = []
    records: list[str] = []  # name, hex, name, hex, … of the kept files
    gits: list[str] = []
    add_hex, add_stamp, add_record, add_git = hexes.append, stamps.append, records.append, gits.append
    total = tree_files = tree_bytes = 0
    for i in range(lo, hi):
        file = files[i]
        name = names[i]
        rules = _rules(name, normalizers) if normalizers else None
        try:
            fd = os_open(file, flags)
        except OSError as exc:
            raise _unreadable(file, exc.strerror or str(exc)) from None
        try:
            st = fstat(fd)
        except BaseException:
            close(fd)
            raise
        try:
            if not is_reg(st.st_mode):
                raise _not_regular(file)
            size = st.st_size
            if rules:  # a normaliser needs the whole file; only matched files pay that
                data = _read_whole(fd, file, size)
                got = len(data)
                raw_hex = sha(data).hexdigest()
                tree_hex = sha(_normalise(data, rules)).hexdigest()
                if git_blobs:
                    git = _git_blob(got)
                    git.update(data)
                    add_git(git.hexdigest())
            else:
                if size < CHUNK:  # most fixtures: one read of the size fstat gave, plus one byte to see the end
                    data = read(fd, size + 1)
                    h = sha(data)
                    got = len(data)
                    if got > size:  # it grew since fstat: read the rest
                        while block := read(fd, CHUNK):
                            h.update(block)
                            got += len(block)
                        if git_blobs:
                            add_git("")  # no blob id for a file that changed as it was read
                    elif git_blobs:
                        git = _git_blob(got)
                        git.update(data)
                        add_git(git.hexdigest())
                else:
                    git = _git_blob(size) if git_blobs else None
                    h, got = _hash_big(fd, git)
                    if git is not None:
                        add_git(git.hexdigest() if got == size else "")
                raw_hex = tree_hex = h.hexdigest()
        except OSError as exc:
            raise _unreadable(file, exc.strerror or str(exc)) from None
        finally:
            close(fd)
        add_hex(raw_hex)
        add_stamp((size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev))
        total += got
        if name is not None:
            add_record(name)
            add_record(tree_hex)
            tree_files += 1
            tree_bytes += got
    blob = os.fsencode("\0".join(records) + "\0") if records else b""
    return hexes, stamps, blob, total, tree_files, tree_bytes, gits


def _identity(path: str) -> str:
    return path


# Runs ``work(k)`` for every ``k`` in ``range(tasks)`` and yields the results in order as they are
# ready, possibly from other processes (forked, so ``work`` and its data are inherited, never sent;
# each result must be marshal-able). The edge supplies it: the core starts no process (docs/design.md
# §10). ``work`` never raises for a bad file (it returns :data:`_FAILED` and the scan is redone
# serially, which raises the error a serial scan raises); a task a process could not deliver is
# computed again. The caller may stop iterating early (the iterator is then closed).
Parallel = Callable[[int, Callable[[int], Any]], Iterable[Any]]

PARALLEL_MIN_FILES = 1024  # fewer files than this: forking costs more than it saves
PARALLEL_TASKS = 256  # about this many tasks, handed out on demand (a busy core takes fewer)
PARALLEL_TASK_MIN = 64  # files a task at least
PARALLEL_MIN_DIRS = 32  # directories left unlisted before the walk is handed to the tasks

# One task: files[lo:hi] of the walk so far, then ``units`` (digest path, location, is a directory)
# that the task walks itself, in order, before it hashes them.
_Task = tuple[int, int, list[tuple[str, str, bool]]]
_FAILED = "failed"  # a task's result when its walk or its hashing raised


def scan(
    entries: Iterable[Entry],
    normalizers: Sequence[Normalizer] = (),
    *,
    tree_path: Callable[[str], str | None] = _identity,
    state: Any = None,
    format: str = FORMAT,
    workers: int | None = None,
    parallel: Parallel | None = None,
    git_blobs: bool = False,
) -> Scan:
    """Hash ``entries`` (sorted here by path components) in one read per file.

    Each file is read once, in chunks; that read feeds both its raw sha256 (the manifest
    view, for every entry) and the tree digest (for entries whose ``tree_path`` is not
    ``None``, under that path). So the pack's manifest and its share of the fixture digest
    come from one pass.

    ``tree-v2`` (docs/design.md §4): the tree digest is sha256 over, per kept file in component
    order, ``path`` (UTF-8 / file-system bytes) NUL ``sha256(normalised contents)`` as 64
    lowercase hex digits NUL. Files hash on a pool of ``workers`` threads (default: the core
    count), small files batched; or, given ``parallel`` and at least :data:`PARALLEL_MIN_FILES`
    files, in contiguous shares that ``parallel`` may run in other processes (the interpreter's
    per-file work, not the hashing, is the cost of many small files, and threads share one GIL).
    The result does not depend on the pool or the shares.
    ``tree-v1``: one sha256 over ``path`` NUL contents NUL per file, read in order.

    Args:
        entries: files to read.
        normalizers: applied (by ``tree_path`` glob) to the tree digest's view only.
        tree_path: entry path → digest path, or ``None`` to leave the entry out of the tree
            digest. It must keep component order among the entries it keeps.
        state: a ``hashlib.sha256`` object to continue (see :attr:`Scan.state`), of the same
            format; digest paths fed after it must sort after every path already in it.
        format: ``tree-v2`` or ``tree-v1``.
        workers: threads for ``tree-v2`` (1: hash in this thread).
        parallel: runs ``tree-v2`` shares, e.g. in forked processes (see :data:`Parallel`).
        git_blobs: also the git blob id of each file, from the same read (``tree-v2`` only).
    Returns:
        a :class:`Scan`: ``digest`` over the kept entries, ``files`` raw sha256 of every
        entry, ``total_bytes`` read, ``state`` a copy of the tree hasher to continue.
    Raises:
        GateError: when a file vanishes or cannot be read, or a normaliser matches a file above
            :data:`NORMALIZE_MAX` bytes (the first such file in order).
    """
    _check_format(format)
    ordered = sorted(entries, key=lambda e: sort_key(e.path))
    paths = [e.path for e in ordered]
    files = [e.file for e in ordered]
    return _scan_lists(paths, files, normalizers, tree_path, state, format, workers, parallel, git_blobs)


def _check_format(format: str) -> None:
    if format not in FORMATS:
        raise GateError("digest format", repr(format), "is not known", f"use one of {', '.join(FORMATS)}")


def _scan_lists(paths: list[str], files: Sequence[str | os.PathLike[str]], normalizers: Sequence[Normalizer],
                tree_path: Callable[[str], str | None], state: Any, format: str, workers: int | None,
                parallel: Parallel | None, git_blobs: bool = False) -> Scan:
    """:func:`scan` of entries already in component order, given as parallel lists."""
    if format == TREE_V1:
        return _scan_v1(paths, files, normalizers, tree_path, state)
    names = paths if tree_path is _identity else [tree_path(p) for p in paths]
    count = len(paths)
    tree = state.copy() if state is not None else hashlib.sha256()
    if parallel is not None and count >= PARALLEL_MIN_FILES:
        step = max(PARALLEL_TASK_MIN, -(-count // PARALLEL_TASKS))
        tasks: list[_Task] = [(lo, min(lo + step, count), []) for lo in range(0, count, step)]
        done = _run_tasks(paths, files, names, normalizers, tasks, parallel, tree, git_blobs)
        if done is not None:
            return done
        tree = state.copy() if state is not None else hashlib.sha256()  # redo serially: its error, in order
    return _assemble(tree, _with_paths(paths, _thread_shares(files, names, normalizers, workers, git_blobs)), count)


def _with_paths(paths: list[str], shares: Iterable[_Share]) -> Iterator[tuple[list[str], _Share]]:
    """Consecutive shares of ``paths``, each with its slice of them."""
    at = 0
    for share in shares:
        yield paths[at:at + len(share[0])], share
        at += len(share[0])


def _assemble(tree: Any, shares: Iterable[tuple[list[str], _Share]], count: int | None) -> Scan:
    """The :class:`Scan` of ``shares`` (each with its digest paths), in order, continuing ``tree``."""
    out_files: dict[str, str] = {}
    stamps: dict[str, Stamp] = {}
    blobs: dict[str, str] = {}
    total = tree_files = tree_bytes = seen = 0
    for these, (hexes, share_stamps, blob, share_total, share_tree_files, share_tree_bytes, gits) in shares:
        out_files.update(zip(these, hexes, strict=True))
        stamps.update(zip(these, share_stamps, strict=True))
        if gits:
            blobs.update(zip(these, gits, strict=True))
        tree.update(blob)
        total += share_total
        tree_files += share_tree_files
        tree_bytes += share_tree_bytes
        seen += len(hexes)
    if count is not None and seen != count:
        raise RuntimeError(f"hashed {seen} of {count} files")  # a bug in a Parallel, never a user error
    return Scan(digest=tree.hexdigest(), files=out_files, total_bytes=total, state=tree.copy(),
                tree_files=tree_files, tree_bytes=tree_bytes, format=TREE_V2, stamps=stamps, blobs=blobs)


def _run_tasks(paths: list[str], files: Sequence[str | os.PathLike[str]], names: Sequence[str | None],
               normalizers: Sequence[Normalizer], tasks: Sequence[_Task], parallel: Parallel,
               tree: Any, git_blobs: bool = False) -> Scan | None:
    """``tasks`` run by ``parallel``, assembled in order; ``None`` when one failed (redo serially)."""

    def work(k: int) -> tuple[list[str] | None, _Share] | str:
        lo, hi, units = tasks[k]
        try:
            if not units:
                return None, _hash_share(files, names, normalizers, lo, hi, git_blobs)
            # Units come from digest_dir only: digest paths are the walk's relative paths.
            unit_paths: list[str] = []
            unit_files: list[str] = []
            for rel, location, is_dir in units:
                if is_dir:
                    _walk(location, "", f"{rel}/", set(), unit_paths, unit_files)
                else:
                    unit_paths.append(rel)
                    unit_files.append(location)
            return unit_paths, _hash_share(unit_files, unit_paths, normalizers, 0, len(unit_files), git_blobs)
        except Exception:  # the serial redo raises it, in order (walk errors first)
            return _FAILED

    results = parallel(len(tasks), work)

    def pairs() -> Iterator[tuple[list[str], _Share]]:
        for (lo, hi, _units), result in zip(tasks, results, strict=True):  # one result a task, in order
            if isinstance(result, str):
                raise _Redo
            own, share = result
            yield (paths[lo:hi] if own is None else own), share

    try:
        return _assemble(tree, pairs(), None)
    except _Redo:
        return None
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()  # stop the other processes at once when the scan is redone


class _Redo(Exception):
    """A task failed: the scan is redone serially."""


def _thread_shares(files: Sequence[str | os.PathLike[str]], names: Sequence[str | None],
                   normalizers: Sequence[Normalizer], workers: int | None, git_blobs: bool = False) -> list[_Share]:
    """``tree-v2`` shares hashed on a thread pool (hashlib releases the GIL on big updates), in order."""
    count = len(files)
    pool_size = workers if workers is not None else (os.cpu_count() or 1)
    if pool_size <= 1 or count < 2:
        return [_hash_share(files, names, normalizers, 0, count, git_blobs)]
    from concurrent.futures import ThreadPoolExecutor  # not at import: the process path needs no threads

    # Small files are batched (at most BATCH_FILES a task), but never fewer than four tasks a
    # thread, so that a few big files still spread over the pool. Results come back in order.
    step = max(1, min(BATCH_FILES, count // (pool_size * 4)))
    with ThreadPoolExecutor(max_workers=pool_size, thread_name_prefix="digest") as pool:
        return list(pool.map(lambda lo: _hash_share(files, names, normalizers, lo, min(lo + step, count), git_blobs),
                             range(0, count, step)))


def _scan_v1(paths: Sequence[str], files: Sequence[str | os.PathLike[str]], normalizers: Sequence[Normalizer],
             tree_path: Callable[[str], str | None], state: Any) -> Scan:
    """``tree-v1``: contents fed into one sha256 in order (one thread; kept for older freezes)."""
    out_files: dict[str, str] = {}
    stamps: dict[str, Stamp] = {}
    total = 0
    tree = state.copy() if state is not None else hashlib.sha256()
    tree_files = tree_bytes = 0
    for path, file in zip(paths, files, strict=True):
        name = tree_path(path)
        raw = hashlib.sha256()
        rules = _rules(name, normalizers)
        if name is not None:
            tree.update(os.fsencode(name) + b"\0")
        fd, st, stamps[path] = _open(file)
        try:
            got = 0
            if rules:  # a normaliser needs the whole file; only matched files pay that
                data = _read_whole(fd, file, st.st_size)
                raw.update(data)
                got = len(data)
                tree.update(_normalise(data, rules))
            else:
                while block := os.read(fd, CHUNK):
                    raw.update(block)
                    got += len(block)
                    if name is not None:
                        tree.update(block)
        except OSError as exc:
            raise _unreadable(file, exc.strerror or str(exc)) from None
        finally:
            os.close(fd)
        total += got
        if name is not None:
            tree.update(b"\0")
            tree_files += 1
            tree_bytes += got
        out_files[path] = raw.hexdigest()
    return Scan(digest=tree.hexdigest(), files=out_files, total_bytes=total, state=tree.copy(),
                tree_files=tree_files, tree_bytes=tree_bytes, format=TREE_V1, stamps=stamps)


def changed_since(before: Scan, entries: Iterable[Entry], *, workers: int | None = None) -> list[str]:
    """Digest paths whose files differ from ``before`` (the scan that digested them): added, removed,
    or changed contents (docs/design.md §4, "The post-run check").

    The proof is cheap: a file whose stamp (size, mtime, ctime, inode, device, from ``lstat``) is
    the one taken from the descriptor that was read is unchanged, without reading it; only files
    whose stamp moved are read again and compared by their raw sha256 (so a ``chmod`` or a
    ``touch`` is not a change, an edit is). A file with more than one name (a hard link, e.g. to a
    work tree's fixture) whose stamp moved is a change whatever it holds now: it may have been
    written through another name, read, and put back. ``before.stamps`` and ``before.files`` are
    keyed by the entries' paths.
    """
    stamps = before.stamps
    entries = list(entries)
    changed: set[str] = set()
    suspects = []
    known = 0
    lstat = os.lstat  # one lookup: this loop runs once per fixture file
    for e in entries:
        old = stamps.get(e.path)
        if old is None:
            changed.add(e.path)  # added
            continue
        known += 1
        try:
            st = lstat(e.file)
        except OSError:
            changed.add(e.path)
            continue
        if (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev) != old:
            if st.st_nlink > 1:
                changed.add(e.path)
            else:
                suspects.append(e)
    if known != len(stamps):
        changed.update(stamps.keys() - {e.path for e in entries})  # removed
    if suspects:
        again = scan(suspects, tree_path=lambda _path: None, workers=workers)
        changed.update(path for path, sha in again.files.items() if sha != before.files.get(path))
    return sorted(changed, key=sort_key)


def sha256_file(path: Path) -> str:
    """sha256 hex of one file's bytes, read in chunks of :data:`CHUNK` bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK):
            h.update(block)
    return h.hexdigest()


def digest_dir(root: Path, normalizers: Sequence[Normalizer] = (), format: str = FORMAT, *,
               parallel: Parallel | None = None) -> Scan:
    """``format`` scan of one directory (the ``verdict-gate digest DIR`` command).

    ``parallel`` (see :func:`scan`): once the walk has found :data:`PARALLEL_MIN_FILES` files with
    at least :data:`PARALLEL_MIN_DIRS` directories still unlisted, the rest of the walk is left to
    the tasks too (each walks and hashes a contiguous run of the entries left, in order).
    """
    if not root.is_dir():
        raise GateError("directory", str(root), "does not exist or is not a directory",
                        "pass an existing directory")
    _check_format(format)
    if parallel is not None and format == TREE_V2 and not root.is_symlink():
        planned = _plan(os.fspath(root), PARALLEL_MIN_FILES, PARALLEL_MIN_DIRS)
        if planned is not None:
            paths, files, rest, per_dir = planned
            if rest:
                done = _run_tasks(paths, files, paths, normalizers, _tasks(len(paths), rest, per_dir), parallel,
                                  hashlib.sha256())
                if done is not None:
                    return done
                parallel = None  # a task failed: the serial scan raises the error a serial scan raises
            else:
                return _scan_lists(paths, files, normalizers, _identity, None, format, None, parallel)
        # (a link or special file: the serial walk raises its error)
    paths, files = _walk_lists(root)  # already in component order: no Entry objects, no second sort
    return _scan_lists(paths, files, normalizers, _identity, None, format, None, parallel)


def _plan(root: str, min_files: int, min_dirs: int) -> tuple[list[str], list[str], list[tuple[str, str, bool]],
                                                             int] | None:
    """Walk ``root`` (as :func:`walk`, depth first in component order) until ``min_files`` files are
    found while ``min_dirs`` directories are still unlisted, or to the end.

    Returns ``(paths, files, rest, files per listed directory)``: the files found, and the entries
    not walked yet in order (digest path, location, is a directory), empty when the walk ended;
    ``None`` on a link or special file (the serial walk raises its error, in order).
    """
    paths: list[str] = []
    files: list[str] = []
    add_path, add_file = paths.append, files.append
    with os.scandir(root) as it:
        found = sorted(it, key=_by_name)
    stack: list[tuple[list[os.DirEntry[str]], str]] = [(found, "")]
    at = [0]  # next entry of each level
    unlisted = _count_dirs(found)
    listed = 1
    while stack:
        level, rel = stack[-1]
        i = at[-1]
        for item in itertools.islice(level, i, None):
            i += 1
            if item.is_file(follow_symlinks=False):
                add_path(f"{rel}{item.name}")
                add_file(item.path)
            elif item.is_dir(follow_symlinks=False):
                unlisted -= 1
                name = item.name
                if name in CACHE_DIRS:
                    continue
                if len(paths) >= min_files and unlisted + 1 >= min_dirs:
                    at[-1] = i - 1
                    rest = _rest(stack, at)
                    return None if rest is None else (paths, files, rest, max(1, len(paths) // listed))
                with os.scandir(item.path) as it:
                    sub = sorted(it, key=_by_name)
                unlisted += _count_dirs(sub)
                listed += 1
                at[-1] = i
                stack.append((sub, f"{rel}{name}/"))
                at.append(0)
                break
            else:
                return None
        else:
            stack.pop()
            at.pop()
    return paths, files, [], 0


def _count_dirs(found: Sequence[os.DirEntry[str]]) -> int:
    return sum(1 for item in found if item.is_dir(follow_symlinks=False))


def _rest(stack: Sequence[tuple[list[os.DirEntry[str]], str]], at: Sequence[int]) -> list[tuple[str, str, bool]] | None:
    """The entries of a paused walk not walked yet, in order (deepest level first); ``None`` on a link
    or special file."""
    rest = []
    for (level, rel), i in zip(reversed(stack), reversed(at), strict=True):
        for item in level[i:]:
            if item.is_file(follow_symlinks=False):
                rest.append((f"{rel}{item.name}", item.path, False))
            elif item.is_dir(follow_symlinks=False):
                if item.name not in CACHE_DIRS:
                    rest.append((f"{rel}{item.name}", item.path, True))
            else:
                return None
    return rest


def _tasks(known: int, rest: Sequence[tuple[str, str, bool]], per_dir: int) -> list[_Task]:
    """Tasks for a paused walk: the ``known`` files in shares, then runs of the entries ``rest``,
    each about :data:`PARALLEL_TASKS` th of the estimated files (a directory counted as ``per_dir``)."""
    weight = known + sum(per_dir if is_dir else 1 for _rel, _location, is_dir in rest)
    step = max(PARALLEL_TASK_MIN, -(-weight // PARALLEL_TASKS))
    tasks: list[_Task] = [(lo, min(lo + step, known), []) for lo in range(0, known, step)]
    run: list[tuple[str, str, bool]] = []
    size = 0
    for unit in rest:
        run.append(unit)
        size += per_dir if unit[2] else 1
        if size >= step:
            tasks.append((known, known, run))
            run, size = [], 0
    if run:
        tasks.append((known, known, run))
    return tasks


def build_manifest(pack_dir: Path) -> dict[str, str]:
    """Manifest of ``pack_dir``: every file but ``manifest.sha256`` → sha256 hex, keys sorted."""
    return manifest_of(scan(walk(pack_dir, skip=[MANIFEST_NAME]), tree_path=lambda _path: None))


