"""How a worker's process is set up before it runs: its whole environment, and what runs in the child
between ``fork`` and ``exec`` (its rlimits, its own uid, a death signal) (docs/design.md §8.2)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Mapping

from .libc import libc

PR_SET_PDEATHSIG = 1

# A bytecode prefix under which nothing can exist or be created (a path below a character device).
NO_BYTECODE = "/dev/null/verdict-gate-no-bytecode"


def worker_env(tmp: str = "/tmp", bytecode: str | None = None, tmpdir: str = "") -> dict[str, str]:
    """The worker's environment: nothing inherited (no token, no ``PYTHON*`` of the caller).

    The worker never writes bytecode, and reads it only under ``PYTHONPYCACHEPREFIX``, never from a
    ``__pycache__`` beside a module (a patch could commit one that does not match its source):
    ``bytecode``, the oracle process's cache as a fenced worker is shown it (:func:`.paths.bytecode_dirs`,
    read-only), or :data:`NO_BYTECODE` for a worker that could write where a later one reads. ``tmpdir``:
    its ``TMPDIR`` when it shares the oracle process's (``""``: ``tmp``).
    """
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": tmp, "TMPDIR": tmpdir or tmp, "LC_ALL": "C.UTF-8",
            "TZ": "UTC", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1",
            "PYTHONPYCACHEPREFIX": bytecode or NO_BYTECODE}


def preexec(limits: Mapping[str, int], uid: int | None) -> Callable[[], None]:
    """What the child runs before ``exec``: the rlimits of ``limits`` (:data:`.policy.DEFAULT_LIMITS`' keys),
    then ``uid`` as its uid and gid (no supplementary groups), then death with its parent."""
    import resource

    try:
        lib = libc()  # loaded here: the child between fork and exec should do as little as it can
    except OSError:
        lib = None

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
        if lib is not None:  # after setuid, which clears the death signal
            lib.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return apply
