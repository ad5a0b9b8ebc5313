"""Fixture digests ``tree-v2`` (the default) and ``tree-v1``, and the pack manifest: their formats,
records and comparisons (docs/design.md §4). Pure: walking and hashing files is
:mod:`verdict_gate.host.hashing`'s.

``tree-v2``: sha256 over, per kept file in component order, ``path`` NUL ``sha256(normalised
contents)`` (64 lowercase hex digits) NUL. ``tree-v1`` (still computed, for freezes recorded under
it): one sha256 over ``path`` NUL contents NUL per file. The manifest is a JSON map of pack-relative
path → sha256 of the raw contents.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TREE_V1 = "tree-v1"
TREE_V2 = "tree-v2"
FORMAT = TREE_V2  # what new runs write
FORMATS = (TREE_V2, TREE_V1)  # what the gate reads and computes
MANIFEST_NAME = "manifest.sha256"

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
        blobs: entry path → the git blob id of the raw contents read (``sha1("blob SIZE\0" + bytes)``),
            when :func:`scan` was asked for them (``git_blobs``); else empty.
    """

    digest: str
    files: dict[str, str] = field(default_factory=dict)
    total_bytes: int = 0
    state: Any = None
    tree_files: int = 0
    tree_bytes: int = 0
    format: str = FORMAT
    stamps: dict[str, Stamp] = field(default_factory=dict)
    blobs: dict[str, str] = field(default_factory=dict)


def sort_key(path: str) -> tuple[str, ...]:
    """A digest path's order: by its components, like comparing ``pathlib`` parts (docs/design.md §4)."""
    return tuple(path.split("/"))


# Caches that running Python, pytest or Hypothesis leave in a source tree. They are never part
# of a pack or a fixture tree: a pack directory must not go void because someone ran pytest
# in it, and bytecode is never copied (Python could import a .pyc instead of the reviewed source).
CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache"})


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
        """One line per path; a name with a control character is shown quoted and escaped (``'a\\nb'``),
        so a newline in a file name never starts a line naming a file that does not exist."""
        lines = [f"  missing: {_shown(p)}" for p in self.missing]
        lines += [f"  extra:   {_shown(p)}" for p in self.extra]
        lines += [f"  changed: {_shown(p)}" for p in self.changed]
        return "\n".join(lines)


def _shown(path: str) -> str:
    return path if path.isprintable() else repr(path)


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
