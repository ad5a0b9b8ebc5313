"""Forked copies of this process for the fixture digest (docs/design.md §4): :func:`fork_map`.

Many small files cost the interpreter's per-file work (open, fstat, read, close, bookkeeping), which
threads cannot spread over cores (one GIL). :func:`fork_map` runs contiguous runs of the sorted entries
in forked copies of this process (one per usable core, this process included), each appending its runs'
compact results (sha256 hex, stamps, tree records) to a memory file this process reads; no per-file
IPC. The core (pure, docs/design.md §10) starts no process itself: ``verdict-gate digest`` and the
pipeline's candidate digest hand it this. Standard library only, and light to import.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
from collections.abc import Callable, Iterator
from typing import Any

_TOKEN = 4  # bytes per task index on the token pipe
_HEAD = _TOKEN + 8  # a result frame: task index, payload length, marshalled payload
# The tokens are written before any fork, so they must fit the pipe's buffer at once: one page at
# least (a pipe shrinks to one page when the user's pipe quota is spent), and a write of at most
# PIPE_BUF bytes is whole. More tasks than this run serially.
_MAX_TASKS = 1024



def usable_cores() -> int:
    """Cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def fork_map(tasks: int, work: Callable[[int], Any], workers: int | None = None) -> Iterator[Any]:
    """Yield ``work(k)`` for ``k`` in ``range(tasks)``, in order, computed by this process and
    ``workers - 1`` forked copies of it.

    A :data:`verdict_gate.host.hashing.Parallel`. The task indices wait in a pipe; every process
    (this one too) takes the next index as soon as it is free, so a core busy with other work
    takes fewer tasks. A child inherits ``work`` and its data by the fork, appends each result,
    marshalled, to its own memory file as it goes (it never waits for this process) and leaves
    with ``os._exit``. Between two of its own tasks this process reads what the children appended
    and yields every result that is next in order, so the caller's bookkeeping overlaps the
    hashing. A task a child could not deliver (it raised, or died) is computed here, in order, so
    an exception is raised by this process as a serial run would raise it. Closing the iterator
    early kills the children. For a single-threaded caller (a fork copies only the calling
    thread); serial where ``os.fork`` or ``os.memfd_create`` is missing.

    Args:
        tasks: how many tasks (more than 1024 run serially).
        work: task index → a marshal-able result.
        workers: processes in all (default: :func:`usable_cores`).
    """
    workers = min(workers or usable_cores(), tasks)
    if workers <= 1 or tasks > _MAX_TASKS or not hasattr(os, "fork") or not hasattr(os, "memfd_create"):
        yield from (work(k) for k in range(tasks))
        return
    queue, feed = os.pipe()
    try:
        os.write(feed, b"".join(k.to_bytes(_TOKEN, "little") for k in range(tasks)))
    finally:
        os.close(feed)  # an empty queue then reads as end of file
    results: dict[int, Any] = {}
    children: dict[int, _Frames] = {}  # pid → what it appended
    following = 0  # the next index to yield
    try:
        for _ in range(workers - 1):
            try:
                out = os.memfd_create("verdict-gate-digest", os.MFD_CLOEXEC)
            except OSError:
                break  # no more descriptors or memory: fewer processes
            try:
                pid = os.fork()
            except OSError:
                os.close(out)
                break
            if pid == 0:  # the child: never returns into the caller's code
                _child(queue, out, work)
            children[pid] = _Frames(out)
        while token := os.read(queue, _TOKEN):  # all tokens were written before: a read takes exactly one
            k = int.from_bytes(token, "little")
            with contextlib.suppress(Exception):  # if it raises, it is computed again below, in order
                results[k] = work(k)
            for frames in children.values():
                results.update(frames.read())
            while following in results:
                yield results.pop(following)
                following += 1
        for pid in list(children):
            os.waitpid(pid, 0)
            frames = children.pop(pid)
            try:
                results.update(frames.read())  # whole frames only: a child that died left the rest
            finally:
                os.close(frames.fd)
    finally:
        os.close(queue)
        for pid, frames in children.items():  # only when interrupted or closed early
            os.close(frames.fd)
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
    # Tasks no child delivered, and any whose work raised here: computed now, in order, so the
    # exception (if any) is the one of the first bad task.
    for k in range(following, tasks):
        yield results.pop(k) if k in results else work(k)


def _child(queue: int, out: int, work: Callable[[int], Any]) -> None:
    code = 1
    try:
        while token := os.read(queue, _TOKEN):
            k = int.from_bytes(token, "little")
            try:
                result = work(k)
            except BaseException:  # the parent computes it again
                break
            payload = marshal.dumps(result)
            frame = memoryview(b"".join((token, len(payload).to_bytes(8, "little"), payload)))
            while frame:
                frame = frame[os.write(out, frame):]
        code = 0
    except BaseException:  # whatever it is, the parent computes the missing tasks
        pass
    finally:
        os._exit(code)


class _Frames:
    """The results a child appends to its memory file: (index, length, marshalled result) frames."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.at = 0  # bytes of the file read so far
        self.partial = b""  # the start of a frame not yet whole
        self.broken = False

    def read(self) -> dict[int, Any]:
        """Every whole frame appended since the last call (the file only grows). A frame that does
        not load (never written so) ends the reading: the tasks after it are computed again."""
        found: dict[int, Any] = {}
        size = os.fstat(self.fd).st_size
        if self.broken or size <= self.at:
            return found
        parts = [self.partial]
        while self.at < size and (block := os.pread(self.fd, size - self.at, self.at)):
            parts.append(block)
            self.at += len(block)
        data = memoryview(b"".join(parts))
        at = 0
        while at + _HEAD <= len(data):
            n = int.from_bytes(data[at + _TOKEN:at + _HEAD], "little")
            if at + _HEAD + n > len(data):
                break  # its end is not written yet
            try:
                found[int.from_bytes(data[at:at + _TOKEN], "little")] = marshal.loads(data[at + _HEAD:at + _HEAD + n])
            except (EOFError, ValueError, TypeError):
                self.broken = True
                break
            at += _HEAD + n
        self.partial = bytes(data[at:])
        return found
