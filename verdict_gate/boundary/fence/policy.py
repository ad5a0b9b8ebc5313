"""The one typed fence policy: the isolation levels, the fences, the methods, and everything one worker is
allowed and must prove (docs/design.md §8.2).

One :class:`Policy` is handed alike to the bubblewrap argv builder (:mod:`.bwrap`), the launcher
(:mod:`.launch`), the applier in the worker (:mod:`.apply`) and the probes (:mod:`.probe`), as Codex
CLI's Linux sandbox hands one policy to its builder and its applier. The worker receives it as JSON in its
``hello`` (:meth:`Policy.to_json`, :meth:`Policy.from_json`), so this module stays light: the worker
imports it on every start.

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
rlimits are set). A level the host cannot give is never silently lowered: :func:`.host.method` raises
:class:`.errors.Unavailable`, and the gate scores the property ``isolation_unavailable`` (outcome
``incomplete``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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

DEFAULT_LIMITS = {
    "memory_bytes": 2 * 1024**3,  # RLIMIT_AS of the worker
    "file_bytes": 64 * 1024**2,  # RLIMIT_FSIZE: the largest file it may write
    "tmp_bytes": 256 * 1024**2,  # size of its private /tmp (bwrap only)
    "processes": 256,  # RLIMIT_NPROC
    "cpu_seconds": 3600,  # RLIMIT_CPU over the worker's life
}


@dataclass(frozen=True)
class Policy:
    """Everything one worker is allowed, and what it must prove.

    Attributes:
        level: ``sandbox`` or ``process``.
        method: ``bwrap``, ``landlock`` or ``process`` (:data:`METHODS`).
        claims: fence → whether this method claims it (the worker's probe must find each claimed one held).
        read: paths it may read and execute (Landlock); the interpreter, its code, the tree, the fixtures.
        write: paths it may write: its private temp dir (and ``/dev/null``), and ``shared``.
        shared: directories it reads and writes at their own path, as the oracle process does: the one that
            holds pytest's base temporary directory (``tmp_path``) and the ``TMPDIR`` of both processes, which a
            test and the candidate's code share as in one process (docs/design.md §8.1, "Files").
        tmpdir: its ``TMPDIR``, the oracle process's too (inside ``shared``); ``""``: ``tmp``.
        tmp: its private temp dir (``TMPDIR``, ``HOME``); ``/tmp`` inside bubblewrap.
        cwd: its working directory (the candidate tree).
        uid: its own uid and gid (the gate is root and the method is ``landlock``), else ``None``.
        userns: ``bwrap`` only: bubblewrap makes a user namespace (:func:`.host.bwrap_userns`; ``None``: probe).
        landlock: apply a Landlock domain (``"required"``, ``"best-effort"`` inside bubblewrap, or ``""``).
        seccomp: install the seccomp filter (``"required"``, ``"best-effort"`` or ``""``).
        metadata: the filter denies changing files' modes, owners, times and extended attributes too
            (:data:`.seccomp.METADATA`).
        limits: the rlimits and the size of a private ``/tmp`` (:data:`DEFAULT_LIMITS`' keys).
        probes: the forbidden acts to try before any candidate code: label → ``[probe name, arguments]``
            (:mod:`.probe`; the rlimits are always checked, as ``limits``).
        fences: fence → the probes that prove it (:data:`FENCE_PROBES`).
    """

    level: str
    method: str
    claims: Mapping[str, bool]
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    tmpdir: str = ""
    tmp: str = "/tmp"
    cwd: str = "/"
    uid: int | None = None
    userns: bool | None = None
    landlock: str = ""
    seccomp: str = ""
    metadata: bool = False
    limits: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_LIMITS))
    probes: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    fences: Mapping[str, Sequence[str]] = field(default_factory=lambda: dict(FENCE_PROBES))

    def to_json(self) -> dict[str, Any]:
        """The policy as the worker receives it in its ``hello``."""
        return {"level": self.level, "method": self.method, "claims": dict(self.claims),
                "fences": {f: list(names) for f, names in self.fences.items()}, "read": list(self.read),
                "write": list(self.write), "shared": list(self.shared), "tmpdir": self.tmpdir, "tmp": self.tmp,
                "cwd": self.cwd, "uid": self.uid,
                "userns": self.userns, "landlock": self.landlock, "seccomp": self.seccomp,
                "metadata": self.metadata, "limits": dict(self.limits),
                "probes": {label: [name, list(args)] for label, (name, args) in self.probes.items()}}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Policy:
        """The policy of :meth:`to_json`, as the worker reads it from its ``hello``. A field it lacks takes its
        default (an empty ``{}``: nothing applied, nothing tried, no fence claimed).

        Raises:
            TypeError, ValueError: a field of the wrong shape.
        """
        uid, userns = doc.get("uid"), doc.get("userns")
        return cls(level=str(doc.get("level", "")), method=str(doc.get("method", "")),
                   claims={str(f): v is True for f, v in (doc.get("claims") or {}).items()},
                   read=tuple(str(p) for p in doc.get("read") or ()),
                   write=tuple(str(p) for p in doc.get("write") or ()),
                   shared=tuple(str(p) for p in doc.get("shared") or ()), tmpdir=str(doc.get("tmpdir") or ""),
                   tmp=str(doc.get("tmp", "/tmp")), cwd=str(doc.get("cwd", "/")),
                   uid=None if uid is None else int(uid), userns=None if userns is None else bool(userns),
                   landlock=str(doc.get("landlock") or ""), seccomp=str(doc.get("seccomp") or ""),
                   metadata=bool(doc.get("metadata")),
                   limits={str(k): int(v) for k, v in (doc.get("limits") or {}).items()},
                   probes={str(label): [str(name), list(args)] for label, (name, args)
                           in (doc.get("probes") or {}).items()},
                   fences={str(f): tuple(str(n) for n in names) for f, names in (doc.get("fences") or {}).items()})


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
