"""Run properties with pytest in a subprocess (docs/design.md §8). An edge: processes, files, clock.

One pytest process runs every property it is given, in catalog order, with the gate's
plugin (``verdict_gate_plugin``) writing a ``start`` and a ``result`` line per property
(the records of :mod:`verdict_gate.boundary.results`, read here with the same module).
This process watches those lines: a property that outlives its ``timeout`` (seconds) has
its process group killed and is recorded ``timeout``; a process that dies mid-property
records that property ``crash``. Either way only that property is lost: the ones not yet
run go to a fresh process.

The subprocess environment is built, not inherited: no ``PYTHONPATH``, ``PYTEST_ADDOPTS``,
``PYTEST_PLUGINS`` or user site; plugin autoload off; ``-c`` points at an empty ini so the
candidate's pytest configuration is never read; ``--confcutdir`` stops conftest discovery
at the pack.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from verdict_gate.boundary import results as stream
from verdict_gate.boundary.fence import host as isolation_host
from verdict_gate.boundary.fence import reap
from verdict_gate.boundary.fence.errors import Unavailable
from verdict_gate.boundary.fence.policy import LEVELS, METHODS, worker_uids
from verdict_gate.boundary.spec import IsolationSpec, PropertySpec, RunSpec
from verdict_gate.core.catalog import Property
from verdict_gate.core.progress import Progress
from verdict_gate.host import workdir
from verdict_gate.host.workdir import shared_bytecode_cache

POLL_S = 0.05
COLLECT_BASE_S = 60.0  # seconds pytest may take to collect, plus COLLECT_PER_FILE_S per property file
COLLECT_PER_FILE_S = 0.25
END_GRACE_S = 10.0  # seconds a process may take to exit after its closing record
MAX_LINE = 4 * 1024 * 1024  # characters: one results record may not be longer
ENV_PINS = {"PYTHONHASHSEED": "0", "TZ": "UTC", "LC_ALL": "C.UTF-8"}



@dataclass(frozen=True)
class Workspace:
    """Where one run happens.

    Attributes:
        pack_dir: the materialised, verified pack (pytest rootdir).
        tree_dir: the candidate work tree or the base worktree (cwd of the run).
        python_path: absolute candidate directories the candidate worker imports from.
        roots: ``(absolute dir, repository prefix)`` pairs for repo-relative tracebacks.
        watch: fixture directories whose change after a property means it mutated them.
        scratch: a private directory for specs, results, logs and the bytecode cache.
        secrets: files the candidate worker must not read; its fence probe tries to (the repository's
            ``.git/config``, a canary in ``$HOME``): see :mod:`verdict_gate.boundary.fence`.
        modules: the catalog's ``modules`` (the candidate's top-level module names), or empty.
        limits: the catalog's ``limits`` for the worker (overrides of ``fence.policy.DEFAULT_LIMITS``).
        reviewed: the base revision's top-level candidate modules (served to the pack over the judge's own
            modules of the same name), or ``None`` (every module the tree provides).
        hypothesis: whether the oracle process imports Hypothesis (and sets its profile) before any test
            module: a property of the catalog is a Hypothesis one, or a Python file of the pack names it.
    """

    pack_dir: Path
    tree_dir: Path
    python_path: tuple[Path, ...]
    roots: tuple[tuple[Path, str], ...]
    watch: tuple[Path, ...]
    scratch: Path
    secrets: tuple[Path, ...] = ()
    modules: tuple[str, ...] = ()
    limits: Mapping[str, int] = field(default_factory=dict)
    # id → the extra passes of that property: example_log, fresh_seed
    passes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    reviewed: frozenset[str] | None = None  # execute.base_modules; None: every module the tree provides
    hypothesis: bool = True


def bytecode_cache(scratch: Path, level: str) -> Path:
    """The pytest subprocesses' ``PYTHONPYCACHEPREFIX``: outside every work tree.

    :func:`shared_bytecode_cache`, kept across runs: with a prefix Python ignores the ``__pycache__``
    beside installed modules, so a fresh prefix per run would recompile pytest and Hypothesis every
    time (about 1 s here). Only oracle code (pytest, Hypothesis, what the tests import) is compiled into
    it: candidate code runs in the worker, which reads only the interpreter's part of it
    (:func:`.fence.paths.bytecode_dirs`) and writes none; nothing under a work directory, the pack's
    included, is written there (:func:`verdict_gate.host.workdir.scratch_dir`). A process at level
    ``none`` runs candidate code itself, so it gets a cache of its own in ``scratch``, thrown
    away with the run (candidate code must not plant bytecode a later run would load). Falls back
    to ``scratch`` when the shared directory cannot be created.
    """
    if level == "none":
        return scratch / "pycache"
    path = shared_bytecode_cache()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return scratch / "pycache"
    return path


def subprocess_env(ws: Workspace, bytecode: Path, tmpdir: Path | None = None) -> dict[str, str]:
    """The complete environment of the pytest subprocess (nothing else is inherited: no token);
    ``bytecode``: its :func:`bytecode_cache`; ``tmpdir``: its ``TMPDIR``, which its worker shares."""
    pinned = {k: os.environ[k] for k in ("VERDICT_GATE_BWRAP",) if k in os.environ}
    return {
        **pinned,
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(ws.scratch / "home"),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONPYCACHEPREFIX": str(bytecode),
        "HYPOTHESIS_STORAGE_DIRECTORY": str(ws.scratch / "hypothesis"),
        "VERDICT_GATE_FIXTURES": str(ws.pack_dir / "fixtures"),
        **({"TMPDIR": str(tmpdir)} if tmpdir is not None else {}),
        **ENV_PINS,
    }


def collection_roots(pack_dir: Path, oracles: Sequence[str]) -> list[str]:
    """The fewest directories that hold every property file, as pytest arguments.

    pytest's collection costs about (arguments) × (files in their directory): one argument per
    property file grows with the square of a suite kept one property per file. The plugin then
    ignores every file that is not a catalog oracle file, so only the catalog's tests are imported.
    """
    dirs = sorted({str(PurePosixPath(o).parent) for o in oracles})
    roots: list[str] = []
    for directory in dirs:  # sorted, so a parent comes before its children
        if not any(directory == r or directory.startswith(r + "/") or r == "." for r in roots):
            roots.append(directory)
    return [str(pack_dir / r) if r != "." else str(pack_dir) for r in roots]


def _command(ws: Workspace, spec_file: Path, results: Path, ini: Path, selectors: Sequence[str],
             basetemp: Path) -> list[str]:
    return [
        # -P: do not put the cwd (the candidate tree) first on sys.path, or a candidate
        # `pytest.py` would run instead of pytest. -s: no user site-packages.
        sys.executable, "-P", "-s", "-m", "pytest",
        "-p", "verdict_gate_plugin",
        "-p", "no:cacheprovider",
        "-c", str(ini), "--rootdir", str(ws.pack_dir), "--confcutdir", str(ws.pack_dir),
        "--continue-on-collection-errors", "-q", "--no-header", "-rN", "--tb=short",
        "--verdict-gate-spec", str(spec_file), "--verdict-gate-results", str(results),
        # pytest's tmp_path and tmpdir, inside the directory the worker reads and writes at the same path
        # (docs/design.md §8.1, "Files"): pytest removes and makes the basetemp itself, so the worker is given
        # the directory above it.
        "--basetemp", str(basetemp),
        *selectors,
    ]


def _signal_name(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def _synthetic(prop: Property, status: str, exc_type: str, message: str,
               isolation: dict[str, Any] | None = None, nodes: dict[str, str] | None = None) -> dict[str, Any]:
    return stream.lost(prop.id, status, seed=prop.seed if prop.kind == "property" else None, node=prop.selector,
                       exc_type=exc_type, message=message, isolation=isolation, nodes=nodes)


def isolation_groups(props: Sequence[Property]) -> list[tuple[str, list[Property]]]:
    """Properties by isolation level, each group in catalog order: one level per pytest process
    (the import hook is process-wide, and a ``none`` property runs candidate code in-process)."""
    groups: dict[str, list[Property]] = {}
    for prop in props:
        groups.setdefault(prop.isolation, []).append(prop)
    return [(level, groups[level]) for level in LEVELS if level in groups]


@dataclass
class RawResults:
    """What :func:`run_properties` saw: id → the plugin's raw result record, and the phase failures
    (a collection over its bound) that make the run ``incomplete`` rather than crash its properties."""

    results: dict[str, dict[str, Any]]
    phase_failures: list[str]


class _Tally:
    """Properties done, across the processes of a run (thread-safe), for ``[n/total]`` progress.

    Only a finished property gets a number, and its line is printed while the count is held: with
    several oracle processes the numbers still come out 1, 2, … total, in order, each once (a line
    for a property that starts carries none: two processes start theirs at once)."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.lock = total, 0, threading.Lock()

    def report(self, progress: Progress, message: str, count: int = 1) -> None:
        """Count ``count`` properties done and print ``[done/total] message`` in the same step."""
        with self.lock:
            self.done += count
            progress(f"[{self.done}/{self.total}] {message}")


_LIVE: set[int] = set()  # pids of the pytest processes now running (never reaped by the sweep)
_LIVE_LOCK = threading.Lock()
_SWEEP_LOCK = threading.Lock()  # held by every sweep; see no_sweep


class Cancelled(Exception):
    """:func:`run_properties` was stopped through its ``cancel`` event: it has no results."""


@contextlib.contextmanager
def no_sweep() -> Iterator[None]:
    """No sweep runs while this is held: for a child process that is not an oracle process (``git``, an
    isolation probe) started while another thread runs properties, which a sweep would otherwise kill
    as a stray and reap (its caller would then read exit status 0)."""
    with _SWEEP_LOCK:
        yield


def shares(props: Sequence[Property], jobs: int) -> list[list[Property]]:
    """``props`` dealt round-robin into at most ``jobs`` shares, each in catalog order, each kind on its own (the
    Hypothesis properties, ``kind: property``, then the rest, the deal going on where it stopped): so the
    Hypothesis properties, tens of examples each where an example test is one call, spread evenly over the
    processes however the catalog orders them, and the split is the same on every run. Dealt by catalog
    position alone, 30 % of them at every third or fourth position put twice as many in one share as in the
    other, whose process then ended seconds before (benchmarks/README.md, issue 43)."""
    jobs = max(1, min(jobs, len(props)))
    out: list[list[int]] = [[] for _ in range(jobs)]
    turn = 0
    for hypothesis in (True, False):
        for i, prop in enumerate(props):
            if (prop.kind == "property") is hypothesis:
                out[turn % jobs].append(i)
                turn += 1
    return [[props[i] for i in sorted(share)] for share in out]


# Expected seconds of property work that pay for one more oracle process: starting one (pytest, the plugin,
# Hypothesis, a worker and its fence probes) costs about 0.3 s of CPU and as much latency, so a second
# process for less than this saves under half of it in wall time while spending that CPU.
SECONDS_PER_PROCESS = 1.0


def jobs_for(seconds: Sequence[float | None], budget: int) -> int:
    """Oracle processes for a run whose properties are expected to take ``seconds`` each (``None``: not
    known): one per :data:`SECONDS_PER_PROCESS` of their sum, at least 1 and at most ``budget``; ``budget``
    when any is not known. Pure; the records of a run do not depend on it (:func:`run_properties`)."""
    budget = max(1, budget)
    if any(s is None for s in seconds):
        return budget
    return max(1, min(budget, math.ceil(sum(s for s in seconds if s is not None) / SECONDS_PER_PROCESS)))


def default_jobs() -> int:
    """Oracle processes at once: ``$VERDICT_GATE_JOBS`` (what ``--jobs`` sets), else the core count."""
    try:
        return max(1, int(os.environ.get("VERDICT_GATE_JOBS") or 0) or len(os.sched_getaffinity(0)))
    except (ValueError, AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def run_properties(props: Sequence[Property], ws: Workspace, progress: Progress, jobs: int | None = None, *,
                   slot: Callable[[], AbstractContextManager[int | None]] | None = None,
                   cancel: threading.Event | None = None) -> RawResults:
    """Run ``props`` in up to ``jobs`` oracle processes at once (each with its own candidate worker);
    return the raw result records by id and any phase failure.

    A property missing from the answer produced no result (verdict V6); one whose record has
    ``event`` ``uncollected`` matched no test in its oracle file (also V6, with that reason). When that
    property names a ``node:`` (a catalog typo, :func:`verdict_gate.run.collected.check_collected`), every
    process is stopped at once and the records so far are returned: the caller raises the catalog's error.
    Timeouts and crashes appear as records with status ``timeout`` / ``crash`` and a
    deterministic ``exc_type``/``message`` so that they too have a signature; either loses only
    that property (the rest of its share go to a fresh process). A level the host cannot give
    (docs/design.md, "Isolation") is checked before anything runs: those properties get a ``fail``
    record with isolation method ``unavailable`` (verdict V17), and never run. The records do not
    depend on ``jobs``; the callers order every output by the catalog.

    ``slot`` (for runs side by side, sharing one budget of processes): entered around each oracle
    process, it may wait for a free slot and gives the CPU to pin it to (``None``: not pinned);
    without it share *i* runs on CPU *i* round-robin. ``cancel`` set: every process is killed, none
    starts, and :class:`Cancelled` is raised.
    """
    jobs = default_jobs() if jobs is None else max(1, jobs)
    stop = cancel if cancel is not None else threading.Event()
    (ws.scratch / "home").mkdir(parents=True, exist_ok=True)
    reap.set_subreaper()  # a daemon the candidate double-forks becomes our child: killed below
    ini = ws.scratch / "pytest.ini"
    ini.write_text("[pytest]\n", encoding="utf-8")
    results: dict[str, dict[str, Any]] = {}
    tally = _Tally(len(props))
    work, methods = _plan(props, ws, jobs, progress, tally, results)
    cpus = _cpus()
    attempts = iter(range(1, 1_000_000))
    lock = threading.Lock()

    at_once = 0 if slot is not None else min(jobs, len(work))
    by_id = {p.id: p for p in props}
    uncollected = threading.Event()  # a named node pytest did not collect: stop, and report it (check_collected)

    def run_share(index: int, level: str, share: list[Property]) -> tuple[dict[str, dict[str, Any]], list[str]]:
        cpu, worker_cpu = placement(cpus, index, at_once) if level != "none" else (None, None)
        mine: dict[str, dict[str, Any]] = {}
        failures: list[str] = []
        remaining = share
        while remaining and not stop.is_set():
            with lock:
                attempt = next(attempts)
            with slot() if slot is not None else contextlib.nullcontext(cpu) as pinned:
                got, phase_failure = _one_process(remaining, ws, ini, attempt, progress, mine, tally, level,
                                                  pinned if level != "none" else None, stop, worker_cpu,
                                                  methods.get(level))
            if phase_failure:
                failures.append(phase_failure)
            if any(r.get("event") == stream.UNCOLLECTED and by_id[pid].node for pid, r in mine.items()):
                uncollected.set()  # the catalog's error: every other process stops now too
                stop.set()
                break
            left = [p for p in remaining if p.id not in mine]
            if not got or len(left) == len(remaining):
                break  # the process ran nothing more: what is left was never collected
            remaining = left
        return mine, failures

    phase_failures: list[str] = []
    done = _run_shares(work, run_share, jobs, stop)
    if stop.is_set() and not uncollected.is_set():
        raise Cancelled("the run was cancelled")
    for mine, failures in done:
        results.update(mine)
        phase_failures += failures
    return RawResults(results, phase_failures)


def _plan(props: Sequence[Property], ws: Workspace, jobs: int, progress: Progress, tally: _Tally,
          results: dict[str, dict[str, Any]]) -> tuple[list[tuple[str, list[Property]]], dict[str, str]]:
    """The shares to run, ``(level, properties)``, and the method of each level, chosen once here. A level the
    host cannot give fails its properties in ``results`` now, before anything runs (verdict V17)."""
    work: list[tuple[str, list[Property]]] = []
    methods: dict[str, str] = {}
    for level, group in isolation_groups(props):
        if level != "none":
            try:
                methods[level] = isolation_host.method(level)
                if methods[level] in METHODS["sandbox"] and isolation_host.own_uid_works():
                    # The worker runs as a uid of its own: it must be able to reach the tree, the fixtures and
                    # its temp dir inside the gate's private work dirs (Landlock and the mounts, not file modes,
                    # fence the rest).
                    workdir.open_to_worker([ws.tree_dir, ws.pack_dir / "fixtures", ws.scratch])
            except Unavailable as exc:
                tally.report(progress, f"isolation {level} is unavailable here: {len(group)} propert"
                                       f"{'y' if len(group) == 1 else 'ies'} not run", len(group))
                for prop in group:
                    results[prop.id] = _synthetic(prop, "fail", "verdict_gate.IsolationUnavailable", str(exc),
                                                  {"level": level, "method": "unavailable", "fences": {},
                                                   "why": str(exc)})
                continue
        work += [(level, share) for share in shares(group, jobs)]
    return work, methods


Share = Callable[[int, str, list[Property]], tuple[dict[str, dict[str, Any]], list[str]]]


def _run_shares(work: Sequence[tuple[str, list[Property]]], run_share: Share, jobs: int,
                stop: threading.Event) -> list[tuple[dict[str, dict[str, Any]], list[str]]]:
    """Each share's results and phase failures, its process (or processes) run by ``run_share``: one after another,
    or ``jobs`` at once on threads."""
    if len(work) <= 1 or jobs <= 1:
        return [run_share(i, level, share) for i, (level, share) in enumerate(work)]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="verdict-gate-job") as pool:
        try:
            return list(pool.map(lambda item: run_share(item[0], *item[1]), enumerate(work)))
        except BaseException:
            stop.set()  # Ctrl-C, SIGTERM, an error: the other shares stop now, not after their last property
            raise


def placement(cpus: Sequence[int], index: int, at_once: int) -> tuple[int | None, int | None]:
    """The CPUs of share ``index``'s oracle process and of its worker, as ``(oracle, worker)``.

    The two take turns (each call blocks the caller until the answer), so by default they share one
    CPU, shares round-robin over ``cpus``: waking a process on another, idle core costs about three
    times a call (benchmarks/README.md, ``bench_codec.py``), and the worker is ``None`` (it inherits
    the oracle's). When there are two CPUs for each of the ``at_once`` processes that run at once, each
    gets a pair and the worker its own CPU, and the two poll their pipes instead of sleeping
    (:data:`SPIN_S`). ``at_once`` ``0``: unknown (runs side by side share a budget of slots): no pairs.
    Fewer than two CPUs: ``(None, None)``, no pinning.
    """
    if len(cpus) < 2:
        return None, None
    if at_once and len(cpus) >= 2 * at_once:
        return cpus[2 * index % len(cpus)], cpus[(2 * index + 1) % len(cpus)]
    return cpus[index % len(cpus)], None


def _cpus() -> list[int]:
    """The CPUs this process may run on (``[]`` where the host cannot say), in the order shares take them:
    :func:`rotated` by this process's id."""
    try:
        return rotated(sorted(os.sched_getaffinity(0)), os.getpid())
    except (AttributeError, OSError):
        return []


def rotated(cpus: Sequence[int], pid: int) -> list[int]:
    """``cpus`` starting at index ``pid`` modulo their count. Gates side by side on one machine (several jobs on
    one runner, a test suite) would otherwise all pin their first oracle process, and every run of one process
    (a base replay, fresh examples, a small catalog), to the same CPU, and leave the others idle: two gates
    at once went 16.6 s → 15.2 s for 12 runs of an attack case (benchmarks/README.md)."""
    if not cpus:
        return []
    start = pid % len(cpus)
    return [*cpus[start:], *cpus[:start]]


# Seconds an oracle process and its worker, each on a CPU of its own, poll their pipes before they
# sleep: longer than the oracle's own work between two calls of a Hypothesis example loop (about
# 0.3 ms), so a worker is still polling when the next call comes.
SPIN_S = 0.002


def _shared_dir(ws: Workspace, attempt: int) -> Path:
    """The directory one oracle process and its workers share (docs/design.md §8.1, "Files"): pytest's basetemp
    (``basetemp``, which pytest makes) and both processes' ``TMPDIR`` (``tmp``). Open to every user (sticky, as
    ``/tmp``): a worker of a uid of its own writes there too, and its sandbox confines its writes to it."""
    shared = ws.scratch / f"shared-{attempt}"
    (shared / "tmp").mkdir(parents=True, exist_ok=True)
    for made in (shared, shared / "tmp"):
        made.chmod(0o1777)
    return shared


def _isolation_spec(ws: Workspace, level: str, props: Sequence[Property], cpu: int | None,
                    worker_cpu: int | None = None, method: str | None = None,
                    shared: Path | None = None) -> IsolationSpec:
    return IsolationSpec(
        level=level,
        method=method,  # chosen once per run (fence.host.method): the oracle process does not probe again
        userns=isolation_host.bwrap_userns() if method == "bwrap" else None,
        own_uid=isolation_host.own_uid_works() if method in METHODS["sandbox"] else False,
        # See placement(): one CPU for both, or with CPUs to spare one each, polling.
        cpu=cpu,
        worker_cpu=worker_cpu,
        spin_s=SPIN_S if worker_cpu is not None else 0.0,
        # One answer (an import at collection, when no property timeout runs yet) may take this long.
        answer_timeout=max(p.timeout for p in props),
        cwd=str(ws.tree_dir),
        readonly=[str(ws.tree_dir), str(ws.pack_dir / "fixtures")],
        scratch=str(ws.scratch),
        shared=[str(shared)] if shared is not None else [],
        secrets=[str(s) for s in ws.secrets],
        limits=dict(ws.limits),
        candidate_modules=list(ws.modules),
        reviewed=None if ws.reviewed is None else sorted(ws.reviewed),
    )


def _one_process(props: Sequence[Property], ws: Workspace, ini: Path, attempt: int, progress: Progress,
                 results: dict[str, dict[str, Any]], tally: _Tally, level: str,
                 cpu: int | None = None, cancel: threading.Event | None = None,
                 worker_cpu: int | None = None, method: str | None = None) -> tuple[int, str]:
    oracles = sorted({p.oracle for p in props})
    bytecode = bytecode_cache(ws.scratch, level)
    shared = _shared_dir(ws, attempt)
    spec = RunSpec(
        python_path=[str(p) for p in ws.python_path],
        roots=[(str(root), prefix) for root, prefix in ws.roots],
        watch=[str(w) for w in ws.watch if w.is_dir()],
        properties=[PropertySpec(p.id, p.selector, p.seed, p.kind, p.fresh_examples, ws.passes.get(p.id, {}))
                    for p in props],
        files=[str(ws.pack_dir / o) for o in oracles],
        boundary=str(Path(stream.__file__).resolve().parent),  # the plugin loads it by path (boundary/load.py)
        hypothesis=ws.hypothesis,
        # Kept across runs: the plugin goes on writing bytecode for what tests import late; a per-run cache
        # (level none, or no shared one) is never read again, so nothing more is written into it.
        keep_bytecode=bytecode == shared_bytecode_cache(),
        isolation=_isolation_spec(ws, level, props, cpu, worker_cpu, method, shared),
    )
    spec_file = ws.scratch / f"spec-{attempt}.json"
    spec_file.write_text(json.dumps(spec.to_json()), encoding="utf-8")
    results_file = ws.scratch / f"results-{attempt}.jsonl"
    results_file.touch()
    log = open(ws.scratch / f"pytest-{attempt}.log", "wb")  # noqa: SIM115
    by_id = {p.id: p for p in props}
    if len(oracles) > 50:
        progress(f"collecting {len(oracles)} property files …")
    with _LIVE_LOCK:  # registered before any sweep can take it for a stray child
        proc = subprocess.Popen(
            # Directories, not node ids: pytest stops the whole session on a node id it cannot
            # find, so the plugin selects the files and tests and reports a property whose node
            # matched none. pytest resolves path arguments from the cwd (the work tree); node ids
            # stay rootdir-relative.
            _command(ws, spec_file, results_file, ini, collection_roots(ws.pack_dir, oracles), shared / "basetemp"),
            cwd=ws.tree_dir, env=subprocess_env(ws, bytecode, shared / "tmp"), stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a timeout kills the whole tree
        )
        _LIVE.add(proc.pid)
    watch = _Watch(by_id, results, tally, progress, files=len(oracles))
    exit_fd = _pidfd(proc.pid)
    try:
        with open(results_file, encoding="utf-8", errors="replace") as feed:
            while True:
                exited = proc.poll() is not None
                if cancel is not None and cancel.is_set():
                    _kill(proc)
                    return watch.got, ""  # the caller raises Cancelled: nothing of this process is kept
                watch.feed(feed.read())
                if watch.tampered or watch.stop_now:
                    _kill(proc)
                    break
                overdue = watch.overdue()
                if overdue:
                    _kill(proc)
                    watch.kill_reason = overdue
                    break
                if exited:
                    break
                _wait_exit(exit_fd, POLL_S)
        watch.finish(proc.returncode, ws.scratch / f"pytest-{attempt}.log")
        return watch.got, watch.phase_failure
    finally:
        if proc.poll() is None:
            _kill(proc)
        if exit_fd is not None:
            os.close(exit_fd)
        log.close()
        # Every process the candidate started is dead before results are read further (§8.4):
        # with the gate a child subreaper, an orphan of this process is our child now.
        with _SWEEP_LOCK, _LIVE_LOCK:
            _LIVE.discard(proc.pid)
            if method in METHODS["sandbox"] and isolation_host.own_uid_works():
                for uid in worker_uids(proc.pid):  # everything of its workers' uids (kill(-1) by uid)
                    reap.kill_uid(uid)
            reap.kill_descendants(keep=tuple(_LIVE))


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when the child ``pid`` exits (Linux 5.3+ ``pidfd_open``), or ``None``
    where the host has none. The child is not reaped before it is closed, so the pid cannot be reused."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _wait_exit(exit_fd: int | None, seconds: float) -> None:
    """Wait ``seconds``, or less when the process of ``exit_fd`` exits first: a run does not lose up to a
    poll interval after each oracle process's end (a sleep where there is no pidfd)."""
    if exit_fd is None:
        time.sleep(seconds)
        return
    try:
        select.select([exit_fd], [], [], seconds)
    except (OSError, ValueError):
        time.sleep(seconds)


class _Watch:
    """Reads one pytest process's results stream and enforces its time limits.

    Trust rules (candidate code runs inside that process, so its stream is checked, not
    believed): a record must be one JSON object per line with an ``event`` and a known ``id``;
    a ``result`` must follow that property's ``start``; every property gets one result; the
    stream must end with the plugin's ``end`` record. Any breach marks every property of the
    process ``crash`` (tampered). A property over its ``timeout`` is killed (``timeout``).
    Collection is a phase of its own, bounded by :data:`COLLECT_BASE_S` plus
    :data:`COLLECT_PER_FILE_S` per property file: a collection over it is a phase failure
    (:attr:`phase_failure`, outcome ``incomplete``), never a crash of every property. Time between
    properties (teardown) is limited to the largest timeout.
    """

    def __init__(self, by_id: dict[str, Property], results: dict[str, dict[str, Any]], tally: _Tally,
                 progress: Progress, files: int = 1) -> None:
        self.by_id, self.results, self.tally, self.progress = by_id, results, tally, progress
        self.files = files
        self.began = time.monotonic()
        self.collected = False
        self.collect_limit = COLLECT_BASE_S + COLLECT_PER_FILE_S * files
        self.phase_failure = ""
        self.mine: dict[str, dict[str, Any]] = {}
        self.buffer = ""
        self.current: str | None = None
        self.nodes: dict[str, str] = {}  # the current property's test nodes that are over (its ``node`` events)
        self.last_event = time.monotonic()
        self.started_at = 0.0
        self.ended = False
        self.tampered = ""
        self.kill_reason = ""
        self.got = 0
        self.outside_limit = max(p.timeout for p in by_id.values())
        self.stop_now = False  # a named node was not collected: the catalog's error (collected.check_collected)

    def feed(self, text: str) -> None:
        self.buffer += text
        *lines, self.buffer = self.buffer.split("\n")
        if len(self.buffer) > MAX_LINE:
            self.tampered = "a record longer than the limit"
        for line in lines:
            if self.tampered:
                return
            self._record(line)

    def _record(self, line: str) -> None:
        try:
            event, pid, record = stream.parse(line)
        except ValueError:
            self.tampered = "a malformed record"
            return
        self.last_event = time.monotonic()
        if self.ended:
            self.tampered = "a record after the closing record"
        elif event == stream.COLLECTED and not self.collected and self.current is None:
            self.collected = True
            if self.files > 50:
                self.progress(f"collected {record.get('count')} tests from {self.files} files in "
                              f"{self.last_event - self.began:.1f} s")
        elif event == stream.END:
            self.ended = True
        elif pid not in self.by_id:
            self.tampered = f"a record for an unknown property {str(pid)[:60]!r}"
        elif pid in self.mine or pid in self.results:
            self.tampered = f"a second record for {pid}"
        elif event == stream.UNCOLLECTED and self.current is None:
            # The catalog names a test the pack's file does not have (a node typo): the catalog's error, so the
            # whole run stops now (run_properties), not after every other property has run.
            self.mine[pid] = record
            self.stop_now = self.stop_now or bool(self.by_id[pid].node)
            self.tally.report(self.progress, f"{pid}: no test collected for {self.by_id[pid].selector}")
        elif event == stream.NODE and pid == self.current and stream.node_well_formed(record):
            if len(self.nodes) < stream.MAX_NODES:
                self.nodes[record["node"]] = record["outcome"]
        elif event == stream.START and self.current is None:
            self.collected = True  # a plugin that ran no collection hook still starts properties
            self.current, self.started_at, self.nodes = pid, time.monotonic(), {}
            self.progress(f"{pid} …")
        elif event == stream.RESULT and pid == self.current and stream.well_formed(record):
            self.mine[pid] = record
            self.current = None
            duration = record.get("duration_s")
            self.tally.report(self.progress, f"{pid}: {record['status']}"
                              + (f" ({duration:.2f} s)" if isinstance(duration, (int, float)) and duration else ""))
        else:
            self.tampered = f"an out-of-order {str(event)[:20]!r} record for {pid}"

    def overdue(self) -> str:
        now = time.monotonic()
        if not self.collected and self.current is None and not self.mine:
            return "collecting" if now - self.began > self.collect_limit else ""
        if self.current is not None and now - self.started_at > self.by_id[self.current].timeout:
            return "timeout"
        if self.ended and now - self.last_event > END_GRACE_S:
            return "lingering"  # every result is in; it hangs on the way out (atexit, a thread)
        if self.current is None and now - self.last_event > self.outside_limit:
            return "hung"
        return ""

    def finish(self, returncode: int | None, log_path: Path) -> None:
        code = _signal_name(returncode if returncode is not None else -9)
        if self.stop_now:  # killed on purpose: what it reported stands, nothing else is lost or retried
            self.results.update(self.mine)
            self.got = len(self.mine)
            return
        if self.tampered:
            fresh = [prop for prop in self.by_id.values() if prop.id not in self.results and prop.id not in self.mine]
            for prop in self.by_id.values():
                if prop.id not in self.results:
                    self.results[prop.id] = _synthetic(prop, "crash", stream.CRASH_EXC,
                                                       f"the results stream was tampered with ({self.tampered})")
            self.tally.report(self.progress, f"the property process wrote {self.tampered}: its properties are "
                                             "recorded crashed", len(fresh))
            self.got = len(self.by_id)
            return
        if self.kill_reason == "collecting":
            self.phase_failure = (f"pytest's collection of {self.files} property files took over "
                                  f"{self.collect_limit:g} s and was stopped; no property ran")
            self.progress(self.phase_failure)
            self.got = 0
            return
        if self.kill_reason == "timeout" and self.current is not None:
            prop = self.by_id[self.current]
            self.mine[prop.id] = _synthetic(prop, "timeout", stream.TIMEOUT_EXC, f"timed out after {prop.timeout:g} s",
                                            nodes=self.nodes)
            self.tally.report(self.progress, f"{prop.id}: timeout after {prop.timeout:g} s")
        elif self.current is not None:
            prop = self.by_id[self.current]
            self.mine[prop.id] = _synthetic(prop, "crash", stream.CRASH_EXC,
                                            f"the pytest process ended ({code}) mid-property", nodes=self.nodes)
            self.tally.report(self.progress, f"{prop.id}: crash ({code})")
        elif not self.ended:
            # Killed outside any property, or gone without the plugin's closing record
            # (os._exit, a crash after the last result): nothing it reported is trusted, and
            # what it never started is not retried.
            why = (f"the pytest process spent over {self.outside_limit:g} s outside any property"
                   if self.kill_reason == "hung" else f"the pytest process ended ({code}) without its closing record")
            fresh = [prop for prop in self.by_id.values() if prop.id not in self.results and prop.id not in self.mine]
            for prop in self.by_id.values():
                if prop.id not in self.results:
                    self.mine[prop.id] = _synthetic(prop, "crash", stream.CRASH_EXC, why)
            self.tally.report(self.progress, why, len(fresh))
        if not self.mine:
            tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
            self.progress(f"pytest produced no result ({code}): {' | '.join(tail)}")
        # A lost property explains itself: the last lines of pytest's own output (docs/design.md §8.5).
        lost = [r for r in self.mine.values() if r.get("status") in stream.RUNNER_STATUSES and not r.get("output_tail")]
        if lost:
            tail_text = output_tail(log_path)
            for record in lost:
                record["output_tail"] = tail_text
        self.results.update(self.mine)
        self.got = len(self.mine)


OUTPUT_TAIL_LINES = 20
OUTPUT_TAIL_CHARS = 4_000


def output_tail(log_path: Path) -> str | None:
    """The last lines of pytest's own output (``None`` without a log), capped for the evidence."""
    try:
        with open(log_path, "rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - 64 * 1024))
            text = log.read().decode("utf-8", "replace")
    except OSError:
        return None
    lines = [line.rstrip() for line in text.strip().splitlines()][-OUTPUT_TAIL_LINES:]
    tail = "\n".join(lines)
    return tail[-OUTPUT_TAIL_CHARS:] if tail else None


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def environment_pins() -> dict[str, str]:
    """Versions and environment the runs were made under (recorded in ``runs.json``).

    The versions are read from the installed distributions' metadata (the pytest subprocesses run
    this interpreter with the same packages): importing Hypothesis here would cost about 0.2 s.
    """
    from importlib.metadata import PackageNotFoundError, version

    def installed(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    return {**ENV_PINS, "python": sys.version.split()[0], "pytest": installed("pytest"),
            "hypothesis": installed("hypothesis"), "platform": sys.platform}
