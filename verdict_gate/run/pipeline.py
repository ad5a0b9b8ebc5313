"""The gate pipeline in docs/design.md §2 order. Orchestration only: each step is one function.

1. :func:`load_pack` — load and verify the oracle pack (a void pack stops the run);
2. :func:`digest_fixtures` — the fixture digest of the candidate (``fixture.digest``);
3. :func:`split_diff` — the diff ``BASE...HEAD`` into buckets (``oracle_edited.json``);
4. :func:`base_replay` — the ledger's properties on the base revision (``base.sig.json``);
5. :func:`candidate_run` — every catalog property not edited, on HEAD (``runs.json``); with a budget
   of two or more processes, steps 4 and 5 run side by side (:func:`base_and_candidate`); then
   :func:`oracle_faults` runs a property that failed before its body on the base too (the pack's fault or the
   patch's), :func:`flaky_tries` tries a property with a flaky freeze on the base again where its verdict needs
   it, and :func:`fresh_replay` replays fresh examples that failed;
6. :func:`score_run` — :func:`verdict_gate.core.score.score`: verdicts, promotion, outcome.

The edges live beside it (:mod:`~verdict_gate.host.git`, :mod:`~verdict_gate.run.runner`,
:mod:`verdict_gate.pack`); the decisions live in :mod:`verdict_gate.core`. Nothing consults a
freeze before the fixture digest exists.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
import shlex
import threading
from pathlib import Path, PurePosixPath
from typing import Any

from verdict_gate import pack
from verdict_gate.boundary.fence import host as isolation_host
from verdict_gate.boundary.fence.errors import Unavailable
from verdict_gate.core import diffsplit
from verdict_gate.core.catalog import Property
from verdict_gate.core.digest import TREE_V1
from verdict_gate.core.errors import GateError, VoidError
from verdict_gate.core.evidence import Evidence
from verdict_gate.core.progress import Progress
from verdict_gate.core.records import BaseSigRecord, DiffRecord, ReplayRecord, RunsRecord, fresh_seed
from verdict_gate.core.score import score
from verdict_gate.core.shard import ShardSpec, share
from verdict_gate.core.tries import notice, planned
from verdict_gate.core.upkeep import expiring, expiry_notice
from verdict_gate.core.verdict import needs_try, never_reached
from verdict_gate.core.workflows import is_workflow
from verdict_gate.host import checkout, forks, git, workflows
from verdict_gate.host.fixtures import Digested, current_ledger, fixture_digest, legacy_digest
from verdict_gate.host.workdir import RAM_DIR, ram_parent, scratch_dir, sweep
from verdict_gate.pack.extract import MAX_BYTES
from verdict_gate.report.text import printable
from verdict_gate.run import runner
from verdict_gate.run.collected import check_collected
from verdict_gate.run.execute import Execution, Slot, Slots, execute
from verdict_gate.run.replay import replay


def today(value: str | None = None) -> dt.date:
    """The date freezes expire against: ``value`` (``YYYY-MM-DD``), else today in UTC (the clock is read here).

    Raises:
        GateError: ``value`` is not a date.
    """
    if value is None:
        return dt.datetime.now(dt.UTC).date()
    from verdict_gate.core.ledger import parse_date

    return parse_date(value, "--today", repr(value))


def check_pack_root(source: str, repo: Path, pack_root: str, pinned: bool = False) -> None:
    """A pack read from this repository must sit at the catalog's ``pack_root``: the diff buckets
    that void a patch editing the ledger or a property are built from ``pack_root``, so a pack
    read from another directory would be unprotected.

    Raises:
        GateError: for ``git:REV:DIR`` with ``DIR`` ≠ ``pack_root``, or a directory inside the
            repository at another path.
    """
    if source.startswith("git:"):
        where = str(PurePosixPath(source[4:].partition(":")[2].strip("/") or "."))
    else:
        path = Path(source)
        if path.is_file() and not pinned:
            try:
                rel = path.resolve().relative_to(repo.resolve()).as_posix()
            except ValueError:
                return  # an archive outside the repository
            if git.git(repo, "ls-files", "-z", "--", rel, check=False).stdout:
                raise GateError("oracle pack", source, "is an archive committed in the candidate's own tree: the "
                                "patch under test could have rebuilt it", "pin it with --pack-sha256 (the sha256 "
                                "`verdict-gate pack build` printed), or read the pack from a protected revision")
            return
        if not path.is_dir():
            return  # a URL or an artifact: it comes from outside the repository
        try:
            where = path.resolve().relative_to(repo.resolve()).as_posix()
        except ValueError:
            return  # a directory outside the repository
        where = "" if where == "." else where
        tracked = git.git(repo, "ls-files", "-z", "--", where or ".", check=False).stdout
        if tracked:
            raise GateError("oracle pack", source, "is a directory of the candidate's own tree: the patch under "
                            "test could have written it", f"read it from a protected revision instead: "
                            f"--pack git:origin/main:{where or '.'} (or your base branch)")
    if where != pack_root:
        raise GateError("oracle pack", source, f"is read from {where or '.'!r}, but its catalog says "
                        f"pack_root: {pack_root!r}, so edits to {where or '.'!r} would not be caught in the diff",
                        f"set `pack_root: {where}` in the catalog, or read the pack from {pack_root!r}")


def run(repo: Path, base_ref: str, pack_source: str, *, policy: str | None, today: dt.date,
        progress: Progress, pack_options: pack.PackOptions | None = None,
        jobs: int | None = None, shard: ShardSpec | None = None) -> Evidence:
    """The whole pipeline. Returns the :class:`Evidence` (its outcome always set, except for a shard that
    was not void); writing it is the caller's.

    ``jobs``: oracle processes at once for the candidate run (``None``: the core count, or
    ``$VERDICT_GATE_JOBS``); with two or more, the base replay runs beside it within that budget
    (:func:`base_and_candidate`). ``shard``: run only that shard's share of the properties and their base
    replays (:func:`verdict_gate.core.shard.share`), and stop before scoring: ``ev.shard`` holds the
    share, and ``verdict-gate merge`` decides (:func:`merge`).

    Raises:
        GateError: usage or configuration errors (exit 2) before anything was scored.
    """
    ev = revisions(git.toplevel(repo), base_ref)
    repo = Path(ev.repo)
    if shard is not None:  # set before anything can make the run void: a void shard reports too
        ev.shard = {"index": shard.index, "count": shard.count, "properties": []}
    if RAM_DIR.is_dir():  # also when this run will not use it: an earlier, killed one may have
        sweep([RAM_DIR])
    ram = ram_parent(2 * MAX_BYTES)  # room for the largest pack's archive and its files
    with scratch_dir() as scratch, \
            (scratch_dir(ram) if ram else contextlib.nullcontext(scratch)) as pack_work:
        oracle_pack = load_pack(ev, pack_source, pack_options, policy, pack_work, progress)
        if oracle_pack is None:
            return ev
        # The base's tree is made beside the candidate's, before any digest (checkout.trees says why),
        # when the ledger has properties to replay on it.
        revs = [ev.head_revision] + ([ev.base_revision] if oracle_pack.ledger.prop_ids() else [])
        with checkout.trees(repo, revs, scratch, oracle_pack.catalog, progress) as made:
            cand, base_tree = made.paths[0], (made.paths[1] if len(made.paths) > 1 else None)
            ev.notices += made.notices
            fixtures = digest_fixtures(ev, oracle_pack, cand, progress, git_blobs=bool(made.linked))
            if fixtures is None:
                return ev
            if made.linked:
                verified = verify_links(ev, oracle_pack, repo, revs, made, fixtures, progress)
                if verified is None:
                    return ev
                made, fixtures = verified
            same_fixtures = 1 in made.twins
            parts = split_diff(ev, oracle_pack, progress)
            if parts.void:
                return ev
            ev.run_id = ev.run_id or new_run_id()
            only = None
            if shard is not None:
                mine = share([q.id for q in oracle_pack.catalog.properties if q.id not in parts.oracle_edited], shard)
                only = set(mine)
                assert ev.shard is not None
                ev.shard.update(properties=mine, pack_sha256=oracle_pack.sha256)
                progress(f"shard {shard}: {len(mine)} of the catalog's properties")
            done = base_and_candidate(ev, oracle_pack, cand, parts, fixtures, scratch, progress, jobs, only, base_tree,
                                      same_fixtures)
            oracle_faults(ev, oracle_pack, done, scratch, progress, base_tree)
            flaky_tries(ev, oracle_pack, done, scratch, progress, base_tree,
                        _as_base(fixtures, ev.base_revision) if same_fixtures else None)
            fresh_replay(ev, oracle_pack, done, scratch, progress, base_tree)
        if shard is not None:
            assert ev.shard is not None
            ev.shard.update(items=done.items, phase_failures=list(done.phase_failures),
                            unreported=[pid for pid in ev.shard["properties"] if pid not in done.records])
            return ev
        score_run(ev, oracle_pack, parts, done, today)
        return ev


def revisions(repo: Path, base_ref: str) -> Evidence:
    """A fresh :class:`Evidence` with HEAD, the base ref and the base revision (their merge base) resolved."""
    ev = Evidence(repo=str(repo), base_ref=base_ref)
    ev.head_revision = git.resolve(repo, "HEAD", "HEAD")
    ev.base_revision = git.merge_base(repo, git.resolve(repo, base_ref, "base ref"), ev.head_revision)
    dirty = git.dirty_paths(repo)
    if dirty:
        ev.notices.append(f"{len(dirty)} uncommitted change(s) are not scored: "
                          f"the gate checks out HEAD {ev.head_revision[:12]}")
    return ev


def load_pack(ev: Evidence, source: str, options: pack.PackOptions | None, policy: str | None, scratch: Path,
              progress: Progress) -> pack.Pack | None:
    """Step 1: the verified pack, or ``None`` with ``ev`` void (the pack cannot be trusted).

    ``policy`` (``--policy``) overrides the catalog's promotion policy.
    """
    repo = Path(ev.repo)
    progress(f"loading oracle pack {pack.redact(source)}")
    origin: dict[str, Any] = {}  # filled as the load learns it: kind, sha256, artifact and run ids
    try:
        oracle_pack = pack.load(source, repo, scratch, options=options, origin=origin, progress=progress)
    except VoidError as exc:
        ev.pack = {"source": pack.redact(source), **origin}
        ev.void(str(exc))
        return None
    catalog = oracle_pack.catalog
    check_pack_root(source, repo, catalog.pack_root, pinned=bool(options is not None and options.sha256))
    if source.startswith("git:"):
        rev = source[4:].partition(":")[0]
        if git.resolve(repo, rev, "pack revision") == ev.head_revision:
            ev.notices.append(f"the pack is read from {rev}, the candidate itself: that is not a protected "
                              "source (use the base branch, e.g. git:origin/main:oracle)")
    ev.pack = {**oracle_pack.origin, "files": len(oracle_pack.manifest), "pack_root": catalog.pack_root}
    ev.policy = policy or catalog.policy
    ev.freeze_base = catalog.freeze_base
    ev.claimed = catalog.claimed
    ev.properties = catalog.by_id()
    ev.oracle_files = dict(oracle_pack.texts)  # kept in the evidence: the decision is re-derived from it
    return oracle_pack


def digest_fixtures(ev: Evidence, oracle_pack: pack.Pack, cand: Path, progress: Progress,
                    git_blobs: bool = False) -> Digested | None:
    """Step 2: the candidate's fixture digest, or ``None`` with ``ev`` void (it cannot be digested);
    ``git_blobs``: with each repository fixture's git blob id (for :func:`verify_links`)."""
    progress("fixture digest")
    # Forked copies hash a big tree on every core; a fork copies only the calling thread, so only while
    # no other thread runs (docs/design.md §4).
    parallel = forks.fork_map if threading.active_count() == 1 else None
    try:
        fixtures = fixture_digest(oracle_pack, cand, ev.head_revision, parallel=parallel, git_blobs=git_blobs)
    except GateError as exc:
        # The candidate's own tree cannot be digested (a link or special file among its
        # fixtures): it cannot be scored, whatever else the patch does.
        where = printable(exc.where.replace(str(cand) + "/", "").replace(str(cand), "."))
        fix = exc.fix.replace(str(cand) + "/", "")
        ev.void(f"the candidate's fixtures cannot be digested: {where} {exc.problem}\n  fix: {printable(fix)} "
                "(commit the change; the catalog's paths.fixtures names the fixture roots)")
        return None
    ev.fixture = fixtures[1]
    return fixtures


def verify_links(ev: Evidence, oracle_pack: pack.Pack, repo: Path, revs: list[str], made: checkout.Trees,
                 fixtures: Digested, progress: Progress
                 ) -> tuple[checkout.Trees, Digested] | None:
    """Step 2b: prove that the candidate's linked fixtures are the committed blobs, as the digest read
    them (:func:`verdict_gate.host.checkout.unverified`, from the digest's own read). Files that are not
    (the work tree's file was edited in a way git's index did not show, or during the run) are checked
    out instead and the digest is taken again; if that one fails the proof too, ``ev`` is void and
    ``None`` returned.
    """
    bad = checkout.unverified(made.linked, fixtures[0].blobs)
    if not bad:
        return made, fixtures
    shown = ", ".join(printable(b) for b in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    ev.notices.append(f"{len(bad)} work-tree fixture file(s) were not their committed bytes when the digest read "
                      f"them ({shown}): checked out instead; do not edit fixtures while the gate runs")
    made = checkout.check_out_instead(repo, revs, made, bad)
    again = digest_fixtures(ev, oracle_pack, made.paths[0], progress, git_blobs=True)
    if again is None:
        return None
    still = checkout.unverified(made.linked, again[0].blobs)
    if still:
        ev.void(f"the work tree's fixture files changed while the gate read them ({printable(still[0])} and "
                f"{len(still) - 1} more): rerun without editing them, or with VERDICT_GATE_FIXTURE_LINKS=0")
        return None
    return made, again


def split_diff(ev: Evidence, oracle_pack: pack.Pack, progress: Progress) -> diffsplit.Split:
    """Step 3: the diff's buckets (``oracle_edited.json``); an edit to a control file makes ``ev`` void."""
    head = ev.head_revision
    progress(f"splitting the diff {ev.base_revision[:12]}...{head[:12]}")
    raw_diff = git.diff_name_status(Path(ev.repo), ev.base_revision, head)
    try:
        changes = diffsplit.parse_name_status(raw_diff)
    except diffsplit.DiffParseError as exc:
        raise RuntimeError(f"git diff output could not be parsed: {exc}") from None
    # What defines this run (the workflow file being run and what it uses locally) voids the run when
    # edited; another workflow file is bucket `other`. Unknown outside GitHub Actions: every one voids.
    running, unknown = workflows.running(Path(ev.repo), [head, ev.base_revision], os.environ)
    parts = diffsplit.split(changes, oracle_pack.catalog, running)
    if not changes:
        ev.notices.append(f"the diff {ev.base_revision[:12]}...{head[:12]} is empty: HEAD adds nothing to the base")
    ev.diff = DiffRecord(base_revision=ev.base_revision, head_revision=head, buckets=dict(parts.buckets),
                         oracle_edited=parts.oracle_edited, control_edits=parts.control_edits,
                         running=running.to_json() if running is not None else None,
                         workflow_edits=parts.workflow_edits)
    if parts.workflow_edits:
        shown = ", ".join(printable(w) for w in parts.workflow_edits)
        ev.notices.append(f"{len(parts.workflow_edits)} workflow file(s) edited that do not run in this run (bucket "
                          f"other; review them like any code): {shown}")
    if parts.void:
        more = len(parts.control_edits) - 10
        ev.void("the diff edits control files of the oracle: "
                + ", ".join(printable(path) for path in parts.control_edits[:10])
                + (f" and {more} more" if more > 0 else "")
                + _workflow_note(parts, running, unknown))
    return parts


PARALLEL_ENV = "VERDICT_GATE_PARALLEL_REPLAY"  # "0": the base replay first, then the candidate run


def _workflow_note(parts: diffsplit.Split, running: Any, unknown: str) -> str:
    """Why an edited workflow file voids the run: it defines this run, or which workflow runs is unknown."""
    edited = [p for p in parts.control_edits if is_workflow(p) or (running is not None and running.defines(p))]
    if not edited:
        return ""
    if running is None:
        return f" (every edit under .github/workflows/ voids the run: {printable(unknown)})"
    if running.unsure:
        more = f"; and {len(running.unsure) - 1} more" if len(running.unsure) > 1 else ""
        return (f" (every edit defines this run: the gate cannot tell which files {printable(running.workflow)} runs: "
                f"{printable(running.unsure[0])}{more}; name each file a step runs by its path)")
    return f" ({', '.join(printable(p) for p in edited[:5])}: defines this run, {printable(running.workflow)})"


def base_and_candidate(ev: Evidence, oracle_pack: pack.Pack, cand: Path, parts: diffsplit.Split,
                       fixtures: Digested, scratch: Path, progress: Progress,
                       jobs: int | None = None, only: set[str] | None = None,
                       base_tree: Path | None = None, same_fixtures: bool = False) -> Execution:
    """Steps 4 and 5: the base replay (``ev.base_sig``, on ``base_tree`` when given, else on a worktree
    of its own) and the candidate run (returned). ``same_fixtures``: ``base_tree``'s fixtures are the
    candidate's files (:attr:`verdict_gate.host.checkout.Trees.twins`), so ``fixtures`` are the base's too.

    With a budget of two or more oracle processes (``jobs``, else :func:`runner.default_jobs`) and a
    frozen property to replay, the base replay runs in a thread beside the candidate run: each on its
    own worktree, scratch directory and processes, the two sharing the budget (:class:`Slots`: never
    more than ``jobs`` processes at once, those at once on different CPUs, a slot the candidate run
    leaves going to the base replay at once). Otherwise, or with ``$VERDICT_GATE_PARALLEL_REPLAY`` set
    to ``0``, one after the other. The evidence is the same either way (apart from timings): the
    records do not depend on how processes are scheduled, and the base replay's notices come first.

    Raises:
        GateError, VoidError: from either step; the base replay's first, as when it runs first (an error of the
            candidate run stops the base replay at once).
    """
    budget = jobs if jobs is not None else runner.default_jobs()
    shared = fixtures if same_fixtures else None
    if budget < 2 or not replay_ids(oracle_pack, parts, only) or os.environ.get(PARALLEL_ENV, "").strip() == "0":
        ev.base_sig = base_replay(ev, oracle_pack, parts, scratch, progress, only, tree=base_tree, same=shared)
        return candidate_run(ev, oracle_pack, cand, parts, fixtures, scratch, progress, jobs, only)
    lock = threading.Lock()

    def lines(prefix: str) -> Progress:
        def say(message: str) -> None:
            with lock:  # whole lines, whichever thread: the runner reports from one thread per process
                progress(prefix + message)
        return say

    slots = Slots(budget)
    for level in {prop.isolation for prop in oracle_pack.catalog.properties} - {"none"}:
        # Probed once per process, here: a probe's process started beside a run could be swept as a stray.
        with contextlib.suppress(Unavailable):
            isolation_host.method(level)
    stop_base, stop_candidate = threading.Event(), threading.Event()
    base_notices: list[str] = []
    base: dict[str, Any] = {}

    def replay_base() -> None:
        try:
            base["sig"] = base_replay(ev, oracle_pack, parts, scratch, _silent, only, tree=base_tree, same=shared,
                                      notices=base_notices, jobs=budget,
                                      slot=slots.slot(1, stop_base), cancel=stop_base, lines=lines("base: "))
        except BaseException as exc:  # handed to the caller's thread below
            base["error"] = exc
            stop_candidate.set()  # the base replay's error is the run's (it would have stopped it first)

    lines("")(_replay_headline(ev, replay_ids(oracle_pack, parts, only)) + f", beside the candidate run ({budget} "
                                                                 "oracle processes at once between them)")
    mark = len(ev.notices)
    thread = threading.Thread(target=replay_base, name="verdict-gate-base-replay")
    done: Execution | None = None
    failure: BaseException | None = None
    try:
        thread.start()
        done = candidate_run(ev, oracle_pack, cand, parts, fixtures, scratch, lines(""), budget, only,
                             slot=slots.slot(0, stop_candidate), cancel=stop_candidate)
    except BaseException as exc:
        failure = exc
        stop_base.set()  # Ctrl-C, SIGTERM, or an error that ends the run (a node: typo): the base replay stops now
    _join(thread, stop_base)  # its worktree, processes and scratch are gone once it returns
    if failure is not None and not isinstance(failure, Exception):
        raise failure
    if "error" in base and not (failure is not None and isinstance(base["error"], runner.Cancelled)):
        raise base["error"]
    if failure is not None:
        raise failure
    assert done is not None
    ev.notices[mark:mark] = base_notices  # where the base replay, run first, would have put them
    ev.base_sig = base["sig"]
    return done


def _join(thread: threading.Thread, stop: threading.Event) -> None:
    """Wait for ``thread``; a Ctrl-C or SIGTERM meanwhile sets ``stop`` and is raised once it has ended."""
    interrupted = False
    while thread.is_alive():
        try:
            thread.join()
        except KeyboardInterrupt:
            stop.set()
            interrupted = True
    if interrupted:
        raise KeyboardInterrupt


def _silent(_message: str) -> None:
    pass


def _replay_headline(ev: Evidence, ids: list[str]) -> str:
    return f"base replay of {len(ids)} frozen propert{'y' if len(ids) == 1 else 'ies'} on {ev.base_revision[:12]}"


def replay_ids(oracle_pack: pack.Pack, parts: diffsplit.Split, only: set[str] | None = None) -> list[str]:
    """The ledger's properties whose oracle is not edited (and, for a shard, in ``only``): the base replay's."""
    return [i for i in oracle_pack.ledger.prop_ids() if i not in parts.oracle_edited and (only is None or i in only)]


def base_replay(ev: Evidence, oracle_pack: pack.Pack, parts: diffsplit.Split, scratch: Path,
                progress: Progress, only: set[str] | None = None, *, tree: Path | None = None,
                same: Digested | None = None, notices: list[str] | None = None,
                lines: Progress | None = None, jobs: int | None = None, slot: Slot | None = None,
                cancel: threading.Event | None = None) -> BaseSigRecord:
    """Step 4: replay the ledger's properties whose oracle is not edited (and, for a shard, in ``only``),
    on the base revision.

    ``notices`` (default ``ev.notices``) gets the replay's notices; ``lines`` (default ``progress``) its
    per-property progress; ``tree``, ``jobs``, ``slot``, ``cancel``: as for :func:`replay`. ``same``: the
    candidate's fixture digest, when ``tree``'s fixtures are the candidate's files (it is then the base's
    too, with the base's revision).
    """
    to_replay = replay_ids(oracle_pack, parts, only)
    assert ev.fixture is not None
    if not to_replay:
        return BaseSigRecord(base_revision=ev.base_revision, fixture_digest=ev.fixture.digest)
    progress(_replay_headline(ev, to_replay))
    # The frozen properties keep their example logs, and draw their fresh examples on the base right
    # away (the same fresh seeds as the candidate's): their fresh failures need no second replay.
    passes = {pid: {"example_log": True, **fresh_passes(ev, oracle_pack.catalog.by_id()[pid])} for pid in to_replay}
    return replay(Path(ev.repo), ev.base_revision, oracle_pack, to_replay, scratch, lines or progress,
                  ev.notices if notices is None else notices, passes=passes, tree=tree, jobs=jobs, slot=slot,
                  cancel=cancel, fixtures=_as_base(same, ev.base_revision) if same and tree else None)


def _as_base(fixtures: Digested, revision: str) -> Digested:
    """The candidate's fixture digest as the base tree's, whose fixtures are the same files."""
    return fixtures[0], dataclasses.replace(fixtures[1], compat={}, revision=revision)


def fresh_passes(ev: Evidence, prop: Property) -> dict[str, Any]:
    """The fresh pass of one property in this run: its fresh seed (none for an example, or with
    ``fresh_examples`` off); how many examples it draws is the plugin's :func:`fresh_split`."""
    if not prop.draws_fresh or not ev.run_id:
        return {}
    return {"fresh_seed": fresh_seed(ev.head_revision, ev.run_id, prop.id)}


def candidate_run(ev: Evidence, oracle_pack: pack.Pack, cand: Path, parts: diffsplit.Split,
                  fixtures: Digested, scratch: Path, progress: Progress,
                  jobs: int | None = None, only: set[str] | None = None, *, slot: Slot | None = None,
                  cancel: threading.Event | None = None) -> Execution:
    """Step 5: every catalog property whose oracle is not edited (and, for a shard, in ``only``), on the
    candidate (``runs.json``). ``slot``, ``cancel``: as for :func:`execute`."""
    props = [prop for prop in oracle_pack.catalog.properties
             if prop.id not in parts.oracle_edited and (only is None or prop.id in only)]
    progress(f"running {len(props)} propert{'y' if len(props) == 1 else 'ies'} on the candidate "
             f"{ev.head_revision[:12]}")
    cand_scratch = scratch / "candidate"
    cand_scratch.mkdir()
    ev.run_id = run_id = ev.run_id or new_run_id()
    frozen = set(oracle_pack.ledger.prop_ids())
    passes = {prop.id: {"example_log": prop.id in frozen, **fresh_passes(ev, prop)} for prop in props}
    done = execute(props, oracle_pack, cand, ev.head_revision, ev.base_revision, cand_scratch, progress, fixtures,
                   repo=Path(ev.repo), passes=passes, jobs=jobs, slot=slot, cancel=cancel)
    check_collected(oracle_pack, done)  # a node: that does not exist is the catalog's error, before any scoring
    ev.notices += done.notices
    ev.runs = RunsRecord(revision=ev.head_revision, base_revision=ev.base_revision,
                         fixture_digest=fixtures[0].digest, environment=runner.environment_pins(), runs=done.records,
                         run_id=run_id)
    # A freeze recorded under tree-v1 stays comparable: the fixtures are read once more, in that
    # format, only when a failed property has a freeze under another digest (docs/design.md §4).
    failed = {pid for pid, r in done.records.items() if r.failed}
    legacy = legacy_digest(oracle_pack, cand, ev.head_revision, fixtures[0], failed,
                           changed=done.mutated)
    if legacy is not None and ev.fixture is not None:
        ev.fixture = dataclasses.replace(ev.fixture, compat={TREE_V1: legacy})
    return done


def oracle_faults(ev: Evidence, oracle_pack: pack.Pack, done: Execution, scratch: Path, progress: Progress,
                  base_tree: Path | None) -> None:
    """Step 5d (docs/design.md §3, "Gate faults are not the candidate's"): a property whose run on the candidate
    failed before its body (:func:`verdict_gate.core.verdict.never_reached`: a collection or import error, a
    fixture the pack lacks) is run once on the base revision, unless the base replay ran it already: the same
    failure there makes it the oracle's fault (``oracle_error``, V18), never the patch's. The tries are kept in
    ``base.sig.json`` like the base replay's (one, no example log). A worktree of the base is made when the
    run has none (no frozen property)."""
    assert ev.base_sig is not None
    props = oracle_pack.catalog.by_id()
    on_base = {r.prop_id for r in ev.base_sig.replays if r.base_revision == ev.base_revision}
    ids = [pid for pid, r in done.records.items()
           if pid in props and pid not in on_base and never_reached(r.run_result(props[pid]))]
    if not ids:
        return
    progress(f"{len(ids)} propert{'y' if len(ids) == 1 else 'ies'} failed before the body on the candidate: "
             f"running {'it' if len(ids) == 1 else 'them'} on the base {ev.base_revision[:12]} to tell the pack's "
             f"fault from the patch's: {', '.join(ids)}")
    more = replay(Path(ev.repo), ev.base_revision, oracle_pack, ids, scratch, progress, ev.notices,
                  passes={pid: {} for pid in ids}, name="oracle-replay", tree=base_tree)
    ev.base_sig = dataclasses.replace(ev.base_sig, replays=ev.base_sig.replays + more.replays)


def flaky_tries(ev: Evidence, oracle_pack: pack.Pack, done: Execution, scratch: Path, progress: Progress,
                base_tree: Path | None, fixtures: Digested | None = None) -> None:
    """Step 5c (docs/design.md §3, "Flaky freezes"): a property with a flaky freeze whose verdict needs a
    base replay try in the candidate's own state (:func:`verdict_gate.core.verdict.needs_try`) is tried on
    the base again, one try at a time, until it has one, or it has had its planned tries
    (:func:`verdict_gate.core.tries.planned`: from the freezes' recorded rates, a flake at its rate missed at
    most once in 10,000 gates, or the catalog's ``replay_tries``), or its tries' own run time would pass its
    timeout. Every try is kept in ``base.sig.json``, in try order; a notice per property with a flaky freeze says
    what was planned, what was tried and, when a bound bit, the odds it left.

    Only after the candidate run, so a candidate that passed (or failed outside the freeze) costs no extra
    try. ``fixtures``: the base tree's digest when it is the candidate's (see :func:`base_replay`).
    """
    assert ev.base_sig is not None
    if base_tree is None:
        return
    props = oracle_pack.catalog.by_id()
    tries: dict[str, list[ReplayRecord]] = {}
    for rec in ev.base_sig.replays:
        tries.setdefault(rec.prop_id, []).append(rec)
    flaky = {pid: [fr for fr in oracle_pack.ledger.for_id(pid) if fr.flaky] for pid in tries if pid in props}
    plan = {pid: planned([fr.rate for fr in frs], props[pid].replay_tries) for pid, frs in flaky.items() if frs}
    spent: dict[str, float] = {}  # the property's own run time in its extra tries (its timeout bounds them)
    last: dict[str, float] = {}

    def wanted(pid: str) -> bool:
        prop, run = props[pid], done.records.get(pid)
        if pid not in plan or len(tries[pid]) >= plan[pid] or spent.get(pid, 0.0) + last.get(pid, 0.0) > prop.timeout:
            return False
        on_base = [t.base_sig() for t in tries[pid] if t.base_revision == ev.base_revision]
        return needs_try(run.run_result(prop) if run else None, oracle_pack.ledger.for_id(pid), on_base)

    while need := [pid for pid in plan if wanted(pid)]:
        n = 1 + max(len(tries[pid]) for pid in need)
        progress(f"base replay: trying {len(need)} propert{'y' if len(need) == 1 else 'ies'} with a flaky freeze "
                 f"again on {ev.base_revision[:12]} (try {n}): {', '.join(need)}")
        passes = {pid: {"example_log": True, **fresh_passes(ev, props[pid])} for pid in need}
        seconds: dict[str, float] = {}
        more = replay(Path(ev.repo), ev.base_revision, oracle_pack, need, scratch, progress, ev.notices,
                      passes=passes, name=f"replay-try-{n}", tree=base_tree, fixtures=fixtures, seconds=seconds)
        for rec in more.replays:
            tries[rec.prop_id].append(dataclasses.replace(rec, try_no=len(tries[rec.prop_id]) + 1))
            spent[rec.prop_id] = spent.get(rec.prop_id, 0.0) + seconds.get(rec.prop_id, 0.0)
            last[rec.prop_id] = seconds.get(rec.prop_id, 0.0)
    for pid in plan:
        ev.notices.append(_tries_notice(ev, props[pid], flaky[pid], plan[pid], tries[pid], done, oracle_pack,
                                        spent.get(pid, 0.0)))
    ev.base_sig = dataclasses.replace(ev.base_sig, replays=tuple(r for recs in tries.values() for r in recs))


def _tries_notice(ev: Evidence, prop: Property, flaky: list[Any], plan: int, recs: list[ReplayRecord],
                  done: Execution, oracle_pack: pack.Pack, spent: float) -> str:
    """One property's flaky tries in words (:func:`verdict_gate.core.tries.notice`), from what the run showed."""
    rates = [fr.rate for fr in flaky if fr.rate]
    rate = min(rates, key=lambda r: r[0] / r[1]) if rates else None
    run = done.records.get(prop.id)
    on_base = [t.base_sig() for t in recs if t.base_revision == ev.base_revision]
    if run is None or not run.failed:
        state = "passed"
    elif not needs_try(run.run_result(prop), oracle_pack.ledger.for_id(prop.id), on_base):
        frozen = {sig for fr in flaky for sig in fr.names()}
        state = "outside" if {f.signature for f in run.run_result(prop).failure_set()} - frozen else "showed"
    else:
        state = "missed"
    return notice(prop.id, plan=plan, replay_tries=prop.replay_tries, rate=rate, tried=len(recs), state=state,
                  timeout=prop.timeout, spent=spent)


def new_run_id() -> str:
    """The run's id, from which (with the head revision) every fresh seed is derived: ``$VERDICT_GATE_RUN_ID``
    (to replay a run from its evidence), else GitHub's run id and attempt, else a random one."""
    import uuid

    if os.environ.get("VERDICT_GATE_RUN_ID"):
        return os.environ["VERDICT_GATE_RUN_ID"][:100]
    if os.environ.get("GITHUB_RUN_ID"):
        return f"{os.environ['GITHUB_RUN_ID']}.{os.environ.get('GITHUB_RUN_ATTEMPT', '1')}"[:100]
    return uuid.uuid4().hex


def fresh_replay(ev: Evidence, oracle_pack: pack.Pack, done: Execution, scratch: Path, progress: Progress,
                 base_tree: Path | None = None) -> None:
    """Step 5b (docs/design.md §8.3): a fresh example that failed on the candidate is replayed on the base
    revision with the same fresh seed. Held there → the scoring sees a regression (V16); failed there too →
    a ``preexisting_failure`` notice with the freeze proposal; the verdict is unchanged."""
    assert ev.base_sig is not None
    on_base = {r.prop_id for r in ev.base_sig.replays if r.fresh_log is not None}
    failing = {pid: r for pid, r in done.records.items() if r.fresh_log and any(not e.held for e in r.fresh_log)}
    replay_now = {pid: r for pid, r in failing.items() if pid not in on_base}
    if replay_now:
        _replay_fresh(ev, oracle_pack, replay_now, scratch, progress, base_tree)
    frozen = set(oracle_pack.ledger.prop_ids())
    for pid, r in failing.items():
        base = next((x for x in ev.base_sig.replays if x.prop_id == pid), None)
        held = {e.digest for e in (base.fresh_log or ()) if e.held} if base else set()
        base_failed = {e.digest for e in (base.fresh_log or ()) if not e.held} if base else set()
        for e in r.fresh_log or ():
            if e.held or e.digest in held:
                continue  # held on the base: a regression, scored V16
            if pid in frozen and e.digest in base_failed:
                continue  # the frozen property's own known failure, on fresh inputs
            shown = printable(str(e.input))[:300]
            if e.digest in base_failed:
                ev.notices.append(
                    f"{pid}: preexisting_failure: a fresh example (fresh seed {r.fresh_seed}) fails on the base "
                    f"revision {ev.base_revision[:12]} too: {shown}; the verdict is unchanged. Once reviewed, "
                    f"freeze it: verdict-gate freeze --rev {ev.base_revision[:12]} "
                    f"--pack {shlex.quote(oracle_pack.source)} --id {pid} --reason \"…\" "
                    f"--ledger {oracle_pack.catalog.pack_root}/freeze_ledger.json")
            # Not drawn on the base at all: the verdict fails closed (core.verdict, new_failing_examples).
            break


def _replay_fresh(ev: Evidence, oracle_pack: pack.Pack, failing: dict[str, Any], scratch: Path, progress: Progress,
                  tree: Path | None) -> None:
    assert ev.base_sig is not None
    progress(f"replaying the fresh examples of {len(failing)} propert{'y' if len(failing) == 1 else 'ies'} "
             f"on the base {ev.base_revision[:12]}")
    passes = {pid: {"example_log": False, "fresh_seed": r.fresh_seed} for pid, r in failing.items()}
    # Only the fresh examples are drawn again, a share of what these properties took on the candidate: most
    # often less than a second, which one oracle process does sooner than two would start.
    jobs = runner.jobs_for([r.duration_s for r in failing.values()], runner.default_jobs())
    fresh = replay(Path(ev.repo), ev.base_revision, oracle_pack, sorted(failing), scratch, progress, ev.notices,
                   passes=passes, name="fresh-replay", tree=tree, jobs=jobs)
    by_id = {r.prop_id: r for r in fresh.replays}
    merged = []
    for rec in ev.base_sig.replays:
        got = by_id.pop(rec.prop_id, None)
        merged.append(dataclasses.replace(rec, fresh_seed=got.fresh_seed, fresh_log=got.fresh_log) if got else rec)
    merged += by_id.values()
    ev.base_sig = dataclasses.replace(ev.base_sig, replays=tuple(merged))


def score_run(ev: Evidence, oracle_pack: pack.Pack, parts: diffsplit.Split, done: Execution, today: dt.date) -> None:
    """Step 6: the verdicts, promotion and outcome, from what the steps before measured."""
    assert ev.base_sig is not None
    repo = Path(ev.repo)
    # One git call per distinct base revision, not per freeze (a ledger of 10,000 freezes names a few).
    revs = sorted({f.base_revision for f in oracle_pack.ledger.freezes})
    ancestors = {rev: git.is_ancestor(repo, rev, ev.base_revision) for rev in revs}
    ledger, translated = current_ledger(oracle_pack.ledger, ev.fixture)
    if translated:
        ev.notices.append(f"{translated} freeze(s) recorded under the tree-v1 fixture digest matched these fixtures' "
                          "tree-v1 digest; `verdict-gate freeze` records tree-v2")
    result = score(oracle_pack.catalog, ledger, done.records, oracle_edited=parts.oracle_edited,
                   replays=[r.base_sig() for r in ev.base_sig.replays], base_revision=ev.base_revision,
                   ancestors=ancestors, policy=ev.policy, today=today,
                   ran=sum(prop.id not in parts.oracle_edited for prop in oracle_pack.catalog.properties),
                   items=done.items, phase_failures=done.phase_failures)
    if result.nothing_ran:
        ev.notices.append("pytest collected zero tests for the catalog's properties: outcome incomplete")
    for failure in done.phase_failures:
        ev.notices.append(f"{failure}: outcome incomplete")
    ev.notices += [expiry_notice(f, days) for f, days in expiring(oracle_pack.ledger.freezes, today)]
    # What the decision read that no other evidence file holds (docs/design.md §9.1: `verdict-gate audit`).
    ev.ledger, ev.today, ev.ancestors, ev.items = ledger, today, ancestors, done.items
    ev.phase_failures = list(done.phase_failures)
    ev.unreported = [q.id for q in oracle_pack.catalog.properties
                     if q.id not in parts.oracle_edited and q.id not in done.records]
    ev.verdicts = result.verdicts
    ev.why = result.promotion.why
    ev.outcome = result.outcome
