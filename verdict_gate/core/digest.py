"""Fixture digests ``tree-v2`` (the default) and ``tree-v1``, and the pack manifest (docs/design.md §4).

:func:`walk` lists regular files in component order (refusing links and special files);
:func:`scan` hashes them. Each file is read once, in chunks, and that one read feeds its
manifest sha256 and the tree digest, so a tree of any size is hashed without holding more
than one chunk per worker in memory. ``tree-v2`` hashes each file once (its manifest sha256
is its tree hash unless a normaliser rewrites it) and hashes files on a thread pool;
``tree-v1`` stays computable, for freezes recorded under it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verdict_gate.core.errors import GateError
from verdict_gate.core.globs import match

TREE_V1 = "tree-v1"
TREE_V2 = "tree-v2"
FORMAT = TREE_V2  # what new runs write
FORMATS = (TREE_V2, TREE_V1)  # what the gate reads and computes
MANIFEST_NAME = "manifest.sha256"
CHUNK = 1 << 20  # bytes per read
# A normaliser's regular expression needs a whole file in memory: files it matches are capped,
# so memory stays flat in fixture size (docs/design.md §4).
NORMALIZE_MAX = 32 << 20
BATCH_FILES = 256  # at most this many files per thread-pool task (small files are batched)
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

# What a file looked like when it was read: (size, mtime_ns, ctime_ns, inode, device).
Stamp = tuple[int, int, int, int, int]


@dataclass(frozen=True)
class Normalizer:
    """Rewrite ``pattern`` → ``replacement`` in files matching ``glob`` before hashing."""

    glob: str
    pattern: str
    replacement: str


@dataclass(frozen=True, slots=True)  # slots: a 100,000-file tree holds 100,000 of these
class Entry:
    """One regular file: ``path`` is the digest path (POSIX, relative), ``file`` its location."""

    path: str
    file: str | os.PathLike[str]


@dataclass(frozen=True)
class Scan:
    """Result of one pass over files.

    Attributes:
        digest: ``format`` lowercase hex over every kept entry (normalised contents).
        files: digest path → sha256 hex of the raw contents (the manifest view).
        total_bytes: raw bytes read.
        state: a copy of the outer tree hasher, to continue the digest with later paths.
        tree_files, tree_bytes: entries (and their raw bytes) in the tree digest.
        format: ``tree-v2`` or ``tree-v1``.
        stamps: entry path → :data:`Stamp` taken from the descriptor that was read, for the
            cheap post-run proof that nothing changed (:func:`changed_since`).
    """

    digest: str
    files: dict[str, str] = field(default_factory=dict)
    total_bytes: int = 0
    state: Any = None
    tree_files: int = 0
    tree_bytes: int = 0
    format: str = FORMAT
    stamps: dict[str, Stamp] = field(default_factory=dict)


def _sort_key(path: str) -> tuple[str, ...]:
    return tuple(path.split("/"))


# Caches that running Python, pytest or Hypothesis leave in a source tree. They are never part
# of a pack or a fixture tree: a pack directory must not go void because someone ran pytest
# in it, and bytecode is never copied (Python could import a .pyc instead of the reviewed source).
CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache"})


def walk(root: Path, prefix: str = "", skip: Sequence[str] = ()) -> Iterator[Entry]:
    """Yield every regular file under ``root`` in component order (``tree-v1`` and ``tree-v2``).

    Args:
        root: directory to walk; a missing root yields nothing.
        prefix: prepended (with ``/``) to each relative path, to merge several roots.
        skip: relative paths (top level of ``root``) to leave out, e.g. ``manifest.sha256``.
            Directories named in :data:`CACHE_DIRS` are always left out.
    Raises:
        GateError: on a symlink, device, FIFO or socket (never followed), or when
            ``root`` itself is a symlink or not a directory.
    """
    if root.is_symlink():
        raise GateError("fixture tree", str(root), "is a symbolic link; links are never followed",
                        "replace the link with the real directory")
    if not root.exists():
        return
    if not root.is_dir():
        raise GateError("fixture tree", str(root), "is not a directory", "point at a directory")
    yield from _walk(root, prefix, "", set(skip))


def _walk(root: Path, prefix: str, rel: str, skip: set[str]) -> Iterator[Entry]:
    here = os.path.join(root, rel) if rel else os.fspath(root)
    with os.scandir(here) as it:
        found = sorted(((e.name, e) for e in it), key=lambda pair: pair[0])
    for name, item in found:
        relpath = f"{rel}/{name}" if rel else name
        if relpath in skip:
            continue
        full = item.path
        # d_type from the directory read: no extra system call per file (lstat only when unknown).
        if item.is_symlink():
            raise GateError("fixture tree", full, "is a symbolic link; links are never followed",
                            f"replace {relpath!r} with a regular file or remove it")
        if item.is_dir(follow_symlinks=False):
            if name in CACHE_DIRS:
                continue
            yield from _walk(root, prefix, relpath, skip)
        elif item.is_file(follow_symlinks=False):
            yield Entry(f"{prefix}/{relpath}" if prefix else relpath, full)
        else:
            raise GateError("fixture tree", full, "is not a regular file (device, FIFO or socket)",
                            f"remove {relpath!r}; only regular files and directories are hashed")


def _rules(name: str | None, normalizers: Sequence[Normalizer]) -> list[Normalizer]:
    return [n for n in normalizers if name is not None and match(name, n.glob)]


def _unreadable(entry: Entry, why: str) -> GateError:
    return GateError("fixture file", os.fspath(entry.file), f"cannot be read ({why})",
                     "make the file readable and keep the tree still during the run")


def _normalise(entry: Entry, data: bytes, rules: Sequence[Normalizer]) -> bytes:
    for rule in rules:
        data = re.sub(rule.pattern.encode(), rule.replacement.encode(), data)
    return data


def _read_whole(fd: int, entry: Entry, size: int) -> bytes:
    """All of a file a normaliser matches, refusing one above :data:`NORMALIZE_MAX` bytes."""
    if size > NORMALIZE_MAX:
        raise GateError("normalizer", os.fspath(entry.file),
                        f"matches a file of {size} bytes; a normaliser reads its whole file, and files above "
                        f"{NORMALIZE_MAX >> 20} MiB are refused so that memory stays flat",
                        "narrow the normaliser's glob to the small text fixtures that embed timestamps or paths")
    parts = []
    got = 0
    while block := os.read(fd, CHUNK):
        got += len(block)
        if got > NORMALIZE_MAX:
            raise GateError("normalizer", os.fspath(entry.file), "grew while it was read",
                            "keep the tree still during the run")
        parts.append(block)
    return b"".join(parts)


# One hashed file: (raw sha256 hex, tree-v2 file hash hex or None, raw bytes read, stamp).
_Hashed = tuple[str, str | None, int, Stamp]


def _open(entry: Entry) -> tuple[int, os.stat_result, Stamp]:
    """``entry`` opened for reading (never through a link), its ``fstat`` and its stamp.

    Raises:
        GateError: it cannot be opened, or it is no longer a regular file (a FIFO would block the read).
    """
    try:
        fd = os.open(entry.file, _OPEN_FLAGS)
    except OSError as exc:
        raise _unreadable(entry, exc.strerror or str(exc)) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise GateError("fixture tree", os.fspath(entry.file), "is not a regular file (device, FIFO or socket)",
                        "only regular files and directories are hashed")
    return fd, st, (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _hash_file(entry: Entry, keep: bool, rules: Sequence[Normalizer]) -> _Hashed:
    """Read ``entry`` once: its raw sha256, its ``tree-v2`` file hash (normalised view) and its stamp."""
    fd, st, stamp = _open(entry)
    try:
        if rules and keep:
            data = _read_whole(fd, entry, st.st_size)
            raw_hex = hashlib.sha256(data).hexdigest()
            return raw_hex, hashlib.sha256(_normalise(entry, data, rules)).hexdigest(), len(data), stamp
        if st.st_size < CHUNK:  # most fixtures: one read of the size fstat gave, plus one byte to see the end
            want = st.st_size + 1
            data = os.read(fd, want)
            h = hashlib.sha256(data)
            got = len(data)
            if got == want:  # it grew since fstat: read the rest
                while block := os.read(fd, CHUNK):
                    h.update(block)
                    got += len(block)
        else:
            h = hashlib.sha256()
            got = 0
            buf = bytearray(CHUNK)
            view = memoryview(buf)
            with open(fd, "rb", buffering=0, closefd=False) as fh:
                while n := fh.readinto(buf):
                    h.update(view[:n])  # hashlib releases the GIL on large updates
                    got += n
        raw_hex = h.hexdigest()
        return raw_hex, raw_hex if keep else None, got, stamp
    except OSError as exc:
        raise _unreadable(entry, exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def scan(
    entries: Iterable[Entry],
    normalizers: Sequence[Normalizer] = (),
    *,
    tree_path: Callable[[str], str | None] = lambda path: path,
    state: Any = None,
    format: str = FORMAT,
    workers: int | None = None,
) -> Scan:
    """Hash ``entries`` (sorted here by path components) in one read per file.

    Each file is read once, in chunks; that read feeds both its raw sha256 (the manifest
    view, for every entry) and the tree digest (for entries whose ``tree_path`` is not
    ``None``, under that path). So the pack's manifest and its share of the fixture digest
    come from one pass.

    ``tree-v2`` (docs/design.md §4): the tree digest is sha256 over, per kept file in component
    order, ``path`` (UTF-8 / file-system bytes) NUL ``sha256(normalised contents)`` as 64
    lowercase hex digits NUL. Files hash on a pool of ``workers`` threads (default: the core
    count), small files batched; the result does not depend on the pool.
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
    Returns:
        a :class:`Scan`: ``digest`` over the kept entries, ``files`` raw sha256 of every
        entry, ``total_bytes`` read, ``state`` a copy of the tree hasher to continue.
    Raises:
        GateError: when a file vanishes or cannot be read, or a normaliser matches a file above
            :data:`NORMALIZE_MAX` bytes.
    """
    if format not in FORMATS:
        raise GateError("digest format", repr(format), "is not known", f"use one of {', '.join(FORMATS)}")
    ordered = sorted(entries, key=lambda e: _sort_key(e.path))
    if format == TREE_V1:
        return _scan_v1(ordered, normalizers, tree_path, state)
    names = [tree_path(e.path) for e in ordered]
    jobs = [(e, name is not None, _rules(name, normalizers)) for e, name in zip(ordered, names, strict=True)]

    def run(batch: Sequence[tuple[Entry, bool, list[Normalizer]]]) -> list[_Hashed]:
        return [_hash_file(*job) for job in batch]

    tree = state.copy() if state is not None else hashlib.sha256()
    files: dict[str, str] = {}
    stamps: dict[str, Stamp] = {}
    total = tree_files = tree_bytes = 0
    pool_size = workers if workers is not None else (os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=max(1, pool_size), thread_name_prefix="digest") as pool:
        if pool_size <= 1 or len(jobs) < 2:
            parts: Iterable[list[_Hashed]] = [run(jobs)]
        else:
            # Small files are batched (at most BATCH_FILES a task), but never fewer than four tasks a
            # thread, so that a few big files still spread over the pool. Results come back in order.
            step = max(1, min(BATCH_FILES, len(jobs) // (pool_size * 4)))
            parts = pool.map(run, [jobs[i:i + step] for i in range(0, len(jobs), step)])
        i = 0
        for part in parts:
            for raw_hex, tree_hex, size, stamp in part:
                entry, name = ordered[i], names[i]
                i += 1
                files[entry.path] = raw_hex
                stamps[entry.path] = stamp
                total += size
                if name is not None and tree_hex is not None:
                    tree.update(b"%s\0%s\0" % (os.fsencode(name), tree_hex.encode()))
                    tree_files += 1
                    tree_bytes += size
    return Scan(digest=tree.hexdigest(), files=files, total_bytes=total, state=tree.copy(),
                tree_files=tree_files, tree_bytes=tree_bytes, format=TREE_V2, stamps=stamps)


def _scan_v1(ordered: Sequence[Entry], normalizers: Sequence[Normalizer],
             tree_path: Callable[[str], str | None], state: Any) -> Scan:
    """``tree-v1``: contents fed into one sha256 in order (one thread; kept for older freezes)."""
    files: dict[str, str] = {}
    stamps: dict[str, Stamp] = {}
    total = 0
    tree = state.copy() if state is not None else hashlib.sha256()
    tree_files = tree_bytes = 0
    for entry in ordered:
        name = tree_path(entry.path)
        raw = hashlib.sha256()
        rules = _rules(name, normalizers)
        if name is not None:
            tree.update(os.fsencode(name) + b"\0")
        fd, st, stamps[entry.path] = _open(entry)
        try:
            got = 0
            if rules:  # a normaliser needs the whole file; only matched files pay that
                data = _read_whole(fd, entry, st.st_size)
                raw.update(data)
                got = len(data)
                tree.update(_normalise(entry, data, rules))
            else:
                while block := os.read(fd, CHUNK):
                    raw.update(block)
                    got += len(block)
                    if name is not None:
                        tree.update(block)
        except OSError as exc:
            raise _unreadable(entry, exc.strerror or str(exc)) from None
        finally:
            os.close(fd)
        total += got
        if name is not None:
            tree.update(b"\0")
            tree_files += 1
            tree_bytes += got
        files[entry.path] = raw.hexdigest()
    return Scan(digest=tree.hexdigest(), files=files, total_bytes=total, state=tree.copy(),
                tree_files=tree_files, tree_bytes=tree_bytes, format=TREE_V1, stamps=stamps)


def changed_since(before: Scan, entries: Iterable[Entry], *, workers: int | None = None) -> list[str]:
    """Digest paths whose files differ from ``before`` (the scan that digested them): added, removed,
    or changed contents (docs/design.md §4, "The post-run check").

    The proof is cheap: a file whose stamp (size, mtime, ctime, inode, device, from ``lstat``) is
    the one taken from the descriptor that was read is unchanged, without reading it; only files
    whose stamp moved are read again and compared by their raw sha256 (so a ``chmod`` or a
    ``touch`` is not a change, an edit is). ``before.stamps`` and ``before.files`` are keyed by
    the entries' paths.
    """
    now = {e.path: e for e in entries}
    changed = set(before.stamps) ^ set(now)
    suspects = []
    for path in now.keys() & before.stamps.keys():
        try:
            st = os.lstat(now[path].file)
        except OSError:
            changed.add(path)
            continue
        if (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev) != before.stamps[path]:
            suspects.append(now[path])
    if suspects:
        again = scan(suspects, tree_path=lambda _path: None, workers=workers)
        changed.update(path for path, sha in again.files.items() if sha != before.files.get(path))
    return sorted(changed, key=_sort_key)


def sha256_file(path: Path) -> str:
    """sha256 hex of one file's bytes, read in chunks of :data:`CHUNK` bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK):
            h.update(block)
    return h.hexdigest()


def digest_dir(root: Path, normalizers: Sequence[Normalizer] = (), format: str = FORMAT) -> Scan:
    """``format`` scan of one directory (the ``verdict-gate digest DIR`` command)."""
    if not root.is_dir():
        raise GateError("directory", str(root), "does not exist or is not a directory",
                        "pass an existing directory")
    return scan(walk(root), normalizers, format=format)


# --- manifest -------------------------------------------------------------------------


@dataclass(frozen=True)
class ManifestDiff:
    """Paths that differ between a manifest and the files on disk (each sorted)."""

    missing: tuple[str, ...]
    extra: tuple[str, ...]
    changed: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.changed)

    def describe(self) -> str:
        lines = [f"  missing: {p}" for p in self.missing]
        lines += [f"  extra:   {p}" for p in self.extra]
        lines += [f"  changed: {p}" for p in self.changed]
        return "\n".join(lines)


def build_manifest(pack_dir: Path) -> dict[str, str]:
    """Manifest of ``pack_dir``: every file but ``manifest.sha256`` → sha256 hex, keys sorted."""
    return manifest_of(scan(walk(pack_dir, skip=[MANIFEST_NAME]), tree_path=lambda _path: None))


def manifest_text(manifest: Mapping[str, str]) -> str:
    """The ``manifest.sha256`` file text: JSON, keys sorted, two-space indent, final newline."""
    return json.dumps(dict(manifest), indent=2, sort_keys=True) + "\n"


def manifest_of(result: Scan) -> dict[str, str]:
    """The manifest view of a scan: path → raw sha256, keys sorted."""
    return dict(sorted(result.files.items()))


def pack_fixture_path(path: str) -> str | None:
    """Digest path of a pack file: ``fixtures/x`` → ``pack/x``; other pack files are not fixtures."""
    return "pack/" + path[len("fixtures/"):] if path.startswith("fixtures/") else None


def compare_manifest(expected: Mapping[str, str], actual: Mapping[str, str]) -> ManifestDiff:
    """Pure comparison of two manifests: every missing, extra and changed path."""
    return ManifestDiff(
        missing=tuple(sorted(set(expected) - set(actual))),
        extra=tuple(sorted(set(actual) - set(expected))),
        changed=tuple(sorted(p for p in set(expected) & set(actual) if expected[p] != actual[p])),
    )
