"""Fixture digest ``tree-v1`` and the pack manifest (DESIGN.md §4).

The hashing (:func:`tree_v1`) is pure over an iterable of ``(path, chunks)``; the walker
(:func:`walk`) and :func:`scan` are the thin file-system edge. Each file is read once, in
chunks, and that one read feeds both the tree digest and its own manifest sha256, so a
tree of any size is hashed without holding more than one chunk in memory.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gate.errors import GateError
from gate.globs import match

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


def _sort_key(path: str) -> tuple[str, ...]:
    return tuple(path.split("/"))


def walk(root: Path, prefix: str = "", skip: Sequence[str] = ()) -> Iterator[Entry]:
    """Yield every regular file under ``root`` in ``tree-v1`` order (by path components).

    Args:
        root: directory to walk; a missing root yields nothing.
        prefix: prepended (with ``/``) to each relative path, to merge several roots.
        skip: relative paths (top level of ``root``) to leave out, e.g. ``manifest.sha256``.
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


def tree_v1(items: Iterable[tuple[str, Iterable[bytes]]]) -> str:
    """Pure ``tree-v1`` digest: for each ``(path, chunks)`` feed path bytes, NUL, contents, NUL.

    The caller supplies items already ordered by path components.
    """
    h = hashlib.sha256()
    for path, chunks in items:
        h.update(os.fsencode(path))
        h.update(b"\0")
        for chunk in chunks:
            h.update(chunk)
        h.update(b"\0")
    return h.hexdigest()


def scan(entries: Iterable[Entry], normalizers: Sequence[Normalizer] = ()) -> Scan:
    """Hash ``entries`` (sorted here by path components) in one read per file.

    Returns a :class:`Scan` with the tree digest over normalised contents and the raw
    sha256 of each file. Raises ``GateError`` when a file vanishes or cannot be read.
    """
    ordered = sorted(entries, key=lambda e: _sort_key(e.path))
    files: dict[str, str] = {}
    total = 0

    def chunks(entry: Entry) -> Iterator[bytes]:
        nonlocal total
        raw = hashlib.sha256()
        rules = [n for n in normalizers if match(entry.path, n.glob)]
        try:
            with open(entry.file, "rb") as fh:
                if rules:  # a normaliser needs the whole file; only matched files pay that
                    data = fh.read()
                    raw.update(data)
                    total += len(data)
                    for rule in rules:
                        data = re.sub(rule.pattern.encode(), rule.replacement.encode(), data)
                    yield data
                else:
                    while block := fh.read(CHUNK):
                        raw.update(block)
                        total += len(block)
                        yield block
        except OSError as exc:
            raise GateError("fixture file", str(entry.file), f"cannot be read ({exc.strerror})",
                            "make the file readable and keep the tree still during the run") from None
        files[entry.path] = raw.hexdigest()

    digest = tree_v1((e.path, chunks(e)) for e in ordered)
    return Scan(digest=digest, files=files, total_bytes=total)


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
    files = scan(walk(pack_dir, skip=[MANIFEST_NAME])).files
    return dict(sorted(files.items()))


def compare_manifest(expected: Mapping[str, str], actual: Mapping[str, str]) -> ManifestDiff:
    """Pure comparison of two manifests: every missing, extra and changed path."""
    return ManifestDiff(
        missing=tuple(sorted(set(expected) - set(actual))),
        extra=tuple(sorted(set(actual) - set(expected))),
        changed=tuple(sorted(p for p in set(expected) & set(actual) if expected[p] != actual[p])),
    )
