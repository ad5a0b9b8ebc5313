"""The gate's side of a worker's processes: every process the candidate started dies with its worker
(docs/design.md §8.4). The gate is the subreaper of its descendants; after each oracle process it kills
what is left, by the process tree and, as root, by a worker's own uid."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Sequence

from .libc import libc

PR_SET_CHILD_SUBREAPER = 36


def set_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``)."""
    try:
        return libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
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

