"""The gate's own process: its signals, and its secrets kept from the processes it starts."""

from __future__ import annotations

import ctypes
import os
import signal
import threading
from collections.abc import Mapping

PR_SET_DUMPABLE = 4  # prctl(2)
# A variable whose name holds one of these is a secret: the job token (GITHUB_TOKEN, the action input
# INPUT_GITHUB-TOKEN), ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_TOKEN, a registry password …
SECRET_MARKERS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "API_KEY", "ACCESS_KEY")


def interrupt_on_sigterm() -> None:
    """SIGTERM (a cancelled CI job) unwinds like Ctrl-C: worktrees, temp dirs and the property
    process group are cleaned up by the same ``finally`` blocks. Main thread only (elsewhere a no-op).
    Set by the CLI and the action, not by the pipeline, which a library caller may run in a thread."""

    def _raise(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise)


def is_secret(name: str) -> bool:
    """Whether the environment variable ``name`` holds a secret (:data:`SECRET_MARKERS`, any case)."""
    upper = name.upper()
    return any(marker in upper for marker in SECRET_MARKERS)


def keep_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Keep this process's secrets from the processes it starts (docs/design.md §8.1). Linux only; a no-op
    elsewhere. Returns the names of the variables blanked.

    The oracle process is the gate's child, with the gate's user: Linux lets it read the gate's
    ``/proc/<pid>/environ`` (every variable the runner passed in, the job token among them) and
    ``/proc/<pid>/mem``. Candidate text a property ran as code there would reach the token. So:

    - the process is made not dumpable (``prctl(PR_SET_DUMPABLE, 0)``): its ``/proc`` entries then need
      ``CAP_SYS_PTRACE`` to read, which a process of an ordinary user, or root in a Docker container with
      the default capabilities (the Docker container action), does not have;
    - the value of each secret variable (:func:`is_secret`) is overwritten in the environment block the
      kernel shows as ``/proc/<pid>/environ``, for readers that do have ``CAP_SYS_PTRACE``; the variable
      itself is set again (``putenv``) from ``environ`` (default ``os.environ``), so this process and the
      children it starts still have it.

    What it cannot keep: this process's memory from a reader with ``CAP_SYS_PTRACE`` (root on a host), and
    other processes of the same user (the shell of a workflow step that sets the token)."""
    environ = os.environ if environ is None else environ
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        # Fields 50 and 51 of proc(5) (env_start, env_end); the split starts at field 3 (state).
        start, end = int(fields[50 - 3]), int(fields[51 - 3])
    except (OSError, AttributeError, ValueError, IndexError):
        return []
    if start <= 0 or end <= start:  # a kernel (or a sandbox's) /proc that does not say where: read nothing
        return []
    block = ctypes.string_at(start, end - start)
    blanked = []
    at = 0
    for entry in block.split(b"\0"):
        name, eq, value = entry.partition(b"=")
        key = os.fsdecode(name)
        if eq and value and is_secret(key):
            ctypes.memset(start + at + len(name) + 1, ord("*"), len(value))
            blanked.append(key)
            if key in environ:
                os.putenv(key, environ[key])
        at += len(entry) + 1
    return blanked
