"""One run of properties on one tree: fixture digest, the runner, the typed records (docs/design.md §8).

Shared by the candidate run (:mod:`verdict_gate.run.pipeline`) and the base replay
(:mod:`verdict_gate.run.replay`).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verdict_gate.boundary import results as stream
from verdict_gate.core import classes
from verdict_gate.core.catalog import Property
from verdict_gate.core.progress import Progress
from verdict_gate.core.records import FixtureRecord, RunRecord, run_record
from verdict_gate.host import git, workdir
from verdict_gate.host.checkout import written_through
from verdict_gate.host.fixtures import Digested, fixture_digest, fixtures_changed, glob_roots
from verdict_gate.host.git import git_config
from verdict_gate.host.modules import mentions
from verdict_gate.pack import Pack
from verdict_gate.run import runner

Slot = Callable[[], AbstractContextManager[int | None]]  # see Slots and runner.run_properties


@functools.lru_cache(maxsize=8)
def base_modules(repo: Path, rev: str, python_path: tuple[str, ...]) -> frozenset[str]:
    """The top-level modules the sources of ``rev`` (the base revision, which the pack was reviewed against)
    provide under ``python_path``: the candidate's modules the pack may be served even where the judge has a
    module of that name too (docs/design.md §8.1; a module a patch adds that shadows one installed beside the
    gate, the pack's own ``yaml`` say, is not served to the pack). Read once per run."""
    found: set[str] = set()
    for path in git.python_sources(repo, rev, python_path):
        module = classes.module_name(path)
        if module is not None:
            found.add(module.partition(".")[0])
    return frozenset(found)


def workspace(oracle_pack: Pack, tree: Path, scratch: Path, secrets: Sequence[Path] = (),
              passes: Mapping[str, Mapping[str, Any]] | None = None,
              reviewed: frozenset[str] | None = None) -> runner.Workspace:
    """The runner's workspace; ``secrets``: files the candidate worker must not read, which its fence
    probe tries to (the repository's ``.git/config``, a canary in ``$HOME``); ``reviewed``: the base revision's
    top-level modules (:func:`base_modules`; ``None``: every module the tree provides)."""
    catalog = oracle_pack.catalog
    root = tree.resolve()
    # A python_path entry that is (or goes through) a symbolic link out of the tree would put a host
    # directory on the worker's path and in its mounts: such an entry is left out (its imports fail).
    py_path = tuple(path for path in ((tree / entry).resolve() for entry in catalog.python_path)
                    if path == root or root in path.parents)
    watch = [oracle_pack.dir / "fixtures"] + [tree / r for r in glob_roots(catalog.paths.fixtures) if r]
    return runner.Workspace(
        pack_dir=oracle_pack.dir, tree_dir=tree, python_path=py_path,
        roots=((oracle_pack.dir, catalog.pack_root), (tree, "")), watch=tuple(watch), scratch=scratch,
        secrets=tuple(secrets), passes=dict(passes or {}), modules=tuple(catalog.modules),
        limits=dict(catalog.limits), reviewed=reviewed,
        # Imported up front, before any test module and any candidate name, only where something may use it:
        # plain pytest imports it only then too (63 ms of each oracle process's start, cachetools' suite).
        hypothesis=any(prop.kind == "property" for prop in catalog.properties)
        or mentions(oracle_pack.dir, b"hypothesis"),
    )


@dataclass
class Execution:
    """One run of properties on one tree: the :class:`RunRecord` by id, the ``fixture.digest``
    record, the number of tests pytest ran, and notices for the user."""

    records: dict[str, RunRecord]
    fixture: FixtureRecord
    items: int
    notices: list[str]
    phase_failures: list[str] = field(default_factory=list)
    uncollected: list[str] = field(default_factory=list)  # ids whose selector matched no test
    mutated: list[str] = field(default_factory=list)  # fixture paths the post-run check found changed
    digested: Digested | None = None  # the fixture digest the run was checked against (for another run of the tree)


def execute(props: Sequence[Property], oracle_pack: Pack, tree: Path, revision: str, base_revision: str,
            scratch: Path, progress: Progress,
            fixtures: Digested | None = None, *, repo: Path | None = None,
            passes: Mapping[str, Mapping[str, Any]] | None = None, jobs: int | None = None,
            slot: Slot | None = None, cancel: threading.Event | None = None) -> Execution:
    """Fixture digest (unless the caller already has it as ``fixtures``), then run ``props`` on ``tree``
    in up to ``jobs`` oracle processes at once (``None``: :func:`runner.default_jobs`).

    ``scratch`` is a directory inside the run's temp dir: that whole temp dir (the pack, the other
    tree, every results stream), ``repo`` and ``$HOME`` are out of the candidate worker's reach; its fence
    probe tries to read ``repo``'s ``.git/config`` and a canary in ``$HOME``.

    After the run the fixtures are checked again (by stamps, reading only files whose stamp moved,
    docs/design.md §4): a change means some property mutated them.
    ``passes``: per property id, the extra passes to run (``example_log``, ``fresh_seed``).
    ``slot`` and ``cancel``: for a run beside another one (:class:`Slots`, :func:`runner.run_properties`).

    Raises:
        runner.Cancelled: ``cancel`` was set.
    """
    notices = [f"python_path entry {entry!r} is not a directory of {revision[:12]}: check the catalog's python_path"
               for entry in oracle_pack.catalog.python_path if not (tree / entry).is_dir()]
    notices += [f"python_path entry {entry!r} of {revision[:12]} is a symbolic link out of the tree: left out"
                for entry in oracle_pack.catalog.python_path
                if (tree / entry).exists() and tree.resolve() not in [(tree / entry).resolve(),
                                                                      *(tree / entry).resolve().parents]]
    result, record = fixtures or fixture_digest(oracle_pack, tree, revision)
    before = result.digest
    with workdir.home_canary() as canary:
        secrets = [canary, *([git_config(repo)] if repo is not None else [])]
        # The modules the pack may be served over the judge's own are those of the base revision.
        reviewed = base_modules(repo, base_revision, tuple(oracle_pack.catalog.python_path)) \
            if repo is not None and base_revision else None
        ws = workspace(oracle_pack, tree, scratch, [s for s in secrets if s is not None], passes, reviewed)
        ran = (runner.run_properties(props, ws, progress, jobs, slot=slot, cancel=cancel) if props
               else runner.RawResults({}, []))
    raw = ran.results
    mutated = fixtures_changed(oracle_pack, tree, result)  # by stamps: docs/design.md §4, "The post-run check"
    notices += written_through(tree, repo, mutated)
    by_id = {prop.id: prop for prop in props}
    uncollected = sorted(pid for pid, r in raw.items() if r.get("event") == stream.UNCOLLECTED)
    raw = {pid: {**r, "isolation": stream.isolation(r.get("isolation"), by_id[pid].isolation)}
           for pid, r in raw.items() if r.get("event") != stream.UNCOLLECTED}
    # The fixtures changed but no single property was caught doing it: fail closed.
    blame_all = bool(mutated) and not any(r.get("fixture_mutated") for r in raw.values())
    tmp_paths = [str(tree), str(oracle_pack.dir), str(scratch), os.path.realpath(tree),
                 os.path.realpath(oracle_pack.dir)]
    records = {
        pid: run_record(r, by_id[pid], before, base_revision, tmp_paths,
                        fixture_mutated=True if blame_all and not by_id[pid].mutates_fixture else None)
        for pid, r in raw.items()
    }
    items = sum(int(r.get("items") or 0) for r in raw.values())
    notices += [f"{pid}: pytest collected no test for {by_id[pid].selector!r} in the pack: check the catalog's "
                "oracle and node" for pid in uncollected]
    return Execution(records, record, items, notices, ran.phase_failures, uncollected, mutated, (result, record))


class Slots:
    """A budget of ``count`` oracle processes at once, shared by runs that go on side by side (the base
    replay beside the candidate run, :func:`verdict_gate.run.pipeline.base_and_candidate`).

    Each oracle process holds a slot while it runs and is pinned to that slot's CPU (slot *i*: the
    *i*-th CPU this process may use, round-robin), so processes that run at once never share a CPU
    while the budget is no larger than the CPUs. A free slot goes to a waiting process of the run
    with the lower ``priority`` first. No slot is ever idle while a process waits: a slot a run
    leaves (its last share ended early, or it ended) is the other run's at once.
    """

    def __init__(self, count: int, cpus: Sequence[int] | None = None) -> None:
        self._free = set(range(max(1, count)))
        self._cpus = list(runner._cpus() if cpus is None else cpus)
        self._waiting: dict[int, int] = {}
        self._cond = threading.Condition()

    def slot(self, priority: int, cancel: threading.Event) -> Slot:
        """The ``slot`` argument of :func:`execute` for one run: waiting ends with
        :class:`runner.Cancelled` once ``cancel`` is set."""
        return lambda: self._hold(priority, cancel)

    @contextmanager
    def _hold(self, priority: int, cancel: threading.Event) -> Iterator[int | None]:
        with self._cond:
            self._waiting[priority] = self._waiting.get(priority, 0) + 1
            try:
                while not self._free or any(n for p, n in self._waiting.items() if p < priority):
                    if cancel.is_set():
                        raise runner.Cancelled("the run was cancelled")
                    self._cond.wait(runner.POLL_S)
                index = min(self._free)
                self._free.remove(index)
            finally:
                self._waiting[priority] -= 1
                self._cond.notify_all()
        try:
            yield self._cpus[index % len(self._cpus)] if len(self._cpus) > 1 else None
        finally:
            with self._cond:
                self._free.add(index)
                self._cond.notify_all()
