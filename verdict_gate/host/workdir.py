"""The gate's work directories: made private and marked, removed on every path out, and swept
when a killed gate left them; where the pack is extracted; the shared bytecode cache.

A gate removes its work directories on every path out it can run (an exception, SIGTERM, Ctrl-C);
a ``kill -9`` (a runner's hard cancel) leaves them: the candidate's and the base's trees under
``$TMPDIR`` (or ``/tmp``), and the extracted pack under ``/dev/shm``, which holds RAM until the
machine restarts. So each work directory carries an owner mark (:data:`MARK`: the process id, its
start time and its PID namespace), and a gate about to make its own removes the ``verdict-gate-*``
directories of the same parent whose owner is gone (docs/design.md §11, "Work directories").

What is never removed: a directory without a mark (being made right now, kept by
``VERDICT_GATE_KEEP_WORK``, or from an older version), one whose owner still runs, one marked in
another PID namespace (a process id there means nothing here), one another user owns, and anything
that is not a plain directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

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


def sweep_parent(parent: Path) -> list[Path]:
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
    """:func:`sweep_parent` each parent not swept yet by this process."""
    removed: list[Path] = []
    for parent in parents:
        key = os.path.realpath(parent)
        if key not in _swept:
            _swept.add(key)
            removed += sweep_parent(parent)
    return removed


def make_read_only(root: Path) -> None:
    """Files 0444 and directories 0555 under ``root``: the copy the gate scores is never written."""
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)


def make_writable(root: Path) -> None:
    """Undo :func:`make_read_only` so the temp copy can be deleted."""
    for dirpath, _dirs, _files in os.walk(root):
        os.chmod(dirpath, 0o755)


def remove(path: Path) -> None:
    """Remove a work directory, read-only pack copies included; never raises."""
    make_writable(path)
    shutil.rmtree(path, ignore_errors=True)


def shared_bytecode_cache() -> Path:
    """``$VERDICT_GATE_CACHE`` or ``$XDG_CACHE_HOME/verdict-gate`` (default ``~/.cache``) plus ``pycache``
    (read from the environment; nothing is created)."""
    root = Path(os.environ.get("VERDICT_GATE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "verdict-gate"))
    return root / "pycache"


@contextmanager
def scratch_dir(parent: Path | None = None) -> Iterator[Path]:
    """A private temp dir, removed (read-only pack copies included) on every path out; marked with its
    owner, and made after the work dirs of killed gates in the same parent are removed (:func:`sweep`)."""
    sweep([parent if parent is not None else Path(tempfile.gettempdir())])
    path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
    try:
        mark(path)
        _block_bytecode(path)
        yield path
    finally:
        if os.environ.get("VERDICT_GATE_KEEP_WORK"):  # debugging aid: keep specs, results and pytest logs
            unmark(path)  # kept on purpose: no later gate may take it for a killed one's
            print(f"verdict-gate: kept work directory {path}", file=sys.stderr)
        else:
            remove(path)
        _drop_bytecode(path)


def _mirror(work_dir: Path) -> Path:
    """Where the shared bytecode cache would hold the bytecode of what lies under ``work_dir`` (a
    ``PYTHONPYCACHEPREFIX`` mirrors absolute source paths)."""
    return shared_bytecode_cache() / os.path.abspath(work_dir).lstrip(os.sep)


def _block_bytecode(work_dir: Path) -> None:
    """Put an empty file where the shared cache would mirror ``work_dir``, so no bytecode of anything under it
    (the pack, its conftest.py, the worktrees: a fresh path in every run, never read again) is written
    there: Python's loader and pytest's assertion rewriter both skip writing when a directory of the path
    is a file. The oracle process then keeps writing bytecode for what a test imports late from the
    interpreter and site-packages (``unittest.mock`` brings 35 ``asyncio`` modules), which it compiled on
    every run before. Best effort: without the file that bytecode is written and dropped with the
    mirror (:func:`_drop_bytecode`)."""
    mirror = _mirror(work_dir)
    with contextlib.suppress(OSError):
        mirror.parent.mkdir(parents=True, exist_ok=True)
        mirror.touch(exist_ok=False)


def _drop_bytecode(work_dir: Path) -> None:
    """The shared bytecode cache mirrors source paths: what was compiled under the work dir (a pack's
    conftest.py where :func:`_block_bytecode` could not block it), or the blocking file, sits at the work
    dir's mirror there, and no later run has that path."""
    mirror = _mirror(work_dir)
    if mirror.is_file():
        with contextlib.suppress(OSError):
            mirror.unlink()
    else:
        shutil.rmtree(mirror, ignore_errors=True)


def sweep(parents: list[Path]) -> None:
    """Remove the work dirs killed gates left in ``parents`` (:func:`sweep_once`), and their
    bytecode, saying which."""
    gone = sweep_once(parents)
    for path in gone:
        _drop_bytecode(path)
    if gone:
        print(f"verdict-gate: removed {len(gone)} work director{'y' if len(gone) == 1 else 'ies'} of gates that "
              f"were killed: {', '.join(str(g) for g in gone[:5])}{' …' if len(gone) > 5 else ''}", file=sys.stderr)


RAM_DIR = Path("/dev/shm")
PACK_RAM_ENV = "VERDICT_GATE_PACK_IN_RAM"  # "1": extract the pack under /dev/shm (a speed-up you opt into)


def ram_parent(room: int) -> Path | None:
    """Where the pack is extracted, when not inside the run's scratch directory: a RAM file system
    (``/dev/shm``) when ``$VERDICT_GATE_PACK_IN_RAM`` is ``1``, ``$TMPDIR`` is unset and it has ``room``
    bytes free (the caller's: twice the largest pack, :data:`verdict_gate.pack.extract.MAX_BYTES`, the archive
    and its files); else ``None`` (the default).

    Why not by default: a test suite that lists its own directories (jmespath's compliance cases, read with
    ``os.walk``) sees the pack's files in the order its file system returns them, and parametrizes by that
    order. On disk, beside the worktrees, that is the order plain pytest sees on the same disk (ext4 returns
    entries by a hash of their names); a tmpfs returns them newest first, so the same suite would get other
    parameter ids under the gate (docs/design.md §8.1, "Transparent by default"). The RAM file system saves
    the cost of creating the pack's files on a slow disk (0.6 ms a file against 9 µs: 1.2 s for a pack of
    2,000 files; benchmarks/README.md). The sandbox covers ``/dev/shm`` with its own tmpfs, so the worker
    sees only the pack's fixtures, bound read-only at their path; on disk the pack stays inside the
    scratch directory, which the sandbox hides.
    """
    if os.environ.get("TMPDIR") or os.environ.get(PACK_RAM_ENV, "").strip() != "1":
        return None
    try:
        st = os.statvfs(RAM_DIR)
    except OSError:
        return None
    free = st.f_bavail * st.f_frsize
    return RAM_DIR if free >= room and os.access(RAM_DIR, os.W_OK | os.X_OK) else None


CANARY_TEXT = "verdict-gate fence canary: a candidate worker that can read this file is not fenced off $HOME\n"


@contextmanager
def home_canary() -> Iterator[Path | None]:
    """A canary file in ``$HOME`` for the candidate worker's fence probe to try to read (docs/design.md
    §8.2), there while the context lasts and removed after it, so nothing is left in a home the job
    shares (``/github/home``); ``None`` where ``$HOME`` cannot hold one. In ``$HOME`` itself, whatever
    ``$XDG_CACHE_HOME`` or ``$VERDICT_GATE_CACHE`` say: it stands for every file there (tokens, keys),
    which the worker's Landlock rules and mounts never name."""
    try:
        fd, name = tempfile.mkstemp(prefix=".verdict-gate-canary-", dir=os.path.expanduser("~"))
    except OSError:
        yield None
        return
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(CANARY_TEXT)
        yield Path(name)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def open_to_worker(paths: Iterable[Path]) -> None:
    """Let a worker of another uid reach ``paths`` inside the gate's own work dirs: every directory from
    the outermost ``verdict-gate-*`` work dir down to each path gets the others' search bit (``o+x``:
    traverse, never list or read) where it lacks it. Nothing outside those work dirs is changed, and no
    file's mode: the worker's Landlock domain, not file modes, keeps it from everything else there, and
    a fixture's stamps (the post-run check's) stay as they were. Never raises."""
    me = os.geteuid()
    for path in paths:
        parts = Path(os.path.abspath(path)).parts
        starts = [i for i, part in enumerate(parts) if part.startswith(PREFIX)]
        if not starts:
            continue
        for i in range(starts[0], len(parts)):
            directory = Path(*parts[: i + 1])
            with contextlib.suppress(OSError):
                st = directory.lstat()
                if stat.S_ISDIR(st.st_mode) and st.st_uid == me and not st.st_mode & stat.S_IXOTH:
                    os.chmod(directory, stat.S_IMODE(st.st_mode) | stat.S_IXOTH)
