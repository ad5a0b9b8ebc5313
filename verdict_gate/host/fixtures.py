"""Fixture digest of a run (docs/design.md §4): the pack's ``fixtures/`` and the repository's fixtures.

An edge: it walks the candidate's work tree. The hashing itself is :mod:`verdict_gate.core.digest`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Protocol

from verdict_gate.core.catalog import Catalog
from verdict_gate.core.digest import FORMAT, TREE_V1, Entry, Scan
from verdict_gate.core.globs import match_any
from verdict_gate.core.ledger import Ledger
from verdict_gate.core.records import FixtureRecord
from verdict_gate.core.verdict import Freeze
from verdict_gate.host.hashing import Parallel, changed_since, scan, walk


class Pack(Protocol):
    """What of a verified pack (:class:`verdict_gate.pack.Pack`) the fixture digest reads: its directory, its
    control files and the pack's share of the digest from its manifest. A structural type, so ``host/``, which
    the pack's loader uses, never imports ``pack/`` (docs/design.md §10)."""

    @property
    def dir(self) -> Path: ...

    @property
    def catalog(self) -> Catalog: ...

    @property
    def ledger(self) -> Ledger: ...

    @property
    def fixtures(self) -> Scan | None: ...


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


def not_checked_out(catalog: Catalog) -> tuple[str, ...]:
    """Directories of a tree to gate that are left out of its checkout: the catalog's ``pack_root``.

    The properties and their fixtures come from the pack, never from the tree, so the tree's copy of
    the oracle is only something candidate code could read to learn the properties it is judged by,
    and files to write (2,000 property files cost a second on a slow disk). It is kept when a
    repository fixture root or a ``python_path`` entry lies in it (or the pack root is the tree's root).
    """
    root = catalog.pack_root.strip("/")
    if root in ("", "."):
        return ()

    def inside(path: str) -> bool:
        return path == root or path.startswith(root + "/")

    fixture_roots = [r.strip("/") for r in glob_roots(catalog.paths.fixtures)]
    if any(r in ("", ".") or inside(r) or root.startswith(r + "/") for r in fixture_roots):
        return ()  # repository fixtures in (or around) the pack root
    if any(inside(p.strip("/")) for p in catalog.python_path):
        return ()
    return (root,)


def repo_fixture_entries(tree: Path, catalog: Catalog) -> list[Entry]:
    """The tree's files matching the catalog's fixture globs, as digest entries ``repo/<path>``."""
    globs = catalog.paths.fixtures
    whole = whole_roots(globs)
    entries: list[Entry] = []
    seen: set[str] = set()
    roots = glob_roots(globs)
    nested = any(r != o and (not o or r.startswith(o + "/")) for r in roots for o in roots)
    for root in roots:
        base = tree / root if root else tree
        if not base.exists():
            continue
        everything = root in whole
        if everything and root and not nested:  # no other root to overlap: no path to check twice
            entries += walk(base, prefix=f"repo/{root}")
            continue
        for entry in walk(base, prefix=root):
            rel = entry.path
            # `.git` in a worktree is a file naming the repository and the worktree: not a fixture.
            if rel == ".git" or rel.startswith(".git/") or rel in seen:
                continue
            if not everything and not match_any(rel, globs):
                continue
            seen.add(rel)
            entries.append(Entry(f"repo/{rel}", entry.file))
    return entries


def whole_roots(globs: Sequence[str]) -> set[str]:
    """The roots of the globs ``ROOT/**`` (no pattern in ROOT): every file under them is a fixture, with
    no pattern to match per file (100,000 of them)."""
    return {g.strip("/")[:-3] for g in globs
            if g.strip("/").endswith("/**") and not any(c in g.strip("/")[:-3] for c in "*?[")}


def is_fixture(path: str, globs: Sequence[str], whole: Collection[str] | None = None) -> bool:
    """Whether the repository path matches one of the catalog's fixture ``globs`` (``whole``: their
    :func:`whole_roots`, when the caller asks for many paths)."""
    roots = whole_roots(globs) if whole is None else whole
    return any(path.startswith(root + "/") for root in roots) or match_any(path, globs)


# The fixtures as one tree was digested: the scan (its per-file hashes and stamps, for the post-run
# check) and its ``fixture.digest`` record.
Digested = tuple[Scan, FixtureRecord]


def pack_fixture_entries(oracle_pack: Pack) -> list[Entry]:
    """The pack's ``fixtures/`` as digest entries ``pack/<path>``."""
    return list(walk(oracle_pack.dir / "fixtures", prefix="pack"))


def fixture_digest(oracle_pack: Pack, tree: Path, revision: str, *, fresh: bool = False,
                   format: str = FORMAT, parallel: Parallel | None = None,
                   git_blobs: bool = False) -> Digested:
    """``format`` (default ``tree-v2``) over the pack's ``fixtures/`` (paths ``pack/…``) then the
    tree's repository fixtures (paths ``repo/…``), and its ``fixture.digest`` record.

    Every ``pack/`` path sorts before every ``repo/`` path, so the digest continues from the
    hasher state the pack's manifest check left (one read of each pack file). ``fresh`` (or
    another format than that check's) re-reads the pack fixtures instead.

    The returned scan's ``files`` and ``stamps`` cover exactly the fixture files (``pack/…``
    and ``repo/…``), for :func:`fixtures_changed` after the run. ``parallel``: for the repository
    fixtures, as for :func:`verdict_gate.host.hashing.scan` (e.g. :func:`verdict_gate.host.forks.fork_map`);
    ``git_blobs``: the scan's ``blobs`` hold each repository fixture's git blob id (``repo/…``).
    """
    catalog = oracle_pack.catalog
    repo_entries = repo_fixture_entries(tree, catalog)
    if fresh or oracle_pack.fixtures is None or oracle_pack.fixtures.format != format:
        pack_scan = scan(pack_fixture_entries(oracle_pack), catalog.normalizers, format=format)
        pack_files, pack_stamps = pack_scan.files, pack_scan.stamps
    else:
        pack_scan = oracle_pack.fixtures
        # The manifest check's scan covers the whole pack: keep its fixtures, under their digest paths.
        pack_files = {"pack/" + k[len("fixtures/"):]: v for k, v in pack_scan.files.items()
                      if k.startswith("fixtures/")}
        pack_stamps = {"pack/" + k[len("fixtures/"):]: v for k, v in pack_scan.stamps.items()
                       if k.startswith("fixtures/")}
    result = scan(repo_entries, catalog.normalizers, state=pack_scan.state, format=format, parallel=parallel,
                  git_blobs=git_blobs)
    result = dataclasses.replace(result, files={**pack_files, **result.files}, stamps={**pack_stamps, **result.stamps})
    record = FixtureRecord(format=format, digest=result.digest, revision=revision,
                           repo_roots=tuple(catalog.paths.fixtures), files=pack_scan.tree_files + result.tree_files,
                           bytes=pack_scan.tree_bytes + result.tree_bytes,
                           normalizers=tuple(dict(vars(n)) for n in catalog.normalizers))
    return result, record


def legacy_digest(oracle_pack: Pack, tree: Path, revision: str, before: Scan, failed: Collection[str],
                  changed: Collection[str] | None = None) -> str | None:
    """The ``tree-v1`` digest of the fixtures ``before`` digested in ``tree-v2``, when a freeze of a
    ``failed`` property may have been recorded under ``tree-v1`` (its ``fixture_digest`` is not
    the run's); else ``None`` and nothing is read again (docs/design.md §4, "Formats"). Also
    ``None`` when the fixtures changed since ``before`` (a tree-v1 freeze then does not match):
    ``changed``, the post-run check's answer when the caller has it, else checked here."""
    if all(f.fixture_digest == before.digest or f.fixture_format == FORMAT
           for pid in failed for f in oracle_pack.ledger.for_id(pid)):
        return None  # no freeze of a failed property may hold a tree-v1 digest of other fixtures
    if changed if changed is not None else fixtures_changed(oracle_pack, tree, before):
        return None
    return fixture_digest(oracle_pack, tree, revision, fresh=True, format=TREE_V1)[0].digest


def fixtures_changed(oracle_pack: Pack, tree: Path, before: Scan) -> list[str]:
    """Fixture paths (``pack/…``, ``repo/…``) added, removed or changed since ``before`` (a scan
    from :func:`fixture_digest`): the post-run check, by stamps, reading only files whose
    stamp moved (:func:`verdict_gate.host.hashing.changed_since`)."""
    return changed_since(before, pack_fixture_entries(oracle_pack) + repo_fixture_entries(tree, oracle_pack.catalog))


def current_ledger(ledger: Ledger, record: FixtureRecord | None) -> tuple[Ledger, int]:
    """``ledger`` with each freeze recorded under this run's ``tree-v1`` digest (``record``'s
    ``compat``) carrying the run's ``tree-v2`` digest instead, and how many were translated (none without
    a record).

    Sound because both formats are functions of the same bytes: a freeze whose ``tree-v1``
    digest equals the run's saw the same fixtures, so its ``tree-v2`` digest is the run's too
    (and the base replay's, exactly when the base has the same fixtures).
    """
    legacy = record.compat.get(TREE_V1) if record is not None else None
    if record is None or not legacy or legacy == record.digest:
        return ledger, 0
    def recorded_in_v1(f: Freeze) -> bool:
        return f.fixture_digest == legacy and f.fixture_format is None

    freezes = tuple(dataclasses.replace(f, fixture_digest=record.digest) if recorded_in_v1(f) else f
                    for f in ledger.freezes)
    moved = sum(recorded_in_v1(f) for f in ledger.freezes)
    return dataclasses.replace(ledger, freezes=freezes), moved
