"""Work directories of gates that were killed (SIGKILL, a runner's hard cancel) and could not clean up.

A gate removes its work directories on every path out it can run (an exception, SIGTERM, Ctrl-C);
a ``kill -9`` leaves them: the candidate's and the base's trees under ``$TMPDIR`` (or ``/tmp``),
and the extracted pack under ``/dev/shm``, which holds RAM until the machine restarts. So each work
directory carries an owner mark (:data:`MARK`: the process id, its start time and its PID
namespace), and a gate about to make its own removes the ``verdict-gate-*`` directories of the
same parent whose owner is gone (docs/design.md §11, "Work directories").

What is never removed: a directory without a mark (being made right now, kept by
``VERDICT_GATE_KEEP_WORK``, or from an older version), one whose owner still runs, one marked in
another PID namespace (a process id there means nothing here), one another user owns, and anything
that is not a plain directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from verdict_gate.pack.extract import make_writable

MARK = ".verdict-gate-owner"
PREFIX = "verdict-gate-"
_swept: set[str] = set()


def _start_time(pid: int) -> str | None:
    """Field 22 of ``/proc/PID/stat`` (the start time in clock ticks since boot), or ``None`` when
    no such process runs. Source: proc(5)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # the name (field 2) may hold spaces and ')'
    return fields[19] if len(fields) > 19 else None


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "?"


def owner_text() -> str:
    """The mark of this process: ``"PID START NAMESPACE\\n"``."""
    pid = os.getpid()
    return f"{pid} {_start_time(pid) or '?'} {_pid_namespace()}\n"


def parse_mark(text: str) -> tuple[int, str, str] | None:
    """``(pid, start time, PID namespace)`` from a mark, or ``None`` for anything else. Pure."""
    parts = text.split()
    if len(parts) != 3 or not parts[0].isdigit() or parts[1] == "?" or parts[2] == "?":
        return None
    return int(parts[0]), parts[1], parts[2]


def is_stale(mark: tuple[int, str, str], namespace: str, start_time: str | None) -> bool:
    """Whether a marked owner is gone: same PID namespace as ``namespace``, and the process with its id
    is not running (``start_time`` ``None``) or is another one that took the id since (another start
    time). Pure."""
    _pid, started, ns = mark
    return ns == namespace and start_time != started


def mark(directory: Path) -> None:
    """Write this process's owner mark into ``directory`` (a work directory it just made)."""
    (directory / MARK).write_text(owner_text(), encoding="ascii")


def unmark(directory: Path) -> None:
    """Drop the owner mark: ``directory`` is kept on purpose and must outlive this process."""
    with contextlib.suppress(OSError):
        (directory / MARK).unlink()


def sweep(parent: Path) -> list[Path]:
    """Remove the stale work directories (see the module docstring) directly in ``parent``; return them.

    Never raises: a directory that cannot be read or removed is left as it is."""
    namespace = _pid_namespace()
    removed: list[Path] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                continue
            with open(os.path.join(entry.path, MARK), "rb") as fh:
                owner = parse_mark(fh.read(200).decode("ascii", "replace"))
        except OSError:
            continue
        if owner is None or not is_stale(owner, namespace, _start_time(owner[0])):
            continue
        remove(Path(entry.path))
        if not os.path.lexists(entry.path):
            removed.append(Path(entry.path))
    return removed


def sweep_once(parents: Iterable[Path]) -> list[Path]:
    """:func:`sweep` each parent not swept yet by this process."""
    removed: list[Path] = []
    for parent in parents:
        key = os.path.realpath(parent)
        if key not in _swept:
            _swept.add(key)
            removed += sweep(parent)
    return removed


def remove(path: Path) -> None:
    """Remove a work directory, read-only pack copies included; never raises."""
    make_writable(path)
    shutil.rmtree(path, ignore_errors=True)
