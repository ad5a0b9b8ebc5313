"""How the candidate worker is fenced off, by isolation level (docs/design.md §8.2).

Part of the boundary package (standard library only): the oracle process starts workers with it, the
gate's own process asks it what the host can give.

Levels and methods, best first:

- ``sandbox`` with ``bwrap`` (bubblewrap, Debian package ``bubblewrap``): new user, PID, network,
  IPC, UTS and mount namespaces; uid 65534 where user namespaces are allowed (else root with every
  capability dropped); the whole file system read-only; the candidate tree and the fixtures
  read-only at their own paths; a private, size-capped ``/tmp``; the gate's scratch directory (the
  pack's property code, the ledger, the results stream, the evidence), the repository and ``$HOME``
  hidden behind empty tmpfs mounts; killed with its parent (``--die-with-parent``).
- ``sandbox`` with ``uid`` (root only, where namespaces are refused, e.g. a default Docker
  container): the worker runs as ``nobody``; the gate's process reaps and kills every descendant.
  Network and PID fences do not hold there, and the evidence says so.
- ``process``: a plain child process of the same user (limits and reaping still apply).
- ``none``: no worker; candidate code runs in the oracle process (catalog opt-in only).

Every method applies rlimits (address space, CPU time, file size, processes) in the child before
``exec``, a clean environment with no token, and ``PR_SET_PDEATHSIG`` so the worker dies with the
oracle process. A level the host cannot give is never silently lowered: :func:`plan` raises
:class:`Unavailable`, and the gate scores the property ``isolation_unavailable``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

FENCES = ("network", "pid", "filesystem", "uid", "limits")
NOBODY = 65534
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

DEFAULT_LIMITS = {
    "memory_bytes": 2 * 1024**3,  # RLIMIT_AS of the worker
    "file_bytes": 64 * 1024**2,  # RLIMIT_FSIZE: the largest file it may write
    "tmp_bytes": 256 * 1024**2,  # size of its private /tmp (bwrap only)
    "processes": 256,  # RLIMIT_NPROC
    "cpu_seconds": 3600,  # RLIMIT_CPU over the worker's life
}


class Unavailable(Exception):
    """The host cannot give the asked isolation level; ``str()`` names what is missing and the fix."""


@dataclass(frozen=True)
class Plan:
    """How to start one worker.

    Attributes:
        level: ``sandbox`` or ``process``.
        method: ``bwrap-userns``, ``bwrap-root``, ``uid`` or ``process``.
        argv: the command (the worker's own arguments are appended by the caller).
        env: the complete environment of the worker.
        preexec: run in the child before ``exec`` (rlimits, death signal, uid).
        expect: fence → whether this method claims it; the worker's own probe confirms each.
    """

    level: str
    method: str
    argv: tuple[str, ...]
    env: dict[str, str]
    preexec: Callable[[], None]
    expect: dict[str, bool] = field(default_factory=dict)


# A bytecode prefix under which nothing can exist or be created (a path below a character device).
NO_BYTECODE = "/dev/null/verdict-gate-no-bytecode"


def worker_env(tmp: str = "/tmp", bytecode: str | None = None) -> dict[str, str]:
    """The worker's environment: nothing inherited (no token, no ``PYTHON*`` of the caller).

    The worker never writes bytecode, and reads it only under ``PYTHONPYCACHEPREFIX``, never from a
    ``__pycache__`` beside a module (a patch could commit one that does not match its source):
    ``bytecode``, the oracle process's cache as a bubblewrap worker is shown it (:func:`bytecode_dirs`)
    or :data:`NO_BYTECODE` where the worker shares the host's ``/tmp``, else ``tmp/pycache``.
    """
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": tmp, "TMPDIR": tmp, "LC_ALL": "C.UTF-8",
            "TZ": "UTC", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1",
            "PYTHONPYCACHEPREFIX": bytecode or os.path.join(tmp, "pycache")}


def bytecode_dirs(cache: str | None) -> list[str]:
    """The parts of the oracle process's bytecode cache ``cache`` (its ``sys.pycache_prefix``) a
    bubblewrap worker gets, read-only: the bytecode of the interpreter's own modules and of the
    worker's code, which the oracle compiled from the same read-only sources. Without them each
    worker compiles the standard library afresh: 220 ms a start against 55 ms (docs/design.md §11).
    Nothing else of the cache is shown (it may hold bytecode of earlier packs' ``conftest.py``).
    ``[]`` when there is no cache."""
    if not cache or not os.path.isabs(cache):
        return []
    sources = [*interpreter_dirs(), os.path.dirname(os.path.abspath(__file__))]
    found = {os.path.join(_real(cache), src.lstrip("/")) for src in sources}
    return sorted(d for d in found if os.path.isdir(d))


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def set_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``)."""
    try:
        return _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def children(pid: int | None = None) -> list[int]:
    """Direct children of ``pid`` (default: this process), read from ``/proc``."""
    me = os.getpid() if pid is None else pid
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # field 4 is the parent pid; the command name (field 2) may hold spaces and parentheses
        rest = stat[stat.rfind(b")") + 2:].split()
        if len(rest) > 1 and int(rest[1]) == me:
            found.append(int(name))
    return found


def kill_descendants(keep: Sequence[int] = ()) -> int:
    """SIGKILL every child of this process not in ``keep`` (and reap it); returns how many.

    With :func:`set_subreaper` on, a daemon the candidate double-forked is such a child."""
    killed = 0
    for _round in range(20):
        victims = [pid for pid in children() if pid not in keep]
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        for pid in victims:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    return killed


def _preexec(limits: dict[str, int], uid: int | None) -> Callable[[], None]:
    import resource

    try:
        libc = _libc()  # loaded here: the child between fork and exec should do as little as it can
    except OSError:
        libc = None

    def apply() -> None:
        if libc is not None:
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        for name, key in (("RLIMIT_AS", "memory_bytes"), ("RLIMIT_FSIZE", "file_bytes"),
                          ("RLIMIT_CPU", "cpu_seconds"), ("RLIMIT_NPROC", "processes")):
            value = int(limits[key])
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(getattr(resource, name), (value, value))
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)

    return apply


_BWRAP_OK: dict[str, str] = {}  # method → "" when usable, else why not


def _bwrap_probe(bwrap: str, userns: bool) -> str:
    key = f"{bwrap}:{userns}"
    if key not in _BWRAP_OK:
        # The same mounts a worker gets (the interpreter bound back where a tmpfs covers it).
        cmd = [*bwrap_argv(bwrap, userns=userns, readonly=[], hidden=[], cwd="/", tmp_bytes=1 << 20),
               "--", sys.executable, "-S", "-c", "pass"]
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=30, env=worker_env(), stdin=subprocess.DEVNULL)
            why = "" if proc.returncode == 0 else (proc.stderr.decode(errors="replace").strip() or
                                                    f"exit {proc.returncode}")
        except (OSError, subprocess.SubprocessError) as exc:
            why = str(exc)
        _BWRAP_OK[key] = why
    return _BWRAP_OK[key]


def _nobody_can_run() -> str:
    if "uid" not in _BWRAP_OK:
        try:
            proc = subprocess.run([sys.executable, "-S", "-c", "pass"], capture_output=True, timeout=30,
                                  env=worker_env(), cwd="/", stdin=subprocess.DEVNULL,
                                  preexec_fn=_preexec(DEFAULT_LIMITS, NOBODY))
            why = "" if proc.returncode == 0 else (proc.stderr.decode(errors="replace").strip().splitlines()
                                                    or [f"exit {proc.returncode}"])[-1]
        except (OSError, subprocess.SubprocessError) as exc:
            why = str(exc)
        _BWRAP_OK["uid"] = why
    return _BWRAP_OK["uid"]


def _real(path: str) -> str:
    return os.path.realpath(path)


def interpreter_dirs() -> list[str]:
    """The interpreter's prefixes and site-packages: bound back read-only when a hidden dir holds them."""
    dirs = {_real(sys.prefix), _real(sys.base_prefix), _real(os.path.dirname(os.path.realpath(sys.executable)))}
    dirs |= {_real(p) for p in sys.path if p and os.path.isdir(p) and "site-packages" in p}
    return sorted(dirs)


def bwrap_argv(bwrap: str, *, userns: bool, readonly: Sequence[str], hidden: Sequence[str], cwd: str,
               tmp_bytes: int, bytecode: str | None = None) -> list[str]:
    """The bubblewrap command line (without the worker command after ``--``).

    Args:
        readonly: directories bound read-only at their own path after the hiding (the candidate
            tree, the fixtures).
        hidden: directories covered by an empty tmpfs (the scratch dir, the repository, ``$HOME``);
            the interpreter's own directories are bound back read-only when they are inside one.
        cwd: the worker's working directory (the candidate tree).
        tmp_bytes: the size of the private ``/tmp``.
        bytecode: the oracle process's bytecode cache: hidden, then :func:`bytecode_dirs` of it bound
            back read-only.
    """
    argv = [bwrap, "--unshare-all"]
    if userns:
        argv += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    argv += ["--cap-drop", "ALL", "--die-with-parent", "--new-session",
             "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
             "--size", str(int(tmp_bytes)), "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/dev/shm"]
    cached = bytecode_dirs(bytecode)
    hidden = [*hidden, *([bytecode] if cached and bytecode else [])]
    hide = sorted({_real(h) for h in hidden if h and os.path.isdir(h) and _real(h) not in ("/", "/usr", "/tmp")},
                  key=len)
    for path in hide:
        argv += ["--tmpfs", path]
    needed = [*interpreter_dirs(), os.path.dirname(os.path.abspath(__file__))]  # the worker's own code too
    # The interpreter and the worker's code are bound back when a hidden dir or a private tmpfs
    # (/tmp: a gate installed in a clone under /tmp) covers them.
    covered = [*hide, "/tmp", "/var/tmp", "/dev/shm"]
    rebind = [p for p in needed if any(p == h or p.startswith(h + "/") for h in covered)]
    for path in sorted({_real(p) for p in [*rebind, *readonly, *cached] if os.path.isdir(p)}, key=len):
        argv += ["--ro-bind", path, path]
    argv += ["--chdir", _real(cwd)]
    return argv


def plan(level: str, *, readonly: Sequence[str], hidden: Sequence[str], cwd: str,
         limits: dict[str, int] | None = None, bytecode: str | None = None) -> Plan:
    """How to start a worker at ``level`` on this host; ``bytecode``: the oracle process's bytecode
    cache, which a bubblewrap worker reads in part (:func:`bytecode_dirs`) and no other worker reads.

    Raises:
        Unavailable: ``sandbox`` where neither bubblewrap nor (as root) a separate uid works,
            naming what is missing and the fix; or an unknown level.
    """
    lim = {**DEFAULT_LIMITS, **(limits or {})}
    if level == "process":
        # Outside bubblewrap the worker shares the host's /tmp, and a `process` worker can write as the
        # gate's user: a prefix there, or the gate's own cache, would be bytecode a later worker (or
        # oracle process) loads from this candidate. So it reads none.
        return Plan("process", "process", (), worker_env(bytecode=NO_BYTECODE), _preexec(lim, None),
                    {"network": False, "pid": False, "filesystem": False, "uid": False, "limits": True})
    if level != "sandbox":
        raise Unavailable(f"no worker is started at isolation level {level!r}")
    # VERDICT_GATE_BWRAP: the bubblewrap executable to use ("" or a missing path: none).
    bwrap = os.environ.get("VERDICT_GATE_BWRAP", shutil.which("bwrap") or "")
    bwrap = bwrap if bwrap and os.access(bwrap, os.X_OK) else ""
    reasons = []
    if bwrap:
        for userns in (True, False):
            if not userns and os.geteuid() != 0:
                continue
            why = _bwrap_probe(bwrap, userns)
            if not why:
                argv = bwrap_argv(bwrap, userns=userns, readonly=readonly, hidden=hidden, cwd=cwd,
                                  tmp_bytes=lim["tmp_bytes"], bytecode=bytecode)
                shown = bytecode if bytecode_dirs(bytecode) else None
                return Plan("sandbox", "bwrap-userns" if userns else "bwrap-root", (*argv, "--"),
                            worker_env(bytecode=shown),
                            _preexec(lim, None), {f: True for f in FENCES})
            reasons.append(f"bwrap{' with a user namespace' if userns else ' as root'}: {why.splitlines()[-1]}")
    else:
        reasons.append("bwrap (bubblewrap) is not installed")
    if os.geteuid() == 0:
        why = _nobody_can_run()
        if not why:
            return Plan("sandbox", "uid", (), worker_env(bytecode=NO_BYTECODE), _preexec(lim, NOBODY),
                        {"network": False, "pid": False, "filesystem": True, "uid": True, "limits": True})
        reasons.append(f"uid {NOBODY} (nobody) cannot run {sys.executable}: {why}")
    raise Unavailable("isolation level sandbox is not available on this host: " + "; ".join(reasons)
                      + ". Fix: install bubblewrap (apt-get install bubblewrap) and allow user namespaces "
                      "(sysctl kernel.unprivileged_userns_clone=1), or run as root with verdict-gate installed "
                      "where uid 65534 can read it; or set `isolation: process` in the catalog for a candidate "
                      "you trust")


def describe_host() -> dict[str, Any]:
    """What this host can give, level by level (``verdict-gate doctor``)."""
    bwrap = os.environ.get("VERDICT_GATE_BWRAP", shutil.which("bwrap") or "")
    out: dict[str, Any] = {"uid": os.geteuid(), "bwrap": bwrap if bwrap and os.access(bwrap, os.X_OK) else None,
                           "levels": {}}
    for level in ("sandbox", "process"):
        try:
            p = plan(level, readonly=[], hidden=[], cwd="/")
            out["levels"][level] = {"available": True, "method": p.method, "fences": p.expect}
        except Unavailable as exc:
            out["levels"][level] = {"available": False, "why": str(exc)}
    out["levels"]["none"] = {"available": True, "method": "in-process", "fences": {f: False for f in FENCES}}
    return out
