"""How far the candidate worker is fenced off: the levels, the fences, the one typed policy, and how
a worker is started by each method (docs/design.md §8.2).

Part of the boundary package (standard library only): the gate's own process chooses the method
once per run (:func:`method`), the oracle process builds each worker's :class:`Policy` and starts it
(:func:`launch`), and the worker applies the policy to itself and proves it by trying
(``worker.confine``, :mod:`.probe`).

Levels (best first, :data:`LEVELS`) and their methods:

- ``sandbox``, method ``bwrap`` (bubblewrap, where user namespaces work, or as root): new user, PID,
  network, IPC, UTS and mount namespaces, every capability dropped; a root file system of the system
  directories only (nothing of ``/run``, ``/var/run`` or another socket directory, ``/home``,
  ``/root``, ``/tmp``); the interpreter, the candidate tree and the fixtures read-only at their own
  paths; a private, size-capped ``/tmp``; killed with its parent. Inside it the worker applies the
  in-process fences below as well (seccomp always, Landlock where the kernel has it).
- ``sandbox``, method ``landlock`` (where namespaces are refused: GitHub's Docker container action,
  Ubuntu's AppArmor restriction): no namespaces at all; as root a uid and gid of the worker's own
  (:func:`worker_uid`), then in the worker a Landlock domain (read and execute only the interpreter,
  the system libraries, the candidate tree and the fixtures; write only its private temp dir; TCP
  denied from ABI 4; signals and abstract sockets scoped from ABI 6) and a seccomp-bpf filter (no
  ``socket``, no ``io_uring``, no ``ptrace``/``process_vm_*``, no namespace, mount, bpf, keyring or
  perf calls; x32 and foreign ABIs killed), ``no_new_privs``, rlimits, and the gate a subreaper that
  kills every descendant. It needs the processes fence from somewhere: the worker's own uid (the
  gate is root) or Landlock's signal scoping (ABI 6, Linux 6.12); without either it is unavailable.
- ``process``: a plain child process of the same user (rlimits and descendant reaping still apply).
- ``none``: no worker; candidate code runs in the oracle process (catalog opt-in only).

Fences (:data:`FENCES`), each proven by the probes :data:`FENCE_PROBES` names before any candidate
code runs: ``network`` (no socket of any family, io_uring refused), ``filesystem`` (canaries in the
gate's scratch dir, the repository's ``.git`` and ``$HOME`` unreadable; nothing outside its temp dir
writable), ``processes`` (the oracle process can be neither signalled nor traced), ``limits`` (its
rlimits are set). A level the host cannot give is never silently lowered: :func:`method` raises
:class:`Unavailable`, and the gate scores the property ``isolation_unavailable`` (outcome
``incomplete``).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.util
import os
import py_compile
import shutil
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import landlock, seccomp

LEVELS = ("sandbox", "process", "none")  # best first; the catalog's `isolation` (its schema is kept equal)
FENCES = ("network", "filesystem", "processes", "limits")
METHODS = {"sandbox": ("bwrap", "landlock"), "process": ("process",), "none": ("in-process",)}
UNAVAILABLE = "unavailable"  # the method recorded for a level the host could not give
UNKNOWN = "unknown"  # the method recorded before the worker reported (a property that never started one)

# The probes that prove each fence (:mod:`.probe`; ``limits`` is checked from the worker's rlimits).
FENCE_PROBES = {
    "network": ("tcp", "udp", "raw", "netlink", "unix", "abstract_unix", "io_uring"),
    "filesystem": ("read", "write"),
    "processes": ("signal", "ptrace", "environ"),
    "limits": ("limits",),
}

# A worker's own uid and gid where the gate is root: one per worker (an oracle process and the
# generation of its worker, restarted after a crash), above systemd's container range (524288–1879048191,
# "Users, Groups, UIDs and GIDs on systemd Systems") and below 2^31, so no account, container mapping or
# file on the host has it (as IOI's isolate gives each box its own), and a worker's leftovers cannot
# touch the next worker.
UID_BASE = 0x70000000
UID_GENERATIONS = 16  # uids per oracle process, used round-robin by its restarted workers
UID_SPAN = (1 << 16) * UID_GENERATIONS

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

DEFAULT_LIMITS = {
    "memory_bytes": 2 * 1024**3,  # RLIMIT_AS of the worker
    "file_bytes": 64 * 1024**2,  # RLIMIT_FSIZE: the largest file it may write
    "tmp_bytes": 256 * 1024**2,  # size of its private /tmp (bwrap only)
    "processes": 256,  # RLIMIT_NPROC
    "cpu_seconds": 3600,  # RLIMIT_CPU over the worker's life
}

# Top-level directories of the root file system a bubblewrap worker sees (read-only); every other
# entry (run, var, tmp, home, root, srv, mnt, media, opt, the workspace …) stays out, so no socket
# directory and no user's files are reachable. Symbolic links among them (merged /usr) are kept.
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")
# What a Landlock worker reads besides the interpreter, its code, the tree and the fixtures: the
# shared libraries and their cache (exec and dlopen), the time zone data, and the devices Python
# and the standard library open.
# Never /proc: Landlock fences only ptrace-mode-attach access there (/proc/PID/mem), not a read of another
# process's /proc/PID/environ, which holds the oracle's environment.
SYSTEM_READ = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo", "/etc/ld.so.cache",
               "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/dev/urandom", "/dev/random",
               "/dev/zero")
SYSTEM_WRITE = ("/dev/null",)  # subprocess opens it read-write

# A bytecode prefix under which nothing can exist or be created (a path below a character device).
NO_BYTECODE = "/dev/null/verdict-gate-no-bytecode"
HERE = os.path.dirname(os.path.abspath(__file__))


class Unavailable(Exception):
    """The host cannot give the asked isolation level; ``str()`` names what is missing and the fix."""


@dataclass(frozen=True)
class Policy:
    """The one typed fence policy: everything one worker is allowed, and what it must prove.

    Attributes:
        level: ``sandbox`` or ``process``.
        method: ``bwrap``, ``landlock`` or ``process`` (:data:`METHODS`).
        claims: fence → whether this method claims it (the worker's probe must find each claimed one held).
        read: paths it may read and execute (Landlock); the interpreter, its code, the tree, the fixtures.
        write: paths it may write: its private temp dir (and ``/dev/null``).
        tmp: its private temp dir (``TMPDIR``, ``HOME``); ``/tmp`` inside bubblewrap.
        cwd: its working directory (the candidate tree).
        uid: its own uid and gid (the gate is root and the method is ``landlock``), else ``None``.
        userns: ``bwrap`` only: bubblewrap makes a user namespace (:func:`bwrap_userns`; ``None``: probe).
        landlock: apply a Landlock domain (``"required"``, ``"best-effort"`` inside bubblewrap, or ``""``).
        seccomp: install the seccomp filter (``"required"``, ``"best-effort"`` or ``""``).
        metadata: the filter denies changing files' modes, owners, times and extended attributes too
            (:data:`seccomp.METADATA`).
        limits: the rlimits and the size of a private ``/tmp`` (:data:`DEFAULT_LIMITS`' keys).
        probes: the forbidden acts to try before any candidate code: label → ``[probe name, arguments]``
            (:mod:`.probe`; the rlimits are always checked, as ``limits``).
    """

    level: str
    method: str
    claims: Mapping[str, bool]
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    tmp: str = "/tmp"
    cwd: str = "/"
    uid: int | None = None
    userns: bool | None = None
    landlock: str = ""
    seccomp: str = ""
    metadata: bool = False
    limits: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_LIMITS))
    probes: Mapping[str, Sequence[Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The policy as the worker receives it in its ``hello`` (with ``fences``: each fence's probes, so
        the worker need not import this module)."""
        return {"level": self.level, "method": self.method, "claims": dict(self.claims),
                "fences": {f: list(names) for f, names in FENCE_PROBES.items()}, "read": list(self.read),
                "write": list(self.write), "tmp": self.tmp, "cwd": self.cwd, "uid": self.uid,
                "landlock": self.landlock, "seccomp": self.seccomp, "metadata": self.metadata,
                "limits": dict(self.limits),
                "probes": {label: [name, list(args)] for label, (name, args) in self.probes.items()}}


@dataclass(frozen=True)
class Launch:
    """How to start one worker: ``argv`` (the worker's own command is appended by the caller), its whole
    environment, what runs in the child before ``exec``, its cwd and whether it gets its own session."""

    policy: Policy
    argv: tuple[str, ...]
    env: dict[str, str]
    preexec: Callable[[], None]
    cwd: str
    new_session: bool


def claims_of(method: str) -> dict[str, bool]:
    """The fences a method claims (every one for the ``sandbox`` methods, only ``limits`` for ``process``)."""
    if method in METHODS["sandbox"]:
        return {f: True for f in FENCES}
    return {f: f == "limits" and method == "process" for f in FENCES}


def worker_uid(pid: int | None = None, generation: int = 0) -> int:
    """The uid (and gid) of the ``generation``-th worker of oracle process ``pid`` (default this one):
    workers running at once, and the workers one oracle process starts one after another, differ, so
    none can signal, trace or re-limit another."""
    slot = (os.getpid() if pid is None else pid) % (1 << 16)
    return UID_BASE + slot * UID_GENERATIONS + generation % UID_GENERATIONS


def worker_uids(pid: int) -> list[int]:
    """Every uid a worker of oracle process ``pid`` may have run as."""
    return [worker_uid(pid, g) for g in range(UID_GENERATIONS)]


# --- the environment -----------------------------------------------------------------------------------


def worker_env(tmp: str = "/tmp", bytecode: str | None = None) -> dict[str, str]:
    """The worker's environment: nothing inherited (no token, no ``PYTHON*`` of the caller).

    The worker never writes bytecode, and reads it only under ``PYTHONPYCACHEPREFIX``, never from a
    ``__pycache__`` beside a module (a patch could commit one that does not match its source):
    ``bytecode``, the oracle process's cache as a fenced worker is shown it (:func:`bytecode_dirs`,
    read-only), or :data:`NO_BYTECODE` for a worker that could write where a later one reads.
    """
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": tmp, "TMPDIR": tmp, "LC_ALL": "C.UTF-8",
            "TZ": "UTC", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1",
            "PYTHONPYCACHEPREFIX": bytecode or NO_BYTECODE}


def _real(path: str) -> str:
    return os.path.realpath(path)


@functools.cache
def _interpreter_dirs() -> tuple[str, ...]:
    return tuple(_find_interpreter_dirs())


def interpreter_dirs() -> list[str]:
    """The interpreter's prefixes, its binary's directory, its standard library and its site-packages
    (found once per process: they do not move)."""
    return list(_interpreter_dirs())


def _find_interpreter_dirs() -> list[str]:
    dirs = {_real(sys.prefix), _real(sys.base_prefix), _real(os.path.dirname(_real(sys.executable)))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(KeyError):
            dirs.add(_real(sysconfig.get_paths()[key]))
    dirs |= {_real(p) for p in sys.path if p and os.path.isdir(p) and "site-packages" in p}
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir and os.path.isdir(libdir):
        dirs.add(_real(libdir))
    return sorted(d for d in dirs if os.path.isdir(d))


def bytecode_dirs(cache: str | None) -> list[str]:
    """The parts of the oracle process's bytecode cache ``cache`` (its ``sys.pycache_prefix``) a fenced
    worker reads, read-only: the bytecode of the interpreter's own modules and of the worker's code,
    which the oracle compiled from the same read-only sources. Without them each worker compiles the
    standard library afresh: 220 ms a start against 55 ms (docs/design.md §11). Nothing else of the
    cache is shown (it may hold bytecode of earlier packs' ``conftest.py``). ``[]`` when there is no cache."""
    if not cache or not os.path.isabs(cache):
        return []
    sources = [*interpreter_dirs(), HERE]
    found = {os.path.join(_real(cache), src.lstrip("/")) for src in sources}
    return sorted(d for d in found if os.path.isdir(d))


# --- processes -----------------------------------------------------------------------------------------


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def set_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``)."""
    try:
        return _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _processes() -> dict[int, tuple[int, str]]:
    """pid → (parent pid, state letter) of every process, read from ``/proc/PID/stat`` (proc(5));
    ``{}`` where ``/proc`` cannot be read."""
    found: dict[int, tuple[int, str]] = {}
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
        rest = stat[stat.rfind(b")") + 2:].split()  # the name (field 2) may hold spaces and ')'
        if len(rest) > 1:
            found[int(name)] = (int(rest[1]), rest[0].decode("ascii", "replace"))
    return found


def children(pid: int | None = None) -> list[int]:
    """Direct children of ``pid`` (default: this process), read from ``/proc``."""
    me = os.getpid() if pid is None else pid
    return sorted(p for p, (parent, _state) in _processes().items() if parent == me)


def descendants(keep: Sequence[int] = (), table: dict[int, tuple[int, str]] | None = None) -> list[int]:
    """Every descendant of this process, except the processes of ``keep`` and their subtrees."""
    below: dict[int, list[int]] = {}
    for pid, (parent, _state) in (table if table is not None else _processes()).items():
        below.setdefault(parent, []).append(pid)
    out: list[int] = []
    todo = [p for p in below.get(os.getpid(), []) if p not in keep]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += [p for p in below.get(pid, []) if p not in keep]
    return out


KILL_ROUNDS = 200  # a kill racing a fork chain can leave a level per round: many rounds, each quick


def kill_descendants(keep: Sequence[int] = ()) -> int:
    """SIGKILL every descendant of this process outside the subtrees of ``keep``, and reap its own
    children among them, round after round until none is left; returns how many signals were sent.

    The whole tree each round, not only the children: a chain of processes each waiting on the next (or
    a fork storm within its RLIMIT_NPROC) dies at once, and with :func:`set_subreaper` on an orphan is
    this process's child again, reaped in a later round."""
    killed = 0
    me = os.getpid()
    for _round in range(KILL_ROUNDS):
        table = _processes()
        tree = descendants(keep, table)
        alive = [p for p in tree if table[p][1] != "Z"]
        mine = [p for p in tree if table[p][0] == me]
        if not alive and not mine:
            break
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        for pid in mine:  # dead now, or about to be: waiting reaps them
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    return killed


def kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` (as root): a child takes that uid and sends ``kill(-1)``, which
    the kernel delivers to every process it may signal at once, so no fork escapes it. No-op when not root."""
    if os.geteuid() != 0:
        return
    pid = os.fork()
    if pid == 0:  # the child: only syscalls, then _exit (the parent may have threads)
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        os._exit(0)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _preexec(limits: Mapping[str, int], uid: int | None) -> Callable[[], None]:
    import resource

    try:
        libc = _libc()  # loaded here: the child between fork and exec should do as little as it can
    except OSError:
        libc = None

    def apply() -> None:
        for name, key in (("RLIMIT_AS", "memory_bytes"), ("RLIMIT_FSIZE", "file_bytes"),
                          ("RLIMIT_CPU", "cpu_seconds"), ("RLIMIT_NPROC", "processes")):
            value = int(limits[key])
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(getattr(resource, name), (value, value))
        if uid is not None:  # setuid from root clears every capability as well
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        if libc is not None:  # after setuid, which clears the death signal
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return apply


# --- choosing the method (once per process) ---------------------------------------------------------------

_PROBED: dict[str, str] = {}  # key → "" when usable, else why not


def _run(cmd: Sequence[str], **kwargs: Any) -> str:
    """``""`` when ``cmd`` exits 0, else the last line it printed (or its exit code, or the error)."""
    try:
        proc = subprocess.run(list(cmd), capture_output=True, timeout=30, stdin=subprocess.DEVNULL, **kwargs)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if proc.returncode == 0:
        return ""
    lines = proc.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"exit {proc.returncode}"


def bwrap_path() -> str:
    """The bubblewrap executable: ``$VERDICT_GATE_BWRAP`` ("" or a missing path: none), else ``bwrap`` on PATH."""
    path = os.environ.get("VERDICT_GATE_BWRAP", shutil.which("bwrap") or "")
    return path if path and os.access(path, os.X_OK) else ""


def _bwrap_works(bwrap: str, userns: bool) -> str:
    key = f"bwrap:{bwrap}:{userns}"
    if key not in _PROBED:
        # The same mounts a worker gets (the interpreter bound back where a tmpfs covers it).
        cmd = [*bwrap_argv(bwrap, userns=userns, readonly=[], cwd="/", tmp_bytes=1 << 20),
               "--", sys.executable, "-S", "-c", "pass"]
        _PROBED[key] = _run(cmd, env=worker_env())
    return _PROBED[key]


def _uid_can_run(uid: int) -> str:
    key = f"uid:{uid}"
    if key not in _PROBED:
        _PROBED[key] = _run([sys.executable, "-S", "-c", "pass"], env=worker_env(), cwd="/",
                            preexec_fn=_preexec(DEFAULT_LIMITS, uid))
    return _PROBED[key]


def own_uid_works() -> bool:
    """Whether a worker here runs as a uid of its own: the gate is root and that uid can run the gate's
    interpreter (probed once per process). The gate decides it once and hands it to the oracle processes."""
    return os.geteuid() == 0 and not _uid_can_run(worker_uid())


def _landlock_works() -> str:
    """Why the ``landlock`` method cannot fence a worker here (``""``: it can)."""
    why = landlock.available() or seccomp.available()
    if why:
        return why
    if os.geteuid() == 0:
        uid = worker_uid()
        failed = _uid_can_run(uid)
        return (f"uid {uid} (the worker's own) cannot run {sys.executable}: {failed}; fix: install verdict-gate "
                "where other users can read it (a virtualenv of /usr/bin/python3 outside /root)") if failed else ""
    if landlock.abi() < 6:
        return (f"as uid {os.geteuid()} the worker would share the gate's uid, and this kernel's Landlock (ABI "
                f"{landlock.abi()}) cannot scope signals (ABI 6, Linux 6.12): the processes fence does not hold; "
                "fix: allow user namespaces for bubblewrap, run the gate as root, or use Linux 6.12 or newer")
    return ""


def method(level: str) -> str:
    """The method that gives ``level`` on this host (probed once per process, then cached).

    Raises:
        Unavailable: ``sandbox`` where neither bubblewrap nor Landlock with seccomp can fence a worker,
            naming what is missing and the fix; or an unknown level.
    """
    if level in ("process", "none"):
        return METHODS[level][0]
    if level != "sandbox":
        raise Unavailable(f"no worker is started at isolation level {level!r} (levels: {', '.join(LEVELS)})")
    reasons = []
    bwrap = bwrap_path()
    if bwrap:
        for userns in (True, False):
            if not userns and os.geteuid() != 0:
                continue
            why = _bwrap_works(bwrap, userns)
            if not why:
                return "bwrap"
            reasons.append(f"bwrap{' with a user namespace' if userns else ' as root'}: {why}")
    else:
        reasons.append("bwrap (bubblewrap) is not installed")
    why = _landlock_works()
    if not why:
        return "landlock"
    reasons.append(f"landlock: {why}")
    raise Unavailable("isolation level sandbox is not available on this host: " + "; ".join(reasons)
                      + ". Fix: install bubblewrap (apt-get install bubblewrap) and allow user namespaces, or give "
                      "the worker Landlock and seccomp (Linux 5.13 or newer with Landlock enabled); or set "
                      "`isolation: process` in the catalog for a candidate you trust. See verdict-gate doctor")


def bwrap_userns() -> bool:
    """Whether bubblewrap makes a user namespace here (probed once per process); as root without one it
    runs as root with every capability dropped. The gate decides it once and hands it to the oracle
    processes in the run spec, which then start workers without probing again."""
    bwrap = bwrap_path()
    return bool(bwrap) and not _bwrap_works(bwrap, True)


# --- starting a worker ----------------------------------------------------------------------------------


def bwrap_argv(bwrap: str, *, userns: bool, readonly: Sequence[str], cwd: str, tmp_bytes: int,
               bytecode: str | None = None) -> list[str]:
    """The bubblewrap command line (without the worker command after ``--``).

    The root file system holds only :data:`SYSTEM_DIRS` (read-only; links kept), so nothing of ``/run``,
    ``/var`` or another socket directory, no user's home, the gate's scratch dir or the repository is
    there; the interpreter's directories, the worker's code, ``readonly`` (the candidate tree, the
    fixtures) and the :func:`bytecode_dirs` of ``bytecode`` are bound read-only at their own paths.

    Args:
        readonly: directories bound read-only at their own path.
        cwd: the worker's working directory (the candidate tree).
        tmp_bytes: the size of the private ``/tmp``.
        bytecode: the oracle process's bytecode cache (only its :func:`bytecode_dirs` are shown).
    """
    argv = [bwrap, "--unshare-all"]
    if userns:
        argv += ["--unshare-user", "--uid", "65534", "--gid", "65534"]
    argv += ["--cap-drop", "ALL", "--die-with-parent", "--new-session"]
    for name in sorted(os.listdir("/")):
        path = "/" + name
        if name not in SYSTEM_DIRS:
            continue
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    argv += ["--dev", "/dev", "--proc", "/proc", "--size", str(int(tmp_bytes)), "--tmpfs", "/tmp"]
    system = tuple("/" + d for d in SYSTEM_DIRS)
    binds = [*interpreter_dirs(), HERE, *readonly, *bytecode_dirs(bytecode)]
    for path in sorted({_real(p) for p in binds if os.path.isdir(p)}, key=len):
        if not any(path == s or path.startswith(s + "/") for s in system):  # already there
            argv += ["--ro-bind", path, path]
    argv += ["--chdir", _real(cwd)]
    return argv


def landlock_read(readonly: Sequence[str], bytecode: str | None) -> tuple[str, ...]:
    """What a Landlock worker may read and execute: the interpreter, the worker's code, ``readonly``
    (the candidate tree, the fixtures, the candidate's python_path), the :func:`bytecode_dirs` of
    ``bytecode`` and :data:`SYSTEM_READ`."""
    # Not sys.path: the oracle process's holds the pack's own directories (pytest's rootdir insertions).
    paths = [*interpreter_dirs(), HERE, *readonly, *bytecode_dirs(bytecode), *SYSTEM_READ]
    return tuple(sorted({_real(p) for p in paths if os.path.exists(p)}))


def policy(level: str, method_name: str, *, readonly: Sequence[str], tmp: str, cwd: str,
           limits: Mapping[str, int] | None = None, bytecode: str | None = None,
           probes: Mapping[str, Sequence[Any]] | None = None, userns: bool | None = None,
           generation: int = 0, own_uid: bool | None = None) -> Policy:
    """The :class:`Policy` of one worker at ``level`` by ``method_name`` (see :func:`method`).

    Args:
        readonly: what it reads besides the interpreter (the candidate tree, the fixtures, python_path).
        tmp: its private temp dir (made by the caller; a Landlock worker writes only there).
        cwd: its working directory (the candidate tree).
        limits: overrides of :data:`DEFAULT_LIMITS` (the catalog's ``limits``).
        bytecode: the oracle process's bytecode cache, of which fenced workers read the interpreter's part.
        probes: the forbidden acts to try (label → ``[probe name, arguments]``); none for ``process``.
        userns: for ``bwrap``, whether it makes a user namespace (:func:`bwrap_userns`; ``None``: probe).
        generation: which worker of this oracle process it is (its uid, :func:`worker_uid`).
        own_uid: it may run as a uid of its own (:func:`own_uid_works`; ``None``: probe): as root the
            ``landlock`` method needs one, and ``bwrap`` with a user namespace takes one (so its mapped root
            is nobody outside).

    A worker whose identity outside owns files it must leave alone (the gate's own uid, or root: bubblewrap
    as root maps its user to root) gets :data:`seccomp.METADATA` denied as well: Landlock does not fence
    modes, owners, times or extended attributes.
    """
    lim = {**DEFAULT_LIMITS, **(limits or {})}
    root = os.geteuid() == 0
    own = own_uid_works() if own_uid is None else own_uid
    if method_name == "bwrap":
        ns = bwrap_userns() if userns is None else userns
        uid = worker_uid(generation=generation) if root and own and ns else None
        return Policy(level, method_name, claims_of(method_name), read=landlock_read(readonly, bytecode),
                      write=("/tmp", *SYSTEM_WRITE), tmp="/tmp", cwd=cwd, uid=uid, userns=ns or not root,
                      landlock="best-effort", seccomp="best-effort", metadata=uid is None, limits=lim,
                      probes=dict(probes or {}))
    if method_name == "landlock":
        uid = worker_uid(generation=generation) if root else None
        return Policy(level, method_name, claims_of(method_name), read=landlock_read(readonly, bytecode),
                      write=(tmp, *SYSTEM_WRITE), tmp=tmp, cwd=cwd, uid=uid, landlock="required",
                      seccomp="required", metadata=uid is None, limits=lim, probes=dict(probes or {}))
    if method_name == "process":
        return Policy(level, method_name, claims_of(method_name), tmp=tmp, cwd=cwd, limits=lim)
    raise Unavailable(f"no worker is started by method {method_name!r} at level {level!r}")


# What the worker imports that the oracle process does not: compiled into the oracle's bytecode cache once
# (:func:`warm_bytecode`), or every fenced worker, which reads that cache but never writes it, compiles them
# from source at each start (worker.py alone is about 25 ms of it).
WORKER_MODULES = ("worker", "codec", "probe", "sources", "landlock", "seccomp")
WORKER_STDLIB = ("pickle", "_compat_pickle")
_WARMED: set[str] = set()


def warm_bytecode(cache: str | None) -> None:
    """Write the bytecode of :data:`WORKER_MODULES` and :data:`WORKER_STDLIB` into ``cache``, this process's own
    ``sys.pycache_prefix``, once per process. The sources are the gate's and the interpreter's, read-only to
    candidate code; nothing is written when this process does not write bytecode. Errors are ignored: the
    worker then compiles, as before."""
    if not cache or cache in _WARMED or sys.pycache_prefix != cache or sys.dont_write_bytecode:
        return
    _WARMED.add(cache)
    sources = [os.path.join(HERE, f"{name}.py") for name in WORKER_MODULES]
    for name in WORKER_STDLIB:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            sources.append(spec.origin)
    for src in sources:
        try:
            target = importlib.util.cache_from_source(src)
            if not _fresh(target, src):
                py_compile.compile(src, cfile=target, doraise=True)
        except (OSError, ValueError, py_compile.PyCompileError):
            continue


def _fresh(pyc: str, src: str) -> bool:
    """Whether ``pyc`` is the timestamp-checked bytecode of ``src`` as it is now (PEP 552's header: flags 0,
    then the source's mtime and size, as the import system checks them)."""
    try:
        with open(pyc, "rb") as fh:
            head = fh.read(16)
        st = os.stat(src)
    except OSError:
        return False
    return (len(head) == 16 and head[:4] == importlib.util.MAGIC_NUMBER and head[4:8] == bytes(4)
            and int.from_bytes(head[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(head[12:16], "little") == st.st_size & 0xFFFFFFFF)


def launch(pol: Policy, *, bytecode: str | None = None) -> Launch:
    """How to start the worker of ``pol`` (no probing: the method was chosen by :func:`method`)."""
    preexec = _preexec(pol.limits, pol.uid)
    if pol.method != "process":
        warm_bytecode(bytecode)
    if pol.method == "bwrap":
        bwrap = bwrap_path()
        if not bwrap:
            raise Unavailable("bwrap (bubblewrap) is no longer installed")
        userns = pol.userns if pol.userns is not None else (bwrap_userns() or os.geteuid() != 0)
        # With a uid of its own, bubblewrap itself runs as that uid (the preexec), unprivileged.
        argv = bwrap_argv(bwrap, userns=userns, readonly=[p for p in pol.read if os.path.isdir(p)], cwd=pol.cwd,
                          tmp_bytes=pol.limits["tmp_bytes"], bytecode=bytecode)
        return Launch(pol, (*argv, "--"), worker_env("/tmp", bytecode if bytecode_dirs(bytecode) else None),
                      preexec, pol.cwd, False)
    if pol.method == "landlock":
        # Read-only under Landlock, so a worker can never plant bytecode a later one loads.
        shown = bytecode if bytecode_dirs(bytecode) else None
        return Launch(pol, (), worker_env(pol.tmp, shown), preexec, pol.cwd, True)
    # A `process` worker can write as the gate's user: a bytecode prefix it reads could be poisoned.
    return Launch(pol, (), worker_env(pol.tmp, NO_BYTECODE), preexec, pol.cwd, True)


def describe_host() -> dict[str, Any]:
    """What this host can give, level by level, without starting a worker (``verdict-gate doctor``
    starts one too, to prove the fences)."""
    out: dict[str, Any] = {"uid": os.geteuid(), "bwrap": bwrap_path() or None,
                           "landlock_abi": landlock.abi() if not landlock.available() else None,
                           "seccomp": not seccomp.available(), "levels": {}}
    for level in LEVELS:
        try:
            name = method(level)
            out["levels"][level] = {"available": True, "method": name, "claims": claims_of(name)}
        except Unavailable as exc:
            out["levels"][level] = {"available": False, "why": str(exc)}
    return out
