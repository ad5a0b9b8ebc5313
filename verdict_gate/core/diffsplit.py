"""Split the candidate diff into buckets (docs/design.md §6). Pure: bytes of git output in, buckets out.

Input is ``git diff -z --name-status BASE...HEAD``: NUL-separated ``STATUS, PATH`` records,
``STATUS, OLD, NEW`` for renames (``R``) and copies (``C``). Both sides of a rename or copy
count, so moving a property file away is an edit of it. Paths are decoded with the
file-system encoding and ``surrogateescape``, so any byte in a name survives.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from verdict_gate.core.catalog import Catalog
from verdict_gate.core.globs import match_any
from verdict_gate.core.workflows import Running, is_workflow

BUCKETS = ("oracle", "control", "fixtures", "src", "generated", "other")


@dataclass(frozen=True)
class Change:
    """One diff record: git status letter(s) and the path(s) it names (old, new for R/C)."""

    status: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class Split:
    """The diff sorted into buckets.

    Attributes:
        changes: every parsed record, in git's order.
        buckets: bucket name → sorted unique paths (each path in exactly one bucket).
        oracle_edited: property ids whose oracle file is edited (verdicts V4/V5).
        control_edits: paths whose edit voids the run (control bucket, plus oracle-bucket
            paths that belong to no property: an unattributable oracle edit).
        workflow_edits: edited workflow files that do not define this run (:mod:`verdict_gate.core.workflows`):
            bucket ``other``, listed for reviewers.
    """

    changes: tuple[Change, ...]
    buckets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    oracle_edited: tuple[str, ...] = ()
    control_edits: tuple[str, ...] = ()
    workflow_edits: tuple[str, ...] = ()  # edits under .github/workflows/ that do not define this run (bucket other)

    @property
    def void(self) -> bool:
        return bool(self.control_edits)


class DiffParseError(ValueError):
    """The bytes are not ``git diff -z --name-status`` output."""


def parse_name_status(raw: bytes) -> tuple[Change, ...]:
    """Parse ``git diff -z --name-status`` output.

    Raises:
        DiffParseError: on a truncated record or an unknown status letter.
    """
    tokens = raw.split(b"\0")
    if tokens and tokens[-1] == b"":
        tokens.pop()
    changes: list[Change] = []
    i = 0
    while i < len(tokens):
        status = tokens[i].decode("ascii", "replace")
        letter = status[:1]
        if letter not in "ACDMRTUXB" or not letter:
            raise DiffParseError(f"unknown status {status!r} at record {len(changes)}")
        count = 2 if letter in "RC" else 1
        paths = tuple(os.fsdecode(t) for t in tokens[i + 1:i + 1 + count])
        if len(paths) != count or not all(paths):
            raise DiffParseError(f"record {len(changes)} ({status}) is truncated")
        changes.append(Change(status, paths))
        i += 1 + count
    return tuple(changes)


def bucket_of(path: str, catalog: Catalog, running: Running | None = None) -> str:
    """The first bucket whose globs match ``path``, in :data:`BUCKETS` order.

    Anything under ``pack_root`` that is not an oracle file is control, whatever the
    catalog's globs say. So is what defines this run (``running``: the workflow file being run, the
    local workflows and actions it uses, the files its steps run or read by path; every file when the gate
    cannot tell, :mod:`verdict_gate.core.workflows`); another workflow file is ``other``. With ``running``
    unknown (``None``) every file under ``.github/workflows/`` is control.
    """
    p = catalog.paths
    if match_any(path, p.oracle):
        return "oracle"
    # Whatever the globs say, the rest of the oracle tree (catalog, ledger, manifest,
    # fixtures of the pack) is control: the candidate must not touch it.
    if path.startswith(catalog.pack_root + "/") or match_any(path, p.control):
        return "control"
    if running is not None and running.defines(path):
        return "control"
    if is_workflow(path):
        return "control" if running is None else "other"
    for name, globs in (("fixtures", p.fixtures), ("src", p.src), ("generated", p.generated)):
        if match_any(path, globs):
            return name
    return "other"


def split(changes: tuple[Change, ...], catalog: Catalog, running: Running | None = None) -> Split:
    """Bucket every path of ``changes`` by the catalog's globs and what defines the run (``running``,
    :func:`bucket_of`), and find the ids whose oracle is edited."""
    buckets: dict[str, set[str]] = {b: set() for b in BUCKETS}
    for change in changes:
        for path in change.paths:
            buckets[bucket_of(path, catalog, running)].add(path)
    owner = {catalog.repo_path(p): p.id for p in catalog.properties}
    edited = sorted({owner[path] for path in buckets["oracle"] if path in owner})
    orphans = {path for path in buckets["oracle"] if path not in owner}
    control = sorted(buckets["control"] | orphans)
    return Split(
        changes=changes,
        buckets={b: tuple(sorted(v)) for b, v in buckets.items()},
        oracle_edited=tuple(edited),
        control_edits=tuple(control),
        workflow_edits=tuple(sorted(path for path in buckets["other"] if is_workflow(path))),
    )

