"""Run properties with pytest in a subprocess (docs/design.md §8). An edge: processes, files, clock.

One pytest process runs every property it is given, in catalog order, with the gate's
plugin (``verdict_gate_plugin``) writing a ``start`` and a ``result`` line per property
(the records of :mod:`verdict_gate.run.results`, read here with the same module).
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
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verdict_gate.core.catalog import Property
from verdict_gate.core.errors import GateError
from verdict_gate.run import results as stream

POLL_S = 0.05
END_GRACE_S = 10.0  # seconds a process may take to exit after its closing record
MAX_LINE = 4 * 1024 * 1024  # characters: one results record may not be longer
ENV_PINS = {"PYTHONHASHSEED": "0", "TZ": "UTC", "LC_ALL": "C.UTF-8"}

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Workspace:
    """Where one run happens.

    Attributes:
        pack_dir: the materialised, verified pack (pytest rootdir).
        tree_dir: the candidate work tree or the base worktree (cwd of the run).
        python_path: absolute candidate directories, put on ``sys.path`` after the standard library.
        roots: ``(absolute dir, repository prefix)`` pairs for repo-relative tracebacks.
        watch: fixture directories whose change after a property means it mutated them.
        scratch: a private directory for specs, results, logs and the bytecode cache.
        run_as: ``(uid, gid)`` the pytest subprocess drops to (see :func:`sandbox_user`), or
            ``None`` to run as this process's user.
    """

    pack_dir: Path
    tree_dir: Path
    python_path: tuple[Path, ...]
    roots: tuple[tuple[Path, str], ...]
    watch: tuple[Path, ...]
    scratch: Path
    run_as: tuple[int, int] | None = None


_SANDBOX: dict[str, tuple[int, int] | str] = {}  # user name → (uid, gid), or why it cannot be used
_WARNED: set[str] = set()


def sandbox_user() -> tuple[int, int] | None:
    """The ``(uid, gid)`` property processes run as when the gate runs as root, else ``None``.

    As root (a Docker container action runs as root), candidate code in the property process
    could otherwise read the gate's environment through ``/proc`` (the GitHub token), write
    the runner's files and ignore the fixtures' read-only modes. So the process drops to the
    user named by ``$VERDICT_GATE_RUN_AS`` (default ``nobody``). A probe (``python -c "import
    pytest"`` as that user) checks the interpreter is usable by it. ``root`` runs candidate
    code as root on purpose; ``auto`` tries ``nobody`` and falls back to root with a warning
    (for trusted code: the demo, the self-gate).

    Raises:
        GateError: as root, when that user does not exist or cannot run the interpreter.
    """
    if os.geteuid() != 0:
        return None
    name = os.environ.get("VERDICT_GATE_RUN_AS", "nobody")
    if name == "root":
        return None
    if name == "auto":
        try:
            return _probe("nobody")
        except GateError as exc:
            if "auto" not in _WARNED:
                _WARNED.add("auto")
                print(f"verdict-gate: warning: {exc.problem} as 'nobody': properties run as root "
                      "(VERDICT_GATE_RUN_AS=auto)", file=sys.stderr)
            return None
    return _probe(name)


def _probe(name: str) -> tuple[int, int]:
    """``(uid, gid)`` of ``name`` once it has run the interpreter; the answer is kept per process."""
    if name not in _SANDBOX:
        import pwd

        entry = None
        try:
            entry = pwd.getpwnam(name)
            probe = subprocess.run([sys.executable, "-P", "-s", "-c", "import pytest, hypothesis"],
                                   user=entry.pw_uid, group=entry.pw_gid, extra_groups=[], cwd="/",
                                   env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                                   capture_output=True, timeout=60)
            problem = "" if probe.returncode == 0 else (probe.stderr.decode(errors="replace").strip().splitlines()
                                                         or [f"exit {probe.returncode}"])[-1]
        except KeyError:
            problem = "no such user"
        except (OSError, subprocess.SubprocessError) as exc:
            problem = str(exc)
        _SANDBOX[name] = problem or (entry.pw_uid, entry.pw_gid)  # type: ignore[union-attr]
    found = _SANDBOX[name]
    if isinstance(found, str):
        raise GateError("property sandbox", f"user {name!r}", f"cannot run {sys.executable} ({found})",
                        "install verdict-gate where that user can read it (the Docker image does), name "
                        "another user in VERDICT_GATE_RUN_AS, or, for a candidate you trust, set "
                        "VERDICT_GATE_RUN_AS=root (or auto: root only where that user cannot run it)")
    return found


def _share_with(ws: Workspace, uid: int, gid: int) -> None:
    """Let ``uid`` reach the pack, the tree and the scratch dir: add read and search for others
    to every directory from the temp root down to each (``mkdtemp`` makes them 0700; nothing
    becomes writable), and give it the few directories it writes."""
    top = ws.scratch.parent
    for target in (ws.pack_dir, ws.tree_dir, ws.scratch):
        chain = [target, *[p for p in target.parents if p == top or top in p.parents]]
        for path in chain:
            mode = os.stat(path).st_mode & 0o7777
            if mode & 0o055 != 0o055:
                os.chmod(path, mode | 0o055)
    for owned in (ws.scratch / "home", ws.scratch / "hypothesis"):
        owned.mkdir(parents=True, exist_ok=True)
        os.chown(owned, uid, gid)


def bytecode_cache(scratch: Path, run_as: tuple[int, int] | None = None) -> Path:
    """The pytest subprocesses' ``PYTHONPYCACHEPREFIX``: outside every work tree.

    ``$VERDICT_GATE_CACHE`` or ``$XDG_CACHE_HOME/verdict-gate`` (default ``~/.cache``) plus
    ``pycache``, kept across runs: with a prefix Python ignores the ``__pycache__`` beside
    installed modules, so a fresh prefix per run would recompile pytest and Hypothesis every
    time (about 1 s here).

    For a sandboxed run (``run_as``) the cache is ``pycache-trusted``: owned by root, filled
    by root importing only the installed test stack (no candidate code), and read-only to the
    property processes — so candidate code cannot plant bytecode that a later run would load.
    Without a sandbox the candidate runs as the gate's own user, who can change the gate's
    installation anyway. Falls back to ``scratch`` when the directory cannot be created.
    """
    root = Path(os.environ.get("VERDICT_GATE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "verdict-gate"))
    path = root / ("pycache-trusted" if run_as else "pycache")
    try:
        path.mkdir(parents=True, exist_ok=True)
        if run_as:
            for directory in (root, path):
                os.chown(directory, 0, 0)
                os.chmod(directory, 0o755)
            _warm(path)
    except OSError:
        return scratch.parent / "pycache"
    return path


_WARMED: set[Path] = set()


def _warm(cache: Path) -> None:
    """Compile the installed test stack into ``cache`` as root, once per gate process."""
    if cache in _WARMED:
        return
    subprocess.run([sys.executable, "-P", "-s", "-c",
                    "import pytest, _pytest.python, _pytest.assertion.rewrite, hypothesis, hypothesis.strategies, "
                    "verdict_gate_plugin"],
                   cwd="/", env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPYCACHEPREFIX": str(cache)},
                   capture_output=True, timeout=120, check=False)
    _WARMED.add(cache)


def subprocess_env(ws: Workspace) -> dict[str, str]:
    """The complete environment of the pytest subprocess (nothing else is inherited)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(ws.scratch / "home"),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONPYCACHEPREFIX": str(bytecode_cache(ws.scratch, ws.run_as)),
        "HYPOTHESIS_STORAGE_DIRECTORY": str(ws.scratch / "hypothesis"),
        "VERDICT_GATE_FIXTURES": str(ws.pack_dir / "fixtures"),
        **ENV_PINS,
    }
    return env


def _command(ws: Workspace, spec_file: Path, results: Path, ini: Path, selectors: Sequence[str]) -> list[str]:
    return [
        # -P: do not put the cwd (the candidate tree) first on sys.path, or a candidate
        # `pytest.py` would run instead of pytest. -s: no user site-packages.
        sys.executable, "-P", "-s", "-m", "pytest",
        "-p", "verdict_gate_plugin",
        "-p", "no:cacheprovider",
        "-c", str(ini), "--rootdir", str(ws.pack_dir), "--confcutdir", str(ws.pack_dir),
        "--continue-on-collection-errors", "-q", "--no-header", "-rN", "--tb=short",
        "--verdict-gate-spec", str(spec_file), "--verdict-gate-results", str(results),
        *selectors,
    ]


def _signal_name(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def _synthetic(prop: Property, status: str, exc_type: str, message: str) -> dict[str, Any]:
    return stream.lost(prop.id, status, seed=prop.seed if prop.kind == "property" else None, node=prop.selector,
                       exc_type=exc_type, message=message)


def run_properties(props: Sequence[Property], ws: Workspace, progress: Progress) -> dict[str, dict[str, Any]]:
    """Run ``props`` and return id → the plugin's raw result record.

    A property missing from the answer produced no result (verdict V6); one whose record has
    ``event`` ``uncollected`` matched no test in its oracle file (also V6, with that reason).
    Timeouts and crashes appear as records with status ``timeout`` / ``crash`` and a
    deterministic ``exc_type``/``message`` so that they too have a signature.
    """
    (ws.scratch / "home").mkdir(parents=True, exist_ok=True)
    if ws.run_as:
        _share_with(ws, *ws.run_as)
    ini = ws.scratch / "pytest.ini"
    ini.write_text("[pytest]\n", encoding="utf-8")
    results: dict[str, dict[str, Any]] = {}
    remaining = list(props)
    attempt = 0
    total = len(props)
    while remaining:
        attempt += 1
        got = _one_process(remaining, ws, ini, attempt, progress, results, total)
        left = [p for p in remaining if p.id not in results]
        if not got or len(left) == len(remaining):
            break  # the process ran nothing more: what is left was never collected
        remaining = left
    return results


def _one_process(props: Sequence[Property], ws: Workspace, ini: Path, attempt: int, progress: Progress,
                 results: dict[str, dict[str, Any]], total: int) -> int:
    spec = {
        "python_path": [str(p) for p in ws.python_path],
        "roots": [[str(root), prefix] for root, prefix in ws.roots],
        "watch": [str(w) for w in ws.watch if w.is_dir()],
        "properties": [{"id": p.id, "selector": p.selector, "seed": p.seed, "kind": p.kind} for p in props],
        "results_module": str(Path(stream.__file__).resolve()),
    }
    spec_file = ws.scratch / f"spec-{attempt}.json"
    spec_file.write_text(json.dumps(spec), encoding="utf-8")
    results_file = ws.scratch / f"results-{attempt}.jsonl"
    results_file.touch()
    if ws.run_as:
        os.chown(results_file, *ws.run_as)  # the plugin, running as that user, appends to it
    log = open(ws.scratch / f"pytest-{attempt}.log", "wb")  # noqa: SIM115
    by_id = {p.id: p for p in props}
    proc = subprocess.Popen(
        # Files, not node ids: pytest stops the whole session on a node id it cannot find, so the
        # plugin selects the tests and reports a property whose node matched none. pytest
        # resolves path arguments from the cwd (the work tree); node ids stay rootdir-relative.
        _command(ws, spec_file, results_file, ini, sorted({str(ws.pack_dir / p.oracle) for p in props})),
        cwd=ws.tree_dir, env=subprocess_env(ws), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so a timeout kills the whole tree
        **_user_kwargs(ws),
    )
    watch = _Watch(by_id, results, total, progress)
    try:
        with open(results_file, encoding="utf-8", errors="replace") as feed:
            while True:
                exited = proc.poll() is not None
                watch.feed(feed.read())
                if watch.tampered:
                    _kill(proc)
                    break
                overdue = watch.overdue()
                if overdue:
                    _kill(proc)
                    watch.kill_reason = overdue
                    break
                if exited:
                    break
                time.sleep(POLL_S)
        watch.finish(proc.returncode, ws.scratch / f"pytest-{attempt}.log")
        return watch.got
    finally:
        if proc.poll() is None:
            _kill(proc)
        log.close()


class _Watch:
    """Reads one pytest process's results stream and enforces its time limits.

    Trust rules (candidate code runs inside that process, so its stream is checked, not
    believed): a record must be one JSON object per line with an ``event`` and a known ``id``;
    a ``result`` must follow that property's ``start``; every property gets one result; the
    stream must end with the plugin's ``end`` record. Any breach marks every property of the
    process ``crash`` (tampered). A property over its ``timeout`` is killed (``timeout``); time
    outside any property (collection, teardown) is limited to the largest timeout.
    """

    def __init__(self, by_id: dict[str, Property], results: dict[str, dict[str, Any]], total: int,
                 progress: Progress) -> None:
        self.by_id, self.results, self.total, self.progress = by_id, results, total, progress
        self.mine: dict[str, dict[str, Any]] = {}
        self.buffer = ""
        self.current: str | None = None
        self.last_event = time.monotonic()
        self.started_at = 0.0
        self.ended = False
        self.tampered = ""
        self.kill_reason = ""
        self.got = 0
        self.outside_limit = max(p.timeout for p in by_id.values())

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
        elif event == stream.END:
            self.ended = True
        elif pid not in self.by_id:
            self.tampered = f"a record for an unknown property {str(pid)[:60]!r}"
        elif pid in self.mine or pid in self.results:
            self.tampered = f"a second record for {pid}"
        elif event == stream.UNCOLLECTED and self.current is None:
            # The catalog names a test the pack's file does not have (a node typo).
            self.mine[pid] = record
            self.progress(f"[{len(self.results) + len(self.mine)}/{self.total}] {pid}: "
                          f"no test collected for {self.by_id[pid].selector}")
        elif event == stream.START and self.current is None:
            self.current, self.started_at = pid, time.monotonic()
            self.progress(f"[{len(self.results) + len(self.mine) + 1}/{self.total}] {pid} …")
        elif event == stream.RESULT and pid == self.current and stream.well_formed(record):
            self.mine[pid] = record
            self.current = None
            duration = record.get("duration_s")
            self.progress(f"[{len(self.results) + len(self.mine)}/{self.total}] {pid}: {record['status']}"
                          + (f" ({duration:.2f} s)" if isinstance(duration, (int, float)) and duration else ""))
        else:
            self.tampered = f"an out-of-order {str(event)[:20]!r} record for {pid}"

    def overdue(self) -> str:
        now = time.monotonic()
        if self.current is not None and now - self.started_at > self.by_id[self.current].timeout:
            return "timeout"
        if self.ended and now - self.last_event > END_GRACE_S:
            return "lingering"  # every result is in; it hangs on the way out (atexit, a thread)
        if self.current is None and now - self.last_event > self.outside_limit:
            return "hung"
        return ""

    def finish(self, returncode: int | None, log_path: Path) -> None:
        code = _signal_name(returncode if returncode is not None else -9)
        if self.tampered:
            for prop in self.by_id.values():
                if prop.id not in self.results:
                    self.results[prop.id] = _synthetic(prop, "crash", stream.CRASH_EXC,
                                                       f"the results stream was tampered with ({self.tampered})")
            self.progress(f"the property process wrote {self.tampered}: its properties are recorded crashed")
            self.got = len(self.by_id)
            return
        if self.kill_reason == "timeout" and self.current is not None:
            prop = self.by_id[self.current]
            self.mine[prop.id] = _synthetic(prop, "timeout", stream.TIMEOUT_EXC, f"timed out after {prop.timeout:g} s")
            self.progress(f"[{len(self.results) + len(self.mine)}/{self.total}] {prop.id}: "
                          f"timeout after {prop.timeout:g} s")
        elif self.current is not None:
            prop = self.by_id[self.current]
            self.mine[prop.id] = _synthetic(prop, "crash", stream.CRASH_EXC,
                                            f"the pytest process ended ({code}) mid-property")
            self.progress(f"[{len(self.results) + len(self.mine)}/{self.total}] {prop.id}: crash ({code})")
        elif not self.ended:
            # Killed outside any property, or gone without the plugin's closing record
            # (os._exit, a crash after the last result): nothing it reported is trusted, and
            # what it never started is not retried.
            why = (f"the pytest process spent over {self.outside_limit:g} s outside any property"
                   if self.kill_reason == "hung" else f"the pytest process ended ({code}) without its closing record")
            for prop in self.by_id.values():
                if prop.id not in self.results:
                    self.mine[prop.id] = _synthetic(prop, "crash", stream.CRASH_EXC, why)
            self.progress(why)
        if not self.mine:
            tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
            self.progress(f"pytest produced no result ({code}): {' | '.join(tail)}")
        self.results.update(self.mine)
        self.got = len(self.mine)


def _user_kwargs(ws: Workspace) -> dict[str, Any]:
    if not ws.run_as:
        return {}
    uid, gid = ws.run_as
    return {"user": uid, "group": gid, "extra_groups": []}


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def environment_pins() -> dict[str, str]:
    """Versions and environment the runs were made under (recorded in ``runs.json``)."""
    import hypothesis
    import pytest

    return {**ENV_PINS, "python": sys.version.split()[0], "pytest": pytest.__version__,
            "hypothesis": hypothesis.__version__, "platform": sys.platform}
