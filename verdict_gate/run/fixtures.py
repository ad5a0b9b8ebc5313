"""Fixture digest of a run (docs/design.md §4): the pack's ``fixtures/`` and the repository's fixtures.

An edge: it walks the candidate's work tree. The hashing itself is :mod:`verdict_gate.core.digest`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verdict_gate.core.catalog import Catalog
from verdict_gate.core.digest import FORMAT, Entry, Scan, scan, walk
from verdict_gate.core.globs import match_any
from verdict_gate.pack import Pack


def glob_roots(globs: Sequence[str]) -> list[str]:
    """The literal leading directories of each glob, so only those subtrees are walked."""
    roots = []
    for glob in globs:
        lead = []
        for seg in glob.split("/")[:-1]:
            if any(c in seg for c in "*?["):
                break
            lead.append(seg)
        roots.append("/".join(lead))
    return sorted(set(roots))


def repo_fixture_entries(tree: Path, catalog: Catalog) -> list[Entry]:
    """The tree's files matching the catalog's fixture globs, as digest entries ``repo/<path>``."""
    entries = []
    seen: set[str] = set()
    for root in glob_roots(catalog.paths.fixtures):
        base = tree / root if root else tree
        if not base.exists():
            continue
        for entry in walk(base, prefix=root):
            rel = entry.path
            # `.git` in a worktree is a file naming the repository and the worktree: not a fixture.
            if rel == ".git" or rel.startswith(".git/") or rel in seen or not match_any(rel, catalog.paths.fixtures):
                continue
            seen.add(rel)
            entries.append(Entry(f"repo/{rel}", entry.file))
    return entries


def fixture_digest(p: Pack, tree: Path, revision: str, *, fresh: bool = False) -> tuple[Scan, dict[str, Any]]:
    """``tree-v1`` over the pack's ``fixtures/`` (paths ``pack/…``) then the tree's repository
    fixtures (paths ``repo/…``), and its ``fixture.digest`` record.

    Every ``pack/`` path sorts before every ``repo/`` path, so the digest continues from the
    hasher state the pack's manifest check left (one read of each pack file). ``fresh``
    re-reads the pack fixtures instead (to detect a property that changed them).
    """
    catalog = p.catalog
    repo_entries = repo_fixture_entries(tree, catalog)
    if fresh or p.fixtures is None:
        pack_scan = scan(walk(p.dir / "fixtures", prefix="pack"), catalog.normalizers)
    else:
        pack_scan = p.fixtures
    result = scan(repo_entries, catalog.normalizers, state=pack_scan.state)
    record = {
        "version": 1,
        "format": FORMAT,
        "digest": result.digest,
        "revision": revision,
        "roots": {"pack": "fixtures/ of the oracle pack", "repo": list(catalog.paths.fixtures)},
        "files": pack_scan.tree_files + result.tree_files,
        "bytes": pack_scan.tree_bytes + result.tree_bytes,
        "normalizers": [vars(n) for n in catalog.normalizers],
    }
    return result, record
