"""Fixture digest ``tree-v1`` and the pack manifest (docs/design.md §4).

:func:`walk` lists regular files in ``tree-v1`` order (refusing links and special files);
:func:`scan` hashes them. Each file is read once, in chunks, and that one read feeds both
the tree digest and its own manifest sha256, so a tree of any size is hashed without
holding more than one chunk in memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verdict_gate.core.errors import GateError
from verdict_gate.core.globs import match

FORMAT = "tree-v1"
MANIFEST_NAME = "manifest.sha256"
CHUNK = 1 << 20  # bytes per read


@dataclass(frozen=True)
class Normalizer:
    """Rewrite ``pattern`` → ``replacement`` in files matching ``glob`` before hashing."""

    glob: str
    pattern: str
    replacement: str


@dataclass(frozen=True)
class Entry:
    """One regular file: ``path`` is the digest path (POSIX, relative), ``file`` its location."""

    path: str
    file: Path


@dataclass(frozen=True)
class Scan:
    """Result of one pass over files.

    Attributes:
        digest: ``tree-v1`` lowercase hex over every entry (normalised contents).
        files: digest path → sha256 hex of the raw contents (the manifest view).
        total_bytes: raw bytes read.
    """

    digest: str
    files: dict[str, str] = field(default_factory=dict)
    total_bytes: int = 0
    state: Any = None
    tree_files: int = 0
    tree_bytes: int = 0


def _sort_key(path: str) -> tuple[str, ...]:
    return tuple(path.split("/"))


# Caches that running Python, pytest or Hypothesis leave in a source tree. They are never part
# of a pack or a fixture tree: a pack directory must not go void because someone ran pytest
# in it, and bytecode is never copied (Python could import a .pyc instead of the reviewed source).
CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache"})


def walk(root: Path, prefix: str = "", skip: Sequence[str] = ()) -> Iterator[Entry]:
    """Yield every regular file under ``root`` in ``tree-v1`` order (by path components).

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
    here = root / rel if rel else root
    with os.scandir(here) as it:
        names = sorted(e.name for e in it)
    for name in names:
        relpath = f"{rel}/{name}" if rel else name
        if relpath in skip:
            continue
        full = root / relpath
        if name in CACHE_DIRS and full.is_dir() and not full.is_symlink():
            continue
        mode = os.lstat(full).st_mode
        if stat.S_ISLNK(mode):
            raise GateError("fixture tree", str(full), "is a symbolic link; links are never followed",
                            f"replace {relpath!r} with a regular file or remove it")
        if stat.S_ISDIR(mode):
            yield from _walk(root, prefix, relpath, skip)
        elif stat.S_ISREG(mode):
            yield Entry(f"{prefix}/{relpath}" if prefix else relpath, full)
        else:
            raise GateError("fixture tree", str(full), "is not a regular file (device, FIFO or socket)",
                            f"remove {relpath!r}; only regular files and directories are hashed")


def scan(
    entries: Iterable[Entry],
    normalizers: Sequence[Normalizer] = (),
    *,
    tree_path: Callable[[str], str | None] = lambda path: path,
    state: Any = None,
) -> Scan:
    """Hash ``entries`` (sorted here by path components) in one read per file.

    Each file is read once, in chunks; that read feeds both its raw sha256 (the manifest
    view, for every entry) and the ``tree-v1`` hasher (for entries whose ``tree_path`` is
    not ``None``, under that path). So the pack's manifest and its share of the fixture
    digest come from one pass.

    Args:
        entries: files to read.
        normalizers: applied (by ``tree_path`` glob) to the tree digest's view only.
        tree_path: entry path → digest path, or ``None`` to leave the entry out of the tree
            digest. It must keep component order among the entries it keeps.
        state: a ``hashlib.sha256`` object to continue (see :attr:`Scan.state`); digest
            paths fed after it must sort after every path already in it.
    Returns:
        a :class:`Scan`: ``digest`` over the kept entries, ``files`` raw sha256 of every
        entry, ``total_bytes`` read, ``state`` a copy of the tree hasher to continue.
    Raises:
        GateError: when a file vanishes or cannot be read.
    """
    ordered = sorted(entries, key=lambda e: _sort_key(e.path))
    files: dict[str, str] = {}
    total = 0
    tree = state.copy() if state is not None else hashlib.sha256()
    tree_files = tree_bytes = 0
    for entry in ordered:
        name = tree_path(entry.path)
        raw = hashlib.sha256()
        before = total
        rules = [n for n in normalizers if name is not None and match(name, n.glob)]
        if name is not None:
            tree.update(os.fsencode(name) + b"\0")
        try:
            with open(entry.file, "rb") as fh:
                if rules:  # a normaliser needs the whole file; only matched files pay that
                    data = fh.read()
                    raw.update(data)
                    total += len(data)
                    for rule in rules:
                        data = re.sub(rule.pattern.encode(), rule.replacement.encode(), data)
                    tree.update(data)
                else:
                    while block := fh.read(CHUNK):
                        raw.update(block)
                        total += len(block)
                        if name is not None:
                            tree.update(block)
        except OSError as exc:
            raise GateError("fixture file", str(entry.file), f"cannot be read ({exc.strerror})",
                            "make the file readable and keep the tree still during the run") from None
        if name is not None:
            tree.update(b"\0")
            tree_files += 1
            tree_bytes += total - before
        files[entry.path] = raw.hexdigest()
    return Scan(digest=tree.hexdigest(), files=files, total_bytes=total, state=tree.copy(),
                tree_files=tree_files, tree_bytes=tree_bytes)


def sha256_file(path: Path) -> str:
    """sha256 hex of one file's bytes, read in chunks of :data:`CHUNK` bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK):
            h.update(block)
    return h.hexdigest()


def digest_dir(root: Path, normalizers: Sequence[Normalizer] = ()) -> Scan:
    """``tree-v1`` scan of one directory (the ``verdict-gate digest DIR`` command)."""
    if not root.is_dir():
        raise GateError("directory", str(root), "does not exist or is not a directory",
                        "pass an existing directory")
    return scan(walk(root), normalizers)


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
