"""One run of properties on one tree: fixture digest, the runner, the typed records (docs/design.md §8).

Shared by the candidate run (:mod:`verdict_gate.run.pipeline`) and the base replay
(:mod:`verdict_gate.run.replay`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verdict_gate.core.catalog import Property
from verdict_gate.core.digest import Scan
from verdict_gate.core.records import RunRecord, run_record
from verdict_gate.pack import Pack
from verdict_gate.run import results as stream
from verdict_gate.run import runner
from verdict_gate.run.fixtures import fixture_digest, glob_roots

Progress = Callable[[str], None]


def workspace(p: Pack, tree: Path, scratch: Path) -> runner.Workspace:
    catalog = p.catalog
    py_path = tuple((tree / entry).resolve() for entry in catalog.python_path)
    watch = [p.dir / "fixtures"] + [tree / r for r in glob_roots(catalog.paths.fixtures) if r]
    return runner.Workspace(
        pack_dir=p.dir, tree_dir=tree, python_path=py_path,
        roots=((p.dir, catalog.pack_root), (tree, "")), watch=tuple(watch), scratch=scratch,
        run_as=runner.sandbox_user(),
    )


@dataclass
class Execution:
    """One run of properties on one tree: the :class:`RunRecord` by id, the ``fixture.digest``
    record, the number of tests pytest ran, and notices for the user."""

    records: dict[str, RunRecord]
    digest: dict[str, Any]
    items: int
    notices: list[str]


def execute(props: Sequence[Property], p: Pack, tree: Path, revision: str, base_revision: str,
            scratch: Path, progress: Progress,
            digest: tuple[Scan, dict[str, Any]] | None = None) -> Execution:
    """Fixture digest (unless the caller already has it as ``digest``), then run ``props`` on ``tree``.

    After the run the fixtures are read again: a change means some property mutated them.
    """
    notices = [f"python_path entry {entry!r} is not a directory of {revision[:12]}: check the catalog's python_path"
               for entry in p.catalog.python_path if not (tree / entry).is_dir()]
    result, record = digest or fixture_digest(p, tree, revision)
    ws = workspace(p, tree, scratch)
    before = result.digest
    raw = runner.run_properties(props, ws, progress) if props else {}
    after, _ = fixture_digest(p, tree, revision, fresh=True)
    by_id = {prop.id: prop for prop in props}
    uncollected = sorted(pid for pid, r in raw.items() if r.get("event") == stream.UNCOLLECTED)
    raw = {pid: r for pid, r in raw.items() if r.get("event") != stream.UNCOLLECTED}
    # The fixtures changed but no single property was caught doing it: fail closed.
    blame_all = after.digest != before and not any(r.get("fixture_mutated") for r in raw.values())
    tmp_paths = [str(tree), str(p.dir), str(scratch), os.path.realpath(tree), os.path.realpath(p.dir)]
    records = {
        pid: run_record(r, by_id[pid], before, base_revision, tmp_paths,
                        fixture_mutated=True if blame_all and not by_id[pid].mutates_fixture else None)
        for pid, r in raw.items()
    }
    items = sum(int(r.get("items") or 0) for r in raw.values())
    notices += [f"{pid}: pytest collected no test for {by_id[pid].selector!r} in the pack: check the catalog's "
                "oracle and node" for pid in uncollected]
    return Execution(records, record, items, notices)
