"""Base replay (docs/design.md §2 step 4): the ledger's properties on a detached worktree of the base."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

from verdict_gate.core.errors import GateError
from verdict_gate.core.progress import Progress
from verdict_gate.core.records import BaseSigRecord, ReplayRecord
from verdict_gate.host import checkout, git
from verdict_gate.host.fixtures import Digested
from verdict_gate.pack import Pack, PackOptions, load
from verdict_gate.run import runner
from verdict_gate.run.collected import check_collected
from verdict_gate.run.execute import Slot, execute

T = TypeVar("T")


def replay(repo: Path, rev: str, oracle_pack: Pack, only: Sequence[str] | None, scratch: Path,
           progress: Progress, notices: list[str] | None = None, *,
           passes: Mapping[str, Mapping[str, Any]] | None = None, name: str = "replay", jobs: int | None = None,
           slot: Slot | None = None, cancel: threading.Event | None = None,
           tree: Path | None = None, fixtures: Digested | None = None, tries: int = 1,
           first_try: int = 1, until: Callable[[list[ReplayRecord]], bool] | None = None,
           seconds: dict[str, float] | None = None) -> BaseSigRecord:
    """Run the ledger's properties (or ``only``) on a detached worktree of ``rev`` (``tree``: one the caller
    made, :func:`verdict_gate.host.checkout.trees`, and removes), ``tries`` times.

    Every replayed property keeps its example log (docs/design.md §8.3) unless ``passes`` (per id: the
    runner's extra passes) says otherwise; ``name`` is the scratch subdirectory of this replay.
    ``jobs``, ``slot``, ``cancel``, ``fixtures``: as for :func:`verdict_gate.run.execute.execute` (a replay
    beside the candidate run shares its budget of processes; ``fixtures`` only with ``tree``).
    Each try is a fresh set of oracle processes (a flake decided once per process shows or not per try);
    the records are numbered ``first_try``, ``first_try + 1``, … and kept in property order, then try order.
    ``until``: called with the records so far after each try; ``True`` ends the tries there (``freeze`` stops as
    soon as its answer is known). ``seconds``: filled with each property's own run time (``duration_s``), summed
    over the tries.

    Returns the ``base.sig.json`` record; notices about the run are appended to ``notices``.
    A worktree it made is removed on every path.

    Raises:
        GateError: an id in ``only`` is not in the pack's catalog.
        runner.Cancelled: ``cancel`` was set.
    """
    ids = list(only) if only else oracle_pack.ledger.prop_ids()
    known = oracle_pack.catalog.by_id()
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise GateError("property id", ", ".join(unknown), "is not in the pack's catalog",
                        f"use one of: {', '.join(known)}")
    props = [known[i] for i in ids]
    made = (_unswept(checkout.trees(repo, [rev], scratch, oracle_pack.catalog)) if tree is None
            else nullcontext(checkout.Trees((tree,))))
    if passes is None:
        passes = {prop.id: {"example_log": True} for prop in props}
    replays: list[ReplayRecord] = []
    fixture_digest = ""
    with made as trees:
        tree = trees.paths[0]
        for n in range(tries):
            if tries > 1:
                progress(f"replay try {n + 1} of {tries} on {rev[:12]}")
            sub = scratch / (name if n == 0 else f"{name}-{n + 1}")
            sub.mkdir()
            done = execute(props, oracle_pack, tree, rev, rev, sub, progress, fixtures, repo=repo, passes=passes,
                           jobs=jobs, slot=slot, cancel=cancel)
            fixtures = fixtures if fixtures is not None else done.digested  # the tree does not change between tries
            check_collected(oracle_pack, done)  # a node: that does not exist is the catalog's error
            if notices is not None:
                notices += [f"base replay: {line}" for line in done.notices if f"base replay: {line}" not in notices]
            fixture_digest = fixture_digest or done.fixture.digest
            if seconds is not None:
                for pid, r in done.records.items():
                    seconds[pid] = seconds.get(pid, 0.0) + float(r.duration_s or 0.0)
            replays += [_record(prop.id, done.records.get(prop.id), fixture_digest, rev, first_try + n)
                        for prop in props]
            if until is not None and until(replays):
                break
    order = {prop.id: i for i, prop in enumerate(props)}
    replays.sort(key=lambda r: (order[r.prop_id], r.try_no))
    return BaseSigRecord(base_revision=rev, fixture_digest=fixture_digest, replays=tuple(replays))


def _record(prop_id: str, r: Any, fixture_digest: str, rev: str, try_no: int) -> ReplayRecord:
    """One try of one property as a ``base.sig.json`` entry (``r``: its run record, ``None``: no result)."""
    return ReplayRecord(
        prop_id=prop_id, status=r.status if r else "missing", signature=r.signature if r else None,
        signature_parts=r.signature_parts if r else None, fixture_digest=fixture_digest, base_revision=rev,
        failures=r.failures if r else (), hits=r.hits if r else None,
        example_log=r.example_log if r else None, fresh_seed=r.fresh_seed if r else None,
        fresh_log=r.fresh_log if r else None, try_no=try_no,
    )


@contextmanager
def _unswept(worktree: AbstractContextManager[T]) -> Iterator[T]:
    """``worktree`` entered and left (``git worktree add``, ``git worktree prune``) with no sweep running:
    a replay beside the candidate run must not lose its git process to the candidate's sweep."""
    stack = ExitStack()
    with runner.no_sweep():
        tree = stack.enter_context(worktree)
    try:
        yield tree
    finally:
        with runner.no_sweep():
            stack.close()


def replay_to_file(repo: Path, rev: str, pack_source: str, out: Path | None, *, only: Sequence[str] | None,
                   options: PackOptions | None, progress: Progress,
                   notice: Callable[[str], None], tries: int = 1,
                   until: Callable[[list[ReplayRecord]], bool] | None = None) -> BaseSigRecord:
    """Load the pack, replay on ``rev`` ``tries`` times (fewer when ``until``, as for :func:`replay`, says so) and
    write ``base.sig.json`` to ``out`` (the library form of ``verdict-gate replay``; the demo, ``freeze --rev``
    and ``ledger prune --rev`` use it too; ``out`` ``None``: nothing is written).

    Raises:
        GateError: a bad repository, revision, pack or output path (checked before the work).
        VoidError: the pack cannot be trusted.
    """
    from verdict_gate.host.workdir import scratch_dir
    from verdict_gate.report.writer import check_out_file, write_file

    repo = git.toplevel(repo)
    commit = git.resolve(repo, rev, "--rev")
    if out is not None:
        check_out_file(out, "base.sig.json")
        out.parent.mkdir(parents=True, exist_ok=True)  # before the work: a bad path fails now, not after
    with scratch_dir() as scratch:
        oracle_pack = load(pack_source, repo, scratch, options=options, progress=progress)
        notices: list[str] = []
        doc = replay(repo, commit, oracle_pack, only, scratch, progress, notices, tries=tries, until=until)
        for line in notices:
            notice(line)
    if out is not None:
        write_file(out, "base_sig", doc.to_json())
    return doc
