"""Run properties with pytest in a subprocess (DESIGN.md §8). An edge: processes, files, clock.

One pytest process runs every property it is given, in catalog order, with the gate's
plugin (``verdict_gate_plugin``) writing a ``start`` and a ``result`` line per property.
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

from gate.catalog import Property

POLL_S = 0.05
TIMEOUT_EXC = "verdict_gate.Timeout"
CRASH_EXC = "verdict_gate.Crash"
ENV_PINS = {"PYTHONHASHSEED": "0", "TZ": "UTC", "LC_ALL": "C.UTF-8"}

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Workspace:
    """Where one run happens.

    Attributes:
        pack_dir: the materialised, verified pack (pytest rootdir).
        tree_dir: the candidate work tree or the base worktree (cwd of the run).
        python_path: absolute directories put first on ``sys.path``.
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


_SANDBOX: dict[str, tuple[int, int] | None] = {}


def sandbox_user() -> tuple[int, int] | None:
    """The ``(uid, gid)`` property processes run as when the gate runs as root, else ``None``.

    As root (a Docker container action runs as root), candidate code in the property process
    could otherwise read the gate's environment through ``/proc`` (the GitHub token), write
    the runner's files and ignore the fixtures' read-only modes. So the process drops to the
    user named by ``$VERDICT_GATE_RUN_AS`` (default ``nobody``; ``root`` keeps root). A probe
    (``python -c "import pytest"`` as that user) checks the interpreter is usable by it; if
    not, the gate keeps root and says so on stderr rather than failing every property.
    """
    if os.geteuid() != 0:
        return None
    name = os.environ.get("VERDICT_GATE_RUN_AS", "nobody")
    if name in _SANDBOX:
        return _SANDBOX[name]
    import pwd

    result: tuple[int, int] | None = None
    if name != "root":
        try:
            entry = pwd.getpwnam(name)
            probe = subprocess.run([sys.executable, "-P", "-s", "-c", "import pytest, hypothesis"],
                                   user=entry.pw_uid, group=entry.pw_gid, extra_groups=[], cwd="/",
                                   env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                                   capture_output=True, timeout=60)
            if probe.returncode == 0:
                result = (entry.pw_uid, entry.pw_gid)
            else:
                print(f"verdict-gate: warning: {sys.executable} is not usable as {name!r}; properties run as root",
                      file=sys.stderr)
        except (KeyError, OSError, subprocess.SubprocessError) as exc:
            print(f"verdict-gate: warning: cannot run properties as {name!r} ({exc}); they run as root",
                  file=sys.stderr)
    _SANDBOX[name] = result
    return result


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
    time (about 1 s here). Falls back to ``scratch`` when that directory cannot be created.
    """
    root = os.environ.get("VERDICT_GATE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "verdict-gate")
    # A dropped user gets a cache of its own: it cannot write root's, and root never
    # imports bytecode a property process could have written.
    path = Path(root) / (f"pycache-{run_as[0]}" if run_as else "pycache")
    try:
        path.mkdir(parents=True, exist_ok=True)
        if run_as:
            os.chown(path, *run_as)
            os.chmod(Path(root), os.stat(root).st_mode | 0o055)
    except OSError:
        return scratch.parent / "pycache"
    return path


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
    return {"event": "result", "id": prop.id, "status": status, "seed": prop.seed if prop.kind == "property" else None,
            "hypothesis": False, "trials": None, "hits": None, "items": None, "duration_s": None,
            "fixture_mutated": False, "node": prop.selector, "exc_type": exc_type, "message": message,
            "counterexample": None, "traceback": []}


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
    got = 0
    current: str | None = None
    started_at = 0.0
    buffer = ""
    try:
        with open(results_file, encoding="utf-8") as feed:
            while True:
                exited = proc.poll() is not None
                buffer += feed.read()
                *lines, buffer = buffer.split("\n")
                for line in lines:
                    record = json.loads(line)
                    pid = record["id"]
                    if pid not in by_id:
                        continue  # not a property of this process: nothing to attribute it to
                    if record["event"] == "uncollected":
                        # The catalog names a test the pack's file does not have (a node typo).
                        if pid not in results:
                            results[pid] = record
                            got += 1
                            progress(f"[{len(results)}/{total}] {pid}: no test collected for {by_id[pid].selector}")
                    elif record["event"] == "start":
                        current, started_at = pid, time.monotonic()
                        progress(f"[{len(results) + 1}/{total}] {pid} …")
                    elif pid in results or pid != current:
                        # A second result, or one for a property that is not running: something
                        # in the process wrote to the results file. Trust none of it.
                        results[pid] = _synthetic(by_id[pid], "crash", CRASH_EXC,
                                                  "the results stream was tampered with (unexpected record)")
                        current = None
                    elif pid in by_id:
                        results[pid] = record
                        got += 1
                        current = None
                        progress(f"[{len(results)}/{total}] {pid}: {record['status']}"
                                 + (f" ({record['duration_s']:.2f} s)" if record.get("duration_s") else ""))
                if current is not None and time.monotonic() - started_at > by_id[current].timeout:
                    _kill(proc)
                    prop = by_id[current]
                    results[current] = _synthetic(prop, "timeout", TIMEOUT_EXC, f"timed out after {prop.timeout:g} s")
                    progress(f"[{len(results)}/{total}] {current}: timeout after {prop.timeout:g} s")
                    return got + 1
                if exited:
                    break
                time.sleep(POLL_S)
        if got == 0 and current is None:
            tail = (ws.scratch / f"pytest-{attempt}.log").read_text(errors="replace").strip().splitlines()[-5:]
            progress("pytest produced no result (exit code {}): {}".format(proc.returncode, " | ".join(tail)))
        if current is not None:
            prop = by_id[current]
            results[current] = _synthetic(prop, "crash", CRASH_EXC,
                                          f"the pytest process ended ({_signal_name(proc.returncode)}) mid-property")
            progress(f"[{len(results)}/{total}] {current}: crash ({_signal_name(proc.returncode)})")
            got += 1
        return got
    finally:
        if proc.poll() is None:
            _kill(proc)
        log.close()


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
